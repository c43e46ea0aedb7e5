"""parse stage: a benchmark's native files -> normalised Parquet tables + normalization.json."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from membench.benchmarks.prepare import prepare
from membench.benchmarks.record import Benchmark
from membench.io import sha256_file
from membench.jobs.job import Job

log = logging.getLogger(__name__)


def run(record: Benchmark, source: Path, out: Path | Mapping[str, Path], errata: Mapping[str, Any] | None = None,
        subset_spec: dict | None = None, category_names: Mapping[str, str] | None = None,
        digests: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None) -> dict:
    """Parse, name the categories (`category_names`: the dataset's config key, for a record that names
    categories), apply the gold-label errata (benchmarks whose record says so: LoCoMo; ``errata`` is the config
    section), cut to a stratified subset of questions when `subset_spec` ({per_group, seed}) is given, check the
    evidence errata of the questions kept (applied with ``errata.evidence: apply``), write the tables (to the
    paths in `out`, or into the folder `out`). `digests`: the sha256 of source files known already (the rule's
    param for a local copy, from `membench.jobs.source_digests`), so a large file is not hashed a second time.
    `options`: the dataset's config values of the keys its record's `parse_options` names (LoCoMo-Plus: `seed`)."""
    source = Path(source)
    parsed = prepare(record, source, errata, subset_spec, category_names, options)
    known = digests or {}
    sources = {str(p): known.get(str(p)) or sha256_file(p) for p in record.files_read(source)}
    parsed.write(out if isinstance(out, Mapping) else Path(out), sources)
    log.info("parsed %s from %s: %s", record.kind, source, parsed.counts)
    for entry in parsed.log.as_list():
        log.info("normalisation %s (%s): %d", entry["code"], entry["action"], entry["count"])
    return parsed.counts


def rule_parse(job: Job) -> None:
    """Rule parse: a benchmark's published file -> the parsed tables."""
    p = job.params
    run(job.benchmark, Path(p.source), job.output.files(), p.errata, p.subset, p.category_names, p.sha256, p.options)
