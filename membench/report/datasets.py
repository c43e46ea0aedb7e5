"""The report's dataset section: what was read, how much of it, and every repair or drop made."""

from __future__ import annotations

import json
from pathlib import Path

from membench.report.markdown import table


def dataset_section(name: str, normalization_path: Path) -> str:
    info = json.loads(Path(normalization_path).read_text(encoding="utf-8"))
    counts = [(k, v if not isinstance(v, dict) else ", ".join(f"{a}: {b:,}" for a, b in v.items()))
              for k, v in info["counts"].items()]
    parts = [f"#### Data: {name} ({info['kind']})", "", table(["count", "value"], counts), "",
             "Source files (sha256):", ""]
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
