"""How a mean with its CI is written (which metrics a benchmark's tables lead with is its record's `headlines`)."""

from __future__ import annotations

import math


def ci_text(lo: float, hi: float, unit: str = "question", fmt: str = ".3f") -> str:
    """`[lo, hi]`, or why there is none: a mean that has no CI rests on one resampling unit (a bootstrap needs two
    to show any spread; stats.bootstrap_matrix), so the cell says `[n/a: 1 conversation]`, never `[nan, nan]`."""
    if math.isnan(lo):
        return f"[n/a: 1 {unit}]"
    return f"[{lo:{fmt}}, {hi:{fmt}}]"


def p_text(p: float | None) -> str:
    """A p-value as every table of the report prints it: 4 decimals, "<0.0001" below that (a permutation or
    bootstrap p is never exactly 0), "n/a" without one."""
    if p is None or math.isnan(p):
        return "n/a"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def diff_text(mean_diff: float, lo: float | None, hi: float | None, unit: str, p_holm: float | None) -> str:
    """A paired difference as the report and the explorer both print it: `+0.120 [+0.050, +0.190], p(Holm) 0.0012`
    (a bound of None, as summary.json writes NaN, is no CI)."""
    nan = float("nan")
    lo, hi = (nan if v is None else v for v in (lo, hi))
    return f"{mean_diff:+.3f} {ci_text(lo, hi, unit, '+.3f')}, p(Holm) {p_text(p_holm)}"


def json_cell(row) -> dict:
    """A summary row's mean, CI and n as summary.json writes them (6 decimals; a missing value as null)."""
    return {"mean": _json_number(row.mean), "ci_lo": _json_number(row.ci_lo), "ci_hi": _json_number(row.ci_hi),
            "n": int(row.n)}


def _json_number(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 6)


def with_ci(mean: float, lo: float, hi: float, unit: str = "question") -> str:
    if math.isnan(mean):
        return "n/a"
    return f"{mean:.4f} {ci_text(lo, hi, unit)}"
