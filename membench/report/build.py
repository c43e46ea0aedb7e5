"""Assemble results/report.md from the per-dataset outputs."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from membench import __version__
from membench.io import atomic_write_text
from membench.report.datasets import dataset_section


def build_report(datasets: Sequence[str], normalization_paths: Sequence[Path], out: Path) -> None:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"# membench report", "", f"membench {__version__}, written {stamp}.", "", "## Datasets", ""]
    for name, path in zip(datasets, normalization_paths):
        parts.append(dataset_section(name, Path(path)))
    atomic_write_text(out, "\n".join(parts))
