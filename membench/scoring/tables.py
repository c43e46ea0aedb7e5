"""The parsed tables a scorer reads, loaded once, and the shape of the rows it returns."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from membench.datasets.gold import left_out_reason
from membench.datasets.tables import TABLES, dataset_files, group_label, needed

SCORE_COLUMNS = ["question_id", "metric", "value", "split", "question_type", "tier", "skip"]


@dataclass
class Gold:
    """Scorer-side tables of one dataset (results/{dataset}/*.parquet)."""

    questions: pd.DataFrame
    turns: pd.DataFrame
    haystacks: pd.DataFrame
    qrels: pd.DataFrame
    roles: pd.DataFrame | None = None  # the gold items' roles, where the benchmark's gold names them (BEAM)

    @classmethod
    def load(cls, source: Path | Mapping[str, Any]) -> "Gold":
        """The four tables, from their paths (a rule's declared inputs) or the dataset folder, and the gold roles
        where they are named (a folder always names them; a file absent there is a table without roles)."""
        files = dataset_files(source)
        roles = files.get("gold_roles")
        return cls(*(pd.read_parquet(p) for p in needed(files, *TABLES)),
                   roles=pd.read_parquet(roles) if roles is not None and roles.exists() else None)

    @cached_property
    def turn_rows(self) -> dict[str, list[tuple]]:
        """session_key -> its turns as (session_id, turn_index, role, item_id), in table order. Built once per
        job, so a question's corpus is a few list look-ups, not a scan of every turn of the dataset."""
        rows: dict[str, list[tuple]] = {}
        columns = (self.turns[c].tolist() for c in ("session_key", "session_id", "turn_index", "role", "item_id"))
        for key, *row in zip(*columns):
            rows.setdefault(key, []).append(tuple(row))
        return rows

    @cached_property
    def haystack_sessions(self) -> dict[str, list[str]]:
        """haystack_id -> its session keys in haystack order, built once per job."""
        ordered = self.haystacks.sort_values(["haystack_id", "position"], kind="stable")
        return {h: list(g.session_key) for h, g in ordered.groupby("haystack_id", sort=False)}

    def qrels_by_question(self, granularity: str) -> dict[str, dict[str, float]]:
        q = self.qrels[self.qrels.granularity == granularity]
        out: dict[str, dict[str, float]] = {}
        for qid, item, rel in zip(q.question_id, q.item_id, q.relevance):
            out.setdefault(qid, {})[item] = float(rel)
        return out


def ranked_lists(run: pd.DataFrame, granularity: str) -> dict[str, list[str]]:
    """question_id -> item ids in rank order for one granularity of a run."""
    part = run[run.granularity == granularity].sort_values(["question_id", "rank"])
    lists: dict[str, list[str]] = {}  # plain columns, not a pandas group per question: 0.62 -> 0.18 s on LoCoMo
    for qid, item in zip(part.question_id.tolist(), part.item_id.tolist()):
        found = lists.get(qid)
        if found is None:
            found = lists[qid] = []
        found.append(item)
    return lists


def rows_for(question: dict, metrics: dict[str, float], skip: str | None) -> list[dict]:
    return [{"question_id": question["question_id"], "metric": m, "value": float(v), "split": question["split"],
             "question_type": group_label(question), "tier": question["tier"], "skip": skip}
            for m, v in metrics.items()]


def gold_rows(question: dict, metrics: dict[str, float], has_gold: bool) -> list[dict]:
    """The question's rows if it has gold to score against; else (validity rule 6) NaN rows left out under its
    parser's `gold_issue` (`no_gold` where the parser gave none)."""
    if has_gold:
        return rows_for(question, metrics, None)
    return rows_for(question, dict.fromkeys(metrics, float("nan")), left_out_reason(question))


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=SCORE_COLUMNS).astype(
        {"question_id": "string", "metric": "string", "value": "float64", "split": "string",
         "question_type": "string", "tier": "string", "skip": "string"})
