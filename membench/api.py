"""Scoring a run from Python, without the workflow (in the style of ranx / ir_measures).

    import membench
    data = membench.load("locomo", "data/locomo")           # or membench.load("results/locomo")
    scores, summary = membench.evaluate("bm25.trec", data)   # or a DataFrame

`load` parses a benchmark's own files as the parse stage does (its parser, category names, gold-label and evidence
errata, an optional subset) or reads the tables the workflow wrote. `evaluate` scores a run that names the
benchmark's own ids (LoCoMo dia_ids such as ``D1:3``; LongMemEval session ids and ``<session_id>_<n>`` turn ids;
Procedural trajectory ids), as the workflow's run files and TREC files do, with the benchmark's own formulas
(`Benchmark.score`), and aggregates the rows as the aggregate stage does (means, 95% bootstrap CIs with the config's
default resamples and seed, the cluster bootstrap where the benchmark's record names one; splits all, tune and
holdout and every question group): the rows `results/summary.parquet` holds for the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import pandas as pd

from membench.analysis.aggregate import Resampling, summarize_dataset
from membench.benchmarks.prepare import prepare
from membench.benchmarks.record import Benchmark
from membench.benchmarks.registry import benchmark, kinds, parsed_with
from membench.config import config_section
from membench.datasets.run_files import RUN_COLUMNS, read_trec
from membench.datasets.tables import FILES, TABLES
from membench.scoring.tables import Gold

__all__ = ["Dataset", "Evaluation", "load", "evaluate", "read_trec"]


@dataclass(frozen=True)
class Dataset:
    """One benchmark dataset, parsed: its record, its normalised tables and the gold its scorer reads."""

    name: str  # the `dataset` column of the summary (a config's dataset name; by default the kind)
    record: Benchmark
    tables: Mapping[str, pd.DataFrame]  # questions, turns, haystacks, qrels (membench.datasets.tables)
    gold: Gold

    @property
    def kind(self) -> str:
        return self.record.kind

    @property
    def questions(self) -> pd.DataFrame:
        return self.tables["questions"]

    @property
    def qrels(self) -> pd.DataFrame:
        return self.tables["qrels"]

    def __repr__(self) -> str:
        return (f"Dataset(name={self.name!r}, kind={self.kind!r}, questions={len(self.questions)}, "
                f"turns={len(self.tables['turns'])}, qrels={len(self.qrels)})")


class Evaluation(NamedTuple):
    """`evaluate`'s answer: the benchmark's per-question rows and the run's summary rows."""

    scores: pd.DataFrame  # question x metric (membench.scoring.tables.SCORE_COLUMNS), as results/<d>/scores/<run>
    summary: pd.DataFrame  # membench.analysis.aggregate.SUMMARY_COLUMNS, as results/summary.parquet


def load(kind_or_path: str | Path | Benchmark, source: str | Path | None = None, *, name: str | None = None,
         errata: Mapping[str, Any] | str | None = None, category_names: Mapping[Any, str] | None = None,
         subset: Mapping[str, int] | None = None) -> Dataset:
    """A dataset to score runs against.

    ``load(kind, source)``: parse the benchmark's native file or folder as the parse stage does: its parser, then
    `category_names` (LoCoMo: the name of each category number), the gold-label errata and the evidence errata
    (``errata``: the config's `errata` section, e.g. ``"apply"``; default the schema's, as the workflow has them) and,
    given ``subset={"per_group": N, "seed": S}``, the same stratified subset of questions.
    ``load(folder)``: the tables the workflow's parse stage wrote (``results/<dataset>/``, whose
    ``normalization.json`` names the kind), exactly as its scorer reads them.
    """
    if source is None:
        folder = Path(kind_or_path) if not isinstance(kind_or_path, Benchmark) else None
        if folder is None or not (folder / FILES["normalization"]).is_file():
            raise ValueError(f"{kind_or_path!r}: give a benchmark kind and its files, load(kind, source) with kind "
                             f"one of {', '.join(kinds())}, or the folder of a parsed dataset (results/<dataset>/, "
                             "with normalization.json)")
        if errata is not None or category_names is not None or subset is not None:
            raise ValueError("errata, category_names and subset apply while parsing; a parsed folder has them already")
        record = parsed_with(folder / FILES["normalization"])
        gold = Gold.load(folder)
        return _dataset(name or folder.resolve().name, record, gold)
    record = kind_or_path if isinstance(kind_or_path, Benchmark) else benchmark(str(kind_or_path))
    settings = config_section(None, "errata", section={"evidence": errata} if isinstance(errata, str) else errata)
    parsed = prepare(record, Path(source), settings, subset,
                     {str(k): v for k, v in category_names.items()} if category_names else None)
    tables = parsed.tables()
    return _dataset(name or record.kind, record, Gold(*(tables[t] for t in TABLES), roles=tables["gold_roles"]))


def _dataset(name: str, record: Benchmark, gold: Gold) -> Dataset:
    tables = MappingProxyType({t: getattr(gold, t) for t in TABLES})
    return Dataset(name, record, tables, gold)


