"""`membench compare A B`: do two runs give the same figures, and if not, what differs between them?

A and B are results folders (with summary.json, and summary.parquet for every figure) or summary.json files, from two
machines or two versions. Every figure (dataset, adapter, split, group, metric: mean, CI, n) that differs by more than
the tolerance is listed with its change and whether each run's mean lies inside the other's CI; then what differs in
data (source checksums), code (membench version, commit), config and environment (summary.json's `provenance` and
`environment`), and, for two folders, which run and score files are not byte-identical. The exit status says
whether the figures agree (0) or not (1): a reviewer checks a paper's artifact in one line.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from membench.errors import InputError

KEY = ("dataset", "adapter", "split", "group_by", "group", "metric")
VALUES = ("mean", "ci_lo", "ci_hi", "n")
RUN_FILES = ("*/runs/*.parquet", "*/runs/*.trec", "*/runs/*.jsonl", "*/scores/*.parquet")


@dataclass
class Side:
    """One run: its summary.json, its figures (key -> values) and, for a folder, the folder."""

    path: Path
    summary: dict
    figures: dict[tuple, dict[str, float]]
    folder: Path | None = None


def _json_figures(summary: dict, path: Path) -> dict[tuple, dict[str, float]]:
    figures = {}
    try:
        for dataset, entry in summary["datasets"].items():
            for adapter, splits in entry["adapters"].items():
                for split, metrics in splits.items():
                    for metric, cell in metrics.items():
                        figures[(dataset, adapter, split, "all", "all", metric)] = {v: cell[v] for v in VALUES}
    except (KeyError, TypeError, AttributeError) as err:
        raise InputError(path, f"not a membench summary.json: no figure at {err}", field="datasets") from err
    return figures


def _parquet_figures(path: Path) -> dict[tuple, dict[str, float]]:
    table = pd.read_parquet(path)
    missing = [c for c in KEY + VALUES if c not in table.columns]
    if missing:
        raise InputError(path, f"not a membench summary.parquet: no column {', '.join(missing)}")
    return {tuple(r[:len(KEY)]): dict(zip(VALUES, r[len(KEY):]))
            for r in table[list(KEY + VALUES)].itertuples(index=False, name=None)}


def load_side(path: Path | str, every_figure: bool = True) -> Side:
    """A results folder (or a run folder holding `results/`) or a summary.json file. `every_figure`: read a folder's
    figures from summary.parquet (every split, group and metric) rather than summary.json's headline ones."""
    path = Path(path)
    folder = None
    if path.is_dir():
        folder = path / "results" if not (path / "summary.json").exists() and (path / "results").is_dir() else path
        path = folder / "summary.json"
    if not path.is_file():
        raise InputError(path, "no such file: give a results folder or a summary.json")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(path, f"not JSON: {err}") from err
    if not isinstance(summary, dict):
        raise InputError(path, "not a membench summary.json: the top level is not an object")
    parquet = folder / "summary.parquet" if folder else None
    if every_figure and parquet is not None and parquet.is_file():
        figures = _parquet_figures(parquet)
    else:
        figures = _json_figures(summary, path)
    return Side(path, summary, figures, folder)


def _same(a: float, b: float, tolerance: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tolerance


def _inside(mean: float | None, lo: float | None, hi: float | None) -> bool:
    return None not in (mean, lo, hi) and not any(map(math.isnan, (mean, lo, hi))) and lo <= mean <= hi


@dataclass
class FigureDiff:
    key: tuple
    a: dict[str, float] | None
    b: dict[str, float] | None

    def describe(self) -> str:
        name = " | ".join(str(k) for k in self.key[:3]) + ("" if self.key[3] == "all" else
                                                              f" | {self.key[3]}={self.key[4]}") + f" | {self.key[5]}"
        if self.a is None or self.b is None:
            return f"{name}: only in {'B' if self.a is None else 'A'}"
        a, b = self.a, self.b
        change = "" if None in (a["mean"], b["mean"]) else f" ({b['mean'] - a['mean']:+.6f})"
        where = ("inside both CIs" if _inside(b["mean"], a["ci_lo"], a["ci_hi"]) and
                 _inside(a["mean"], b["ci_lo"], b["ci_hi"]) else "outside a CI")
        n = "" if a["n"] == b["n"] else f", n {a['n']} -> {b['n']}"
        return (f"{name}: mean {_fmt(a['mean'])} -> {_fmt(b['mean'])}{change}, CI [{_fmt(a['ci_lo'])}, "
                f"{_fmt(a['ci_hi'])}] -> [{_fmt(b['ci_lo'])}, {_fmt(b['ci_hi'])}]{n}; {where}")


def _fmt(x: float | None) -> str:
    return "none" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.6f}"


