"""One row per scale-benchmark JSON (bench/scale.py --json): the before/after table a closing note quotes.

    python bench/scale_table.py before.json after.json [...] [--floor-from after.json]

Columns: wall, floor, ratio, CPU ratio, no-op rerun, peak RSS and its job, distinct texts, score + retrieval-log
seconds. `--floor-from` divides every wall by one run's floor (runs on the same data measured at different
machine loads get one yardstick). Prints markdown; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def row(name: str, r: dict[str, Any], floor: float | None) -> list[str]:
    floor = floor or r["floor_s"]
    peak = max((j for j in r["jobs"] if j["max_rss_mb"] is not None), key=lambda j: j["max_rss_mb"])
    after_rank = sum(r["jobs_run"].get(rule, {}).get("s", 0) for rule in ("score", "score_logged", "retrieval_log"))
    distinct = sum(t.get("distinct_needed", 0) for t in r["datasets"].values())
    return [name, str(r.get("commit"))[:7], f"{r['wall_s']:,.0f}", f"{floor:,.0f}", f"{r['wall_s'] / floor:.2f}",
            f"{r['cpu_ratio']:.2f}" if r.get("cpu_ratio") else "-", f"{r['noop_rerun_s']:.1f}",
            f"{peak['max_rss_mb'] / 1024:.2f} ({peak['job']})", f"{distinct:,d}", f"{after_rank:,.0f}",
            f"{r['load_before'][0]:.1f}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--floor-from", type=Path, help="take the floor of this run for every row")
    args = ap.parse_args()
    floor = json.loads(args.floor_from.read_text())["floor_s"] if args.floor_from else None
    head = ["run", "commit", "wall s", "floor s", "wall/floor", "CPU ratio", "no-op s", "peak RSS GiB (job)",
            "distinct texts", "score+log s", "load"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for path in args.runs:
        print("| " + " | ".join(row(path.stem, json.loads(path.read_text()), floor)) + " |")


if __name__ == "__main__":
    main()