def evaluate(run: pd.DataFrame | str | Path, dataset: Dataset | str | Path, *, name: str | None = None,
             granularity: str | None = None, resamples: int | None = None, seed: int | None = None,
             cluster: bool | None = None) -> Evaluation:
    """Score ``run`` on ``dataset`` (a `Dataset`, or what `load` takes alone: a parsed folder).

    ``run``: a TREC run file or a DataFrame with columns question_id, item_id, rank (or score: ranked by it,
    highest first, ties in row order) and granularity (where the benchmark ranks at several). Items are the
    benchmark's own ids; a run at one granularity whose rows do not say it gets ``granularity``, or the one the
    benchmark has, or the one whose ids the run's are. ``name``: the `adapter` column (default: the TREC tag, else
    "run"). ``resamples``, ``seed``, ``cluster``: the bootstrap, by default the config's (report section).
    """
    data = dataset if isinstance(dataset, Dataset) else load(dataset)
    tag = None
    if isinstance(run, (str, Path)):
        run, tag = read_trec(run, data.record.granularities)
    table = _run_table(run, data, granularity)
    scores = data.record.score(table, data.gold)
    report = config_section(None, "report")
    resamples = report["bootstrap_resamples"] if resamples is None else resamples
    seed = report["seed"] if seed is None else seed
    cluster = report["cluster_bootstrap"] if cluster is None else cluster
    summary = summarize_dataset(data.name, {name or tag or "run": scores}, resamples, seed,
                                _resampling(data, cluster))
    return Evaluation(scores, summary)


def _resampling(data: Dataset, cluster: bool) -> Resampling:
    """As `membench.analysis.aggregate.resampling_for`: the cluster the record names, else the question."""
    if not cluster or data.record.cluster is None:
        return Resampling()
    unit, column = data.record.cluster
    return Resampling(unit, data.questions.set_index("question_id")[column])


def _documents(data: Dataset, granularity: str) -> pd.DataFrame:
    """(haystack_id, item_id): what a question of each haystack may be given at `granularity`, as the gold-free
    view builds its documents (`membench.sessions.view.Haystack.documents`)."""
    turns = data.tables["turns"]
    if granularity == "turn":
        turns = turns[turns.kind == "turn"]
        if data.record.user_turns_only:
            turns = turns[turns.role == "user"]
        items = turns[["session_key", "item_id"]]
    else:  # session, trajectory: a session (a trajectory) is named by its session id
        items = turns.drop_duplicates("session_key")[["session_key", "session_id"]].rename(
            columns={"session_id": "item_id"})
    pairs = data.tables["haystacks"][["haystack_id", "session_key"]].merge(items, on="session_key")
    return pairs[["haystack_id", "item_id"]].drop_duplicates()


def _run_table(run: pd.DataFrame, data: Dataset, granularity: str | None) -> pd.DataFrame:
    """The run as the scorer reads it (`RUN_COLUMNS`), checked against the dataset: known questions, granularities
    the benchmark ranks at, each item in its question's haystack, no item twice in one ranking."""
    missing = {"question_id", "item_id"} - set(run.columns)
    if missing or not {"rank", "score"} & set(run.columns):
        raise ValueError(f"a run needs the columns question_id, item_id and rank or score; it has {list(run.columns)}")
    run = run.copy()
    if "score" not in run.columns:
        run["score"] = float("nan")
    known = data.record.granularities
    if "granularity" not in run.columns:
        run["granularity"] = None
    unset = run.granularity.isna()
    if unset.any():
        run.loc[unset, "granularity"] = granularity or _granularity_of(run[unset], data)
    wrong = sorted(set(run.granularity) - set(known))
    if wrong:
        raise ValueError(f"granularity {wrong} is not one {data.kind} is ranked at ({', '.join(known)})")
    if "rank" not in run.columns:
        order = run.sort_values("score", ascending=False, kind="stable")
        run["rank"] = order.groupby(["question_id", "granularity"], sort=False).cumcount().add(1).reindex(run.index)
    table = run[list(RUN_COLUMNS)].astype(RUN_COLUMNS).reset_index(drop=True)
    questions = data.questions[["question_id", "haystack_id"]]
    unknown = sorted(set(table.question_id) - set(questions.question_id))
    if unknown:
        raise ValueError(f"the run has {len(unknown)} question(s) that {data.name} has not, e.g. {unknown[:3]}")
    placed = table.merge(questions, on="question_id", how="left")
    for g, part in placed.groupby("granularity", sort=False):
        allowed = _documents(data, str(g))
        check = part.merge(allowed, on=["haystack_id", "item_id"], how="left", indicator=True)
        outside = check[check._merge == "left_only"]
        if len(outside):
            examples = list(zip(outside.question_id, outside.item_id))[:3]
            raise ValueError(f"{len(outside)} {g} item(s) of the run are not in their question's haystack, e.g. "
                             f"{examples}: a run names {data.kind}'s own ids ({_id_hint(data.kind)})")
    twice = table[table.duplicated(["question_id", "granularity", "item_id"])]
    if len(twice):
        raise ValueError(f"{len(twice)} item(s) ranked twice for one question, e.g. "
                         f"{list(zip(twice.question_id, twice.item_id))[:3]}")
    return table


def _granularity_of(run: pd.DataFrame, data: Dataset) -> str:
    """The one granularity whose documents hold every item of `run`."""
    known = data.record.granularities
    if len(known) == 1:
        return known[0]
    items = set(run.item_id)
    fits = [g for g in known if items <= set(_documents(data, g).item_id)]
    if len(fits) != 1:
        raise ValueError(f"cannot tell the run's granularity from its ids ({fits or 'none'} fit): pass granularity= "
                         f"one of {', '.join(known)}, or a granularity column")
    return fits[0]


def _id_hint(kind: str) -> str:
    return {"locomo": "dia_ids such as D1:3", "longmemeval": "session ids, and <session_id>_<n> for turns",
            "procedural": "trajectory ids such as alfworld_92"}.get(kind, "its item ids")