def figure_diffs(a: Side, b: Side, tolerance: float = 0.0) -> list[FigureDiff]:
    """Figures that differ beyond `tolerance` (absolute, on mean and CI bounds; n must be equal) or exist on one
    side only, in A's order, then B's."""
    out = []
    for key in list(a.figures) + [k for k in b.figures if k not in a.figures]:
        x, y = a.figures.get(key), b.figures.get(key)
        if x is None or y is None or x["n"] != y["n"] or not all(
                _same(x[v], y[v], tolerance) for v in ("mean", "ci_lo", "ci_hi")):
            out.append(FigureDiff(key, x, y))
    return out


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, JSON text) for every leaf of nested dicts; lists are leaves."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from flatten(v, f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, json.dumps(value, sort_keys=True)


def record_diffs(a: Any, b: Any, prefix: str) -> list[str]:
    """`key: A vs B` for every leaf where two records (provenance or environment parts) differ."""
    x, y = dict(flatten(a, prefix)), dict(flatten(b, prefix))
    return [f"{k}: {x.get(k, 'absent')} vs {y.get(k, 'absent')}" for k in list(x) + [k for k in y if k not in x]
            if x.get(k) != y.get(k)]


@dataclass
class RunFiles:
    same: int = 0
    differ: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def ranking_change(a: Path, b: Path) -> str:
    """For two run files that are not byte-identical: whether the rankings agree and how far scores moved."""
    x, y = pd.read_parquet(a), pd.read_parquet(b)
    if len(x) != len(y):
        return f"rows {len(x)} vs {len(y)}"
    keys = ["question_id", "granularity", "rank", "item_id"]
    same_order = x[keys].reset_index(drop=True).equals(y[keys].reset_index(drop=True))
    moved = (x.score - y.score).abs().max()
    return f"ranking {'identical' if same_order else 'DIFFERENT'}, max |score change| {moved:.2e}"


def run_files(a: Path, b: Path) -> RunFiles:
    """Byte-compare the run and score files of two results folders (A's files, looked up in B)."""
    found = RunFiles()
    for pattern in RUN_FILES:
        for old in sorted(a.glob(pattern)):
            rel = old.relative_to(a)
            new = b / rel
            if not new.exists():
                found.missing.append(str(rel))
            elif old.read_bytes() == new.read_bytes():
                found.same += 1
            else:
                run = old.suffix == ".parquet" and old.parent.name == "runs"
                found.differ.append(f"{rel}" + (f"  {ranking_change(old, new)}" if run else ""))
    return found


def compare(a_path: Path | str, b_path: Path | str, tolerance: float = 0.0) -> tuple[int, str]:
    """(exit status, report text): 0 when every figure agrees within `tolerance`, else 1."""
    a, b = load_side(a_path), load_side(b_path)
    if (a.folder is None) != (b.folder is None):  # a folder against a file: summary.json's figures on both sides
        a, b = load_side(a.path, every_figure=False), load_side(b.path, every_figure=False)
    diffs = figure_diffs(a, b, tolerance)
    keys = set(a.figures) | set(b.figures)
    lines = [f"A: {a.path}", f"B: {b.path}",
             f"figures: {len(diffs)} of {len(keys)} differ" + (f" beyond {tolerance:g}" if tolerance else "")]
    lines += [f"  {d.describe()}" for d in diffs]
    pa, pb = a.summary.get("provenance") or {}, b.summary.get("provenance") or {}
    for title, x, y in (("data", pa.get("data"), pb.get("data")), ("code", pa.get("code"), pb.get("code")),
                        ("config", pa.get("config"), pb.get("config")),
                        ("environment", a.summary.get("environment"), b.summary.get("environment"))):
        if x is None or y is None:
            missing = " and ".join(s for s, v in (("A", x), ("B", y)) if v is None)
            lines.append(f"{title}: not recorded in {missing}")
            continue
        found = record_diffs(x, y, title)
        lines.append(f"{title}: " + (f"{len(found)} differ" if found else "the same"))
        lines += [f"  {d}" for d in found]
    if a.folder is not None and b.folder is not None:
        files = run_files(a.folder, b.folder)
        lines.append(f"run and score files: {files.same} byte-identical, {len(files.differ)} differ, "
                     f"{len(files.missing)} missing in B")
        lines += [f"  differs  {d}" for d in files.differ] + [f"  missing  {m}" for m in files.missing]
    return (1 if diffs else 0), "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="membench compare", description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="a results folder or summary.json")
    parser.add_argument("b", type=Path, help="another results folder or summary.json")
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="largest absolute change of a mean or CI bound that counts as equal (default 0: exact)")
    args = parser.parse_args(argv)
    try:
        status, text = compare(args.a, args.b, args.tolerance)
    except InputError as err:
        print(f"membench compare: {err}", file=sys.stderr)
        return 2
    print(text, end="")
    return status
