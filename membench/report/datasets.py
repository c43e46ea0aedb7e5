"""The report's dataset section: what was read, how much of it, which questions have no gold to score against,
and every repair or drop made."""

from __future__ import annotations

import json
from pathlib import Path

from membench.datasets.gold import LEFT_OUT, PARTIAL
from membench.report.markdown import table


def dataset_section(name: str, normalization_path: Path) -> str:
    info = json.loads(Path(normalization_path).read_text(encoding="utf-8"))
    flat = {k: v for k, v in info["counts"].items() if not _is_table(v)}
    counts = [(k, _breakdown(v) if isinstance(v, dict) else v) for k, v in flat.items()]
    parts = [f"#### Data: {name} ({info['kind']})", "", table(["count", "value"], counts), ""]
    parts += gold_section(info.get("gold"))
    parts += change_section(info["counts"].get("change"))
    parts += ["Source files (sha256):", ""]
    parts += [f"- `{Path(p).name}` `{digest}`" for p, digest in info["sources"].items()]
    parts.append("")
    norms = info["normalizations"]
    if norms:
        rows = [(n["code"], n["action"], n["count"], n["description"], "; ".join(map(str, n["examples"])))
                for n in norms]
        parts += ["Normalisations (every repair, drop or flag made while parsing):", "",
                  table(["code", "action", "count", "what", "examples"], rows, numeric=(2,))]
    else:
        parts.append("Normalisations: none were needed.")
    return "\n".join(parts) + "\n"


def _breakdown(counts: dict) -> str:
    """A count broken down, as `name: n, ...` (a nested breakdown in parentheses)."""
    return ", ".join(f"{k}: ({_breakdown(v)})" if isinstance(v, dict) else f"{k}: {v:,}" if isinstance(v, int)
                     else f"{k}: {v}" for k, v in counts.items())


def _is_table(value) -> bool:
    """A count broken down two ways (e.g. BEAM's coverage of the measures of change: ability -> case -> n)."""
    return isinstance(value, dict) and bool(value) and all(isinstance(v, dict) for v in value.values())


def change_section(change: dict | None) -> list[str]:
    """Per ability with a measure of change (BEAM): its questions, how many its measures score, and why the others
    are not (membench.benchmarks.beam.change.coverage)."""
    if not change:
        return []
    reasons = list(dict.fromkeys(r for row in change.values() for r in row if r not in ("questions", "scored")))
    rows = [(ability, row["questions"], row["scored"], *(row.get(r, 0) for r in reasons))
            for ability, row in change.items()]
    return ["Measures of change: the questions each ability's measures score, and why the others are scored on "
            "recall only (membench/benchmarks/beam/change.py):", "",
            table(["ability", "questions", "scored", *reasons], rows), ""]


def gold_section(gold: dict | None) -> list[str]:
    """Questions per reason their gold is empty (left out of retrieval scoring) or partly dangling (scored on
    what resolves), every reason the benchmark can give listed, zeros included."""
    if not gold or not (gold["left_out"] or gold["partial"]):
        return []
    rows = [(reason, n, "left out", LEFT_OUT.get(reason, "")) for reason, n in gold["left_out"].items()]
    rows += [(reason, n, "scored on what resolves", PARTIAL.get(reason, "")) for reason, n in gold["partial"].items()]
    left = sum(gold["left_out"].values())
    return [f"Gold coverage: no question is scored against an empty gold set, so {left:,} question"
            f"{'' if left == 1 else 's'} {'is' if left == 1 else 'are'} left out of every retrieval mean "
            "(the `skip` column of `per_question.csv` names the reason):", "",
            table(["reason", "questions", "retrieval scoring", "what"], rows), ""]
