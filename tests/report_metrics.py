"""What a finished run's console headlines and report name as metrics, read back from the files, so a test can hold
them against the metrics the run emitted (summary.parquet): no headline or section may name a metric the run did
not compute, and every headline figure is the summary's."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

CELL = re.compile(r"(-?\d+\.\d+) \[(-?\d+\.\d+|nan), (-?\d+\.\d+|nan)\]")


def emitted(results: Path) -> pd.DataFrame:
    """summary.parquet's top rows (split `all`, no grouping), indexed by dataset, adapter, metric."""
    summary = pd.read_parquet(results / "summary.parquet")
    top = summary[(summary.split == "all") & (summary.group_by == "all")]
    return top.set_index(["dataset", "adapter", "metric"])


def headline_tables(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """headline.txt -> dataset -> adapter -> metric -> its printed cell."""
    tables: dict[str, dict[str, dict[str, str]]] = {}
    for block in text.strip().split("\n\n"):
        lines = [line for line in block.splitlines() if not line.startswith("SUBSET RUN")]
        dataset = lines[0].split(" (")[0]
        metrics = lines[1].split()[1:]
        tables[dataset] = {}
        for line in lines[2:]:
            adapter, cells = line.split()[0], CELL.findall(line)
            tables[dataset][adapter] = {m: f"{mean} [{lo}, {hi}]" for m, (mean, lo, hi) in zip(metrics, cells)}
    return tables


def report_metrics(text: str) -> dict[str, set[str]]:
    """report.md -> dataset -> every metric its section names: in `####` headings (in backticks) and as the columns
    of its retrieval table."""
    found: dict[str, set[str]] = {}
    for section in re.split(r"(?m)^## ", text)[1:]:
        title, _, body = section.partition("\n")
        if not title.endswith(")") or " (" not in title:
            continue  # not a dataset's section (Adapters, Provenance, model stages)
        names = found.setdefault(title.split(" (")[0], set())
        for heading in re.findall(r"(?m)^#### (.*)$", body):
            names.update(t for t in re.findall(r"`([^`]+)`", heading) if "@" in t or t in ("AP", "MRR"))
        table = body.split("#### Retrieval", 1)[1].split("\n\n| adapter | ", 1)[1].split("\n", 1)[0]
        names.update(c.strip() for c in table.strip(" |").split(" | "))
    return found


def retrieval_table(text: str, dataset: str) -> dict[str, dict[str, str]]:
    """The `#### Retrieval` table of a dataset's report section: adapter -> metric -> its cell."""
    section = text.split(f"\n## {dataset} (", 1)[1].split("\n## ", 1)[0]
    lines = section.split("#### Retrieval", 1)[1].split("\n\n| adapter | ", 1)[1].split("\n\n", 1)[0].splitlines()
    metrics = [c.strip() for c in lines[0].strip(" |").split(" | ")]
    rows = [[c.strip() for c in line.strip(" |").split(" | ")] for line in lines[2:]]
    return {row[0]: dict(zip(metrics, row[1:])) for row in rows}
