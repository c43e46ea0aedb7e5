"""parse stage: a benchmark's native files -> normalised Parquet tables + normalization.json."""

from __future__ import annotations

import logging
from pathlib import Path

from membench.datasets.registry import parse_dataset
from membench.datasets.subset import subset
from membench.io import sha256_file

log = logging.getLogger(__name__)


def run(kind: str, source: Path, out_dir: Path, subset_spec: dict | None = None) -> dict:
    """Parse, cut to a stratified subset of questions when `subset_spec` ({per_group, seed}) is given, write."""
    source = Path(source)
    files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
    sources = {str(p): sha256_file(p) for p in files if not p.name.startswith(".")}
    parsed = parse_dataset(kind, source)
    if subset_spec:
        parsed = subset(parsed, int(subset_spec["per_group"]), int(subset_spec["seed"]))
    parsed.write(Path(out_dir), sources)
    log.info("parsed %s from %s: %s", kind, source, parsed.counts)
    for entry in parsed.log.as_list():
        log.info("normalisation %s (%s): %d", entry["code"], entry["action"], entry["count"])
    return parsed.counts
