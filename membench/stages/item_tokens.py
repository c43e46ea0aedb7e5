"""Rule item_tokens: what each turn of a dataset costs an agent to read (cl100k_base tokens)."""

from __future__ import annotations

import pandas as pd

from membench.datasets.item_tokens import item_tokens
from membench.io import atomic_write_parquet
from membench.jobs.job import Job


def rule_item_tokens(job: Job) -> None:
    """Rule item_tokens: what each turn of a dataset costs an agent to read (cl100k_base tokens)."""
    atomic_write_parquet(item_tokens(pd.read_parquet(job.input.path("turns"))), job.output.path("tokens"))
