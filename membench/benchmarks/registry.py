"""The benchmark kinds membench knows, by name. Adding one: a module defining its `Benchmark` record, and one
line in `BUILT_IN` (or a `register()` call, as tests/test_benchmark_record.py does)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from membench.benchmarks.beam.benchmark import BENCHMARK as BEAM
from membench.benchmarks.locomo.benchmark import BENCHMARK as LOCOMO
from membench.benchmarks.locomo_plus.benchmark import BENCHMARK as LOCOMO_PLUS
from membench.benchmarks.longmemeval.benchmark import BENCHMARK as LONGMEMEVAL
from membench.benchmarks.procedural.benchmark import BENCHMARK as PROCEDURAL
from membench.benchmarks.record import Benchmark
from membench.datasets.tables import ParsedDataset
from membench.errors import InputError

BUILT_IN = (LONGMEMEVAL, LOCOMO, PROCEDURAL, BEAM, LOCOMO_PLUS)
BENCHMARKS: dict[str, Benchmark] = {}


def register(record: Benchmark) -> Benchmark:
    """Make a kind known to every stage; registering the same record again is a no-op, another one an error."""
    known = BENCHMARKS.get(record.kind)
    if known is not None and known != record:
        raise ValueError(f"benchmark kind {record.kind!r} is already registered with another record")
    BENCHMARKS[record.kind] = record
    return record


def kinds() -> list[str]:
    return sorted(BENCHMARKS)


def supporting(feature: str) -> list[str]:
    """The kinds whose record sets `feature` (a `Benchmark` field: "qa", "facts", "judged", ...)."""
    return [k for k in kinds() if getattr(BENCHMARKS[k], feature)]


def benchmark(kind: str) -> Benchmark:
    if kind not in BENCHMARKS:
        raise KeyError(f"unknown benchmark kind {kind!r}; known: {', '.join(kinds())}")
    return BENCHMARKS[kind]


def of_dataset(config: Mapping[str, Any], dataset: str) -> Benchmark:
    """The benchmark record of a configured dataset (`datasets.<dataset>.kind`): how the workflow's plan asks."""
    return benchmark(config["datasets"][dataset]["kind"])


def parsed_with(normalization: Path) -> Benchmark:
    """The benchmark a parsed dataset was parsed by, as its `normalization.json` names it."""
    try:
        kind = json.loads(Path(normalization).read_text(encoding="utf-8"))["kind"]
    except (OSError, ValueError, KeyError) as err:
        raise InputError(normalization, f"not a parse record ({err})") from None
    if kind not in BENCHMARKS:
        raise InputError(normalization, f"unknown dataset kind {kind!r}; known: {', '.join(kinds())}")
    return BENCHMARKS[kind]


def parse_dataset(kind: str, source: Path) -> ParsedDataset:
    """Parse a benchmark's native files, naming the source when the kind or the files are unknown."""
    if kind not in BENCHMARKS:
        raise InputError(source, f"unknown dataset kind {kind!r}; known: {', '.join(kinds())}")
    return BENCHMARKS[kind].parse_source(Path(source))


for _record in BUILT_IN:
    register(_record)
