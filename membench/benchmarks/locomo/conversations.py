"""A LoCoMo file cut to some of its conversations, as published otherwise: for a run on part of LoCoMo (e.g. the
model-written memories on conv-26 + conv-30, where every turn costs model calls) that the parse stage reads like
the whole file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

from membench.errors import InputError

FILE = "locomo10.json"


def keep_conversations(source: Path, dest: Path, samples: Sequence[str]) -> Path:
    """Write `dest/locomo10.json` holding only `samples` (by sample_id, in that order) of `source`'s file."""
    path = Path(source) / FILE
    by_id = {conv.get("sample_id"): conv for conv in json.loads(path.read_text(encoding="utf-8"))}
    missing = [s for s in samples if s not in by_id]
    if missing:
        raise InputError(path, f"no conversation with sample_id {', '.join(missing)} (it has {', '.join(by_id)})")
    Path(dest).mkdir(parents=True, exist_ok=True)
    out = Path(dest) / FILE
    out.write_text(json.dumps([by_id[s] for s in samples]), encoding="utf-8")
    return Path(dest)


if __name__ == "__main__":  # python -m membench.benchmarks.locomo.conversations SRC_DIR DEST_DIR conv-26 conv-30
    keep_conversations(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
