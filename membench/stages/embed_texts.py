"""embed_texts stage: gather the distinct texts a dataset's embedding runs need (the shards that embed them are
`membench.stages.embed`, kept apart so their code version does not cover the adapters and benchmarks).

`collect` loads every embedding run of a dataset (gold-free view only, with the run's fact logs), asks each for
its texts (`membench.embedding.plan`) and writes the distinct (model, text) pairs once. `embed_shard` embeds
its share of the texts (balanced by length) into the content-addressed cache (`membench.embedding.cache`): shards run
side by side on every core (or on many cluster nodes), and a text already in the cache costs nothing. Rank jobs
of embedding runs wait for their dataset's `mark_embedded` marker (written once the shards that embed its texts
are done), then only read vectors. One set of shards embeds the texts of all the datasets a run needs, so the
model is loaded once per shard.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd

from membench.runs.registry import load_adapter
from membench.benchmarks.record import Benchmark
from membench.embedding.plan import run_texts
from membench.io import atomic_write_parquet, atomic_write_text
from membench.sessions.reader import SessionStore, StorePaths
from membench.stages.embed import TEXT_COLUMNS
from membench.stages.rank import granularities_for
from membench.jobs.job import Job

log = logging.getLogger(__name__)


def collect(record: Benchmark, store_paths: StorePaths, runs: list[dict[str, Any]], texts_path: Path,
            summary_path: Path, options: dict[str, Any] | None = None) -> pd.DataFrame:
    """store_paths: the session logs and view tables (or the dataset folder); runs: [{name, spec, params, facts}]
    (facts: the run's fact-log folder or None). Writes the distinct (model_path, text) pairs and a summary:
    distinct texts, and per run its distinct texts and occurrences."""
    stores: dict[str | None, SessionStore] = {}
    rows: dict[tuple[str, str], None] = {}
    summary: dict[str, Any] = {"runs": {}}
    for run in runs:
        facts = run.get("facts")
        if facts not in stores:
            stores[facts] = SessionStore(store_paths, user_turns_only=record.user_turns_only,
                                         facts_dir=Path(facts) if facts else None)
        adapter = load_adapter(run["spec"], run["params"], {"embedding_options": options or {}})
        cache = adapter.embedder()
        if cache is None:
            summary["runs"][run["name"]] = {"distinct": 0, "occurrences": 0}
            continue
        wanted = run_texts(adapter, stores[facts], granularities_for(record, adapter))
        rows.update(dict.fromkeys((cache.model_path or "", text) for text in wanted.texts))
        summary["runs"][run["name"]] = {"model": cache.model_id, "distinct": len(wanted.texts),
                                        "occurrences": wanted.occurrences}
    table = pd.DataFrame(list(rows), columns=list(TEXT_COLUMNS)).astype(TEXT_COLUMNS)
    summary["distinct"] = len(table)
    summary["occurrences"] = sum(r["occurrences"] for r in summary["runs"].values())
    atomic_write_parquet(table, texts_path)
    atomic_write_text(summary_path, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    log.info("%d distinct texts to embed for %d runs (%d with repeats)", len(table), len(runs),
             summary["occurrences"])
    return table


def rule_embed_texts(job: Job) -> None:
    """Rule embed_texts: a dataset's embedding runs -> the distinct texts they embed (+ a count summary)."""
    collect(job.benchmark, job.input.files(), list(job.params.runs), job.output.path("texts"),
            job.output.path("summary"), dict(job.params.options))
