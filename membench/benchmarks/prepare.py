"""A benchmark's files parsed as the workflow parses them, in one order every caller shares (the parse stage, the
Python API): its parser, the names of its categories, the gold-label errata, a stratified subset of questions, then
the evidence errata of the questions kept."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from membench.benchmarks.record import Benchmark
from membench.datasets.errata import apply_errata
from membench.datasets.errata.evidence import apply_evidence_errata
from membench.datasets.subset import subset
from membench.datasets.tables import ParsedDataset


def prepare(record: Benchmark, source: Path, errata: Mapping[str, Any] | None = None,
            subset_spec: Mapping[str, Any] | None = None,
            category_names: Mapping[str, str] | None = None,
            options: Mapping[str, Any] | None = None) -> ParsedDataset:
    """Parse `source`; `category_names` names the categories of a record that has them (the dataset's config key);
    `errata` is the config's `errata` section (answer errata where the record ships them, evidence errata applied
    with `evidence: apply`); `subset_spec` ({per_group, seed}) keeps a stratified subset of questions; `options`:
    the dataset's values of the keys its record's `parse_options` names (LoCoMo-Plus: `seed`)."""
    parsed = record.parse_source(Path(source), **(options or {}))
    if category_names and record.name_categories:
        record.name_categories(parsed, category_names)
    if record.errata:
        parsed.counts["gold_errata_applied"] = apply_errata(parsed, errata, record.errata)
    if subset_spec:
        parsed = subset(parsed, int(subset_spec["per_group"]), int(subset_spec.get("seed", 0)))
    if record.evidence_errata:
        parsed.counts["evidence_errata"] = apply_evidence_errata(parsed, errata, record.evidence_errata)
    return parsed
