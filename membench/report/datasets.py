"""The report's dataset section: what was read, how much of it, which questions have no gold to score against,
and every repair or drop made."""

from __future__ import annotations

import json
from pathlib import Path

from membench.datasets.gold import LEFT_OUT, PARTIAL
from membench.report.markdown import table


def dataset_section(name: str, normalization_path: Path) -> str:
    info = json.loads(Path(normalization_path).read_text(encoding="utf-8"))
    counts = [(k, v if not isinstance(v, dict) else ", ".join(f"{a}: {b:,}" for a, b in v.items()))
              for k, v in info["counts"].items()]
    parts = [f"#### Data: {name} ({info['kind']})", "", table(["count", "value"], counts), ""]
    parts += gold_section(info.get("gold"))
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
