"""What a call cache (the ledger of paid model calls, `cache/llm-calls.jsonl`, plain or .xz) holds, per library.

    python bench/call_ledger.py bench/llm-calls/model-written-memories.jsonl.xz \
        mem0-infer="Memory Extractor" a-mem="structured analysis|memory evolution agent"

Each `name=marker` takes the ok lines whose request text contains `marker` (or one of its `|`-separated
alternatives; the first name that matches, in the order given; the rest are "other"). Prints per name: calls,
prompt and completion tokens, and the time spent calling: the gaps between one call's end (`ts`) and the next
one's, summed over gaps of at most --gap seconds (a longer gap is a run stopped and resumed, not a call).
Why: a run resumed over several sessions has no single wall time, and a replay from the cache takes none; the
ledger is the one record of what the calls cost.
"""

from __future__ import annotations

import argparse
import json
import lzma
from pathlib import Path


def ledger_lines(path: Path) -> list[dict]:
    """The ok lines of a call cache, in the order they were written."""
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [line for line in lines if line.get("status") == "ok"]


def by_marker(lines: list[dict], markers: dict[str, str], gap: float) -> dict[str, dict]:
    """name -> calls, prompt_tokens, completion_tokens, calling_s (see the module docstring)."""
    out: dict[str, dict] = {}
    last: dict[str, float] = {}
    for line in lines:
        text = json.dumps(line["request"], ensure_ascii=False)
        name = next((n for n, m in markers.items() if any(alt in text for alt in m.split("|"))), "other")
        row = out.setdefault(name, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "calling_s": 0.0})
        row["calls"] += 1
        row["prompt_tokens"] += int(line["usage"]["prompt_tokens"])
        row["completion_tokens"] += int(line["usage"]["completion_tokens"])
        if name in last and 0 <= line["ts"] - last[name] <= gap:
            row["calling_s"] += line["ts"] - last[name]
        last[name] = line["ts"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cache", type=Path)
    parser.add_argument("markers", nargs="+", help="name=substring of the request text")
    parser.add_argument("--gap", type=float, default=600.0)
    args = parser.parse_args()
    markers = dict(m.split("=", 1) for m in args.markers)
    for name, row in by_marker(ledger_lines(args.cache), markers, args.gap).items():
        print(f"{name}: {row['calls']:,} calls, {row['prompt_tokens']:,} prompt + {row['completion_tokens']:,} "
              f"completion tokens, {row['calling_s'] / 3600:.2f} h calling")


if __name__ == "__main__":
    main()
