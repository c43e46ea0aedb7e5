"""judge stage (Procedural): grade the unlabelled trajectories in one adapter's top k, then score the run
over the extended pool.

``run`` writes ``judgments.parquet`` (question_id, item_id, rank, score float|NaN, status
ok|failed|budget|interrupted, model, reason, error) and a cost JSON. ``score`` writes the per-question
``extended/`` metric rows (see :mod:`membench.benchmarks.procedural.extended`).

Config (``judge:`` section; defaults in ``membench/config.schema.yaml``, keys explained in
``config.yaml``): ``k`` (grade the unlabelled pairs among the top k of each query), ``max_state_chars`` (each
state is cut to this many characters in the prompt), ``max_steps`` (at most this many steps are shown) and
``params`` (request parameters of every grade call).

The same (query, trajectory) pair gets the identical prompt whatever adapter retrieved it, so judging a
second adapter pays only for the pairs the first did not retrieve -- provided both jobs use the same call
cache file (and do not run at the same time: a process only sees cache lines that existed when it started).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from membench.config import config_section
from membench.datasets.tables import dataset_files
from membench.errors import InputError
from membench.io import atomic_write_parquet
from membench.pool.relevance_judge import (JUDGMENT_COLUMNS, grade_messages, grade_parser, trajectory_texts,
                                         unlabelled_pairs)
from membench.llm.prompts import load_prompt
from membench.benchmarks.procedural import extended
from membench.scoring.tables import Gold
from membench.llm.stage_calls import StageStopped, call_batch, make_client, stop_note, write_cost
from membench.jobs.job import Job

log = logging.getLogger(__name__)

__all__ = ["run", "score", "read_judgments"]


def run(tables: Path | Mapping[str, Path], run_path: Path, out_path: Path, config: Mapping[str, Any],
        cache_path: Path, cost_path: Path | None = None, *, dataset: str | None = None, adapter: str | None = None,
        progress: bool = True, base_dir: Path | None = None, **client_overrides) -> pd.DataFrame:
    """Grade the unlabelled pairs in the top k of ``run_path``; write and return the judgments. ``tables``: the
    dataset's four parsed tables (their paths, or the dataset folder).

    Raises StageStopped (after writing every judgment made, the rest with status budget/interrupted) on a
    budget stop, SIGTERM/SIGINT, or more failed calls than ``llm.max_failed_share``.
    """
    opts = config_section(config, "judge")
    k = opts["k"]
    gold = Gold.load(tables)
    if not (gold.qrels.granularity == "trajectory").any():
        raise InputError(dataset_files(tables)["qrels"],
                         "the judge stage needs a procedural dataset (trajectory labels)")
    ranking = pd.read_parquet(run_path)
    pairs = unlabelled_pairs(ranking, gold.qrels_by_question("trajectory"), k)
    texts = trajectory_texts(gold.turns, opts["max_state_chars"], opts["max_steps"])
    queries = dict(zip(gold.questions.question_id, gold.questions.question))
    missing = sorted(set(pairs.item_id) - set(texts))
    if missing:
        raise InputError(run_path, f"{len(missing)} retrieved trajectories are not in the corpus, e.g. {missing[0]!r}")
    prompt = load_prompt("grade", config, base_dir)
    requests = [grade_messages(prompt, queries[q], texts[t]) for q, t in zip(pairs.question_id, pairs.item_id)]

    client = make_client(config, cache_path, "judge", **client_overrides)
    with client, client.sigterm_guard():
        replies, stop, message = call_batch(client, requests, stage="judge", parse=grade_parser(),
                                            progress=progress, **opts["params"])
        scores, statuses, reasons, errors = [], [], [], []
        for reply in replies:
            if reply is None:
                scores.append(np.nan), statuses.append(stop or "failed"), reasons.append(None), errors.append(None)
            elif reply.ok:
                score, reason = reply.value
                scores.append(score), statuses.append("ok"), reasons.append(reason), errors.append(None)
            else:
                scores.append(np.nan), statuses.append("failed"), reasons.append(None)
                errors.append(reply.error or "failed")
        out = pairs.assign(score=scores, status=statuses, model=client.model, reason=reasons, error=errors)
        out = out[list(JUDGMENT_COLUMNS)].astype(JUDGMENT_COLUMNS)
        atomic_write_parquet(out, Path(out_path))
        status = stop or "complete"
        write_cost(cost_path, client, stage="judge", dataset=dataset, adapter=adapter, status=status,
                   message=message, prompts=[prompt.describe()],
                   extra={"k": k, "pairs": len(out), "ok": int((out.status == "ok").sum()),
                          "failed": int((out.status == "failed").sum())})
    log.info("judge %s/%s: %d unlabelled pairs in the top %d; %d graded, %d failed (%s)", dataset, adapter,
             len(out), k, int((out.status == "ok").sum()), int((out.status == "failed").sum()), status)
    if stop:
        not_graded = int((out.status != "ok").sum())
        raise StageStopped("judge", stop, f"{message}; {not_graded} of {len(out)} pairs not graded; "
                                          f"{stop_note(cache_path)}")
    return out


def read_judgments(paths: Iterable[Path]) -> pd.DataFrame:
    """Concatenate judgment files (e.g. every adapter's, for a shared pool)."""
    frames = [pd.read_parquet(p) for p in paths]
    if not frames:
        return pd.DataFrame(columns=list(JUDGMENT_COLUMNS)).astype(JUDGMENT_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def score(run_path: Path, tables: Path | Mapping[str, Path], judgment_paths: Iterable[Path],
          out_path: Path) -> pd.DataFrame:
    """Per-question ``extended/`` metric rows of a run over official labels ∪ ok judgments (``tables``: the four
    parsed tables' paths, or the dataset folder)."""
    scores = extended.score(pd.read_parquet(run_path), Gold.load(tables),
                            read_judgments([Path(p) for p in judgment_paths]))
    atomic_write_parquet(scores, Path(out_path))
    return scores


def rule_judge(job: Job) -> None:
    """Rule judge: a Procedural run's unlabelled top-k trajectories -> the model's relevance grades."""
    p = job.params
    run(job.input.files(), job.input.path("run"), job.output.path("judgments"), p.config, Path(p.cache),
        job.output.path("cost"), dataset=job.wildcards.dataset, adapter=job.wildcards.run)
