"""score stage: a run + the dataset's gold tables -> one row per question x metric; and, where evidence errata are
applied, the same run scored on the evidence as published for the questions they changed."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.datasets.tables import QREL_COLUMNS, dataset_files, needed
from membench.io import atomic_write_parquet
from membench.scoring import efficiency
from membench.scoring.attributed import UNATTRIBUTED, without_attributed
from membench.scoring.tables import Gold, frame
from membench.jobs.job import Job

log = logging.getLogger(__name__)


def run(record: Benchmark, run_path: Path, tables: Path | Mapping[str, Path], out: Path) -> pd.DataFrame:
    """Score the run over the gold ``tables`` (their paths, or the dataset folder); a run with attributed hits is
    scored a second time without them, as metrics named `unattributed:<metric>`."""
    ranking = pd.read_parquet(run_path)
    gold = Gold.load(tables)
    scores = record.score(ranking, gold)
    if "attributed" in ranking.columns:
        again = record.score(without_attributed(ranking), gold)
        scores = pd.concat([scores, again.assign(metric=UNATTRIBUTED + again.metric)], ignore_index=True)
    atomic_write_parquet(scores, out)
    counted = scores[scores.skip.isna()]
    log.info("%s: %d questions scored, %d skipped", run_path, counted.question_id.nunique(),
             scores[scores.skip.notna()].question_id.nunique())
    return scores


def run_published(record: Benchmark, run_path: Path, tables: Path | Mapping[str, Path], out: Path) -> pd.DataFrame:
    """Score the run on the evidence as published (the ``evidence_errata`` table's `published` rows), for the
    questions an evidence erratum changed only; none changed, an empty table."""
    errata = pd.read_parquet(needed(dataset_files(tables), "evidence_errata")[0])
    published = errata[errata.evidence == "published"]
    changed = set(published.question_id)
    if changed:
        gold, ranking = Gold.load(tables), pd.read_parquet(run_path)
        gold.questions = gold.questions[gold.questions.question_id.isin(changed)]
        gold.qrels = pd.concat([gold.qrels[~gold.qrels.question_id.isin(changed)], published[list(QREL_COLUMNS)]],
                               ignore_index=True)
        scores = record.score(ranking[ranking.question_id.isin(changed)], gold)
    else:
        scores = frame([])
    atomic_write_parquet(scores, out)
    log.info("%s: %d questions scored on the evidence as published", run_path, scores.question_id.nunique())
    return scores


def run_efficiency(record: Benchmark, run_path: Path, tables: Path | Mapping[str, Path], tokens: Path,
                   out: Path) -> pd.DataFrame:
    """The run's efficiency rows (tokens of its top k, recall within the benchmark's token budget)."""
    rows = efficiency.score(pd.read_parquet(run_path), Gold.load(tables), pd.read_parquet(tokens),
                            record.granularities, record.token_budget)
    atomic_write_parquet(rows, out)
    return rows


def rule_score(job: Job) -> pd.DataFrame:
    """Rule score: a run -> per-question scores by the benchmark's own formulas, and its efficiency rows. Returns
    the scores (rule score_logged writes its logs from them)."""
    scores = run(job.benchmark, job.input.path("run"), job.input.files(), job.output.path("scores"))
    run_efficiency(job.benchmark, job.input.path("run"), job.input.files(), job.input.path("tokens"),
                   job.output.path("efficiency"))
    return scores
