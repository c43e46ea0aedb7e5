"""The normalised tables every parser produces, with fixed columns so all datasets look alike.

- questions: one row per question (benchmark id kept), its split, text, date and answer fields.
- turns: one row per event of every distinct session (turn, task statement or trajectory step).
- haystacks: which sessions (by content key) each haystack holds, in benchmark order.
- qrels: question_id, item_id (the benchmark's own name), granularity, relevance: the evidence that is scored.
- gold_roles: where a benchmark's gold names roles (BEAM: an update and the original it replaces, the two sides of a
  contradiction, events in order), each gold item's role and its position in its list; empty for the others.
- rubrics: where a benchmark judges answers by rubric items (BEAM), each question's items in order; else empty.
- evidence_errata: for each question an evidence erratum corrected (`errata.evidence: apply`), its evidence as
  published and as corrected (`evidence` column), so the published figures can be scored beside the corrected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from membench.datasets.gold import coverage
from membench.datasets.normalization import NormalizationLog
from membench.io import atomic_write_parquet, atomic_write_text

QUESTION_COLUMNS = {
    "question_id": "string", "index": "int64", "split": "string", "question": "string",
    "question_date": "string", "question_type": "string", "category": "Int64", "tier": "string",
    "answer": "string", "adversarial_answer": "string", "is_abstention": "bool", "haystack_id": "string",
    "upstream_answer": "string", "erratum": "string",  # set where a gold-label erratum changed the answer
    "gold_issue": "string",  # why its gold is empty or partly dangling (membench.datasets.gold), else null
    # the conversation its haystack is built from, where haystacks share one (LoCoMo-Plus), else null
    "conversation_id": "string",
}
TURN_COLUMNS = {
    "session_key": "string", "session_id": "string", "session_date": "string", "conversation_id": "string",
    "turn_index": "int64", "item_id": "string", "kind": "string", "role": "string", "speaker": "string",
    "text": "string", "caption": "string", "state": "string", "action": "string",
}
HAYSTACK_COLUMNS = {"haystack_id": "string", "position": "int64", "session_key": "string"}
QREL_COLUMNS = {"question_id": "string", "item_id": "string", "granularity": "string", "relevance": "float64"}
EVIDENCE_ERRATA_COLUMNS = {**QREL_COLUMNS, "evidence": "string", "erratum": "string", "source": "string"}
# role: the list the item stands in (e.g. "original_info"); group: which entry of that list (an event of an ordering
# may name several messages); position: the item's place among them
GOLD_ROLE_COLUMNS = {"question_id": "string", "role": "string", "group": "int64", "item_id": "string"}
RUBRIC_COLUMNS = {"question_id": "string", "position": "int64", "text": "string"}

SPLITS = {0: "tune", 1: "holdout"}

TABLES = ("questions", "turns", "haystacks", "qrels")
OPTIONAL_TABLES = ("gold_roles", "rubrics")  # written by every parse (empty where a benchmark has none)
FILES = {**{name: f"{name}.parquet" for name in TABLES + OPTIONAL_TABLES},
         "evidence_errata": "evidence_errata.parquet", "normalization": "normalization.json"}


def files_in(source: Path | str | Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Path]:
    """Where the files ``names`` (key -> usual path under a folder) are: the paths a rule declares (a mapping
    such as ``dict(snakemake.input.items())``; its other keys are ignored), or under their usual names in a
    folder (tests, direct use)."""
    if isinstance(source, Mapping):
        return {key: Path(source[key]) for key in names if key in source}
    return {key: Path(source) / path for key, path in names.items()}


def dataset_files(source: Path | str | Mapping[str, Any]) -> dict[str, Path]:
    """Where a parsed dataset's files are (keys of ``FILES``), see :func:`files_in`."""
    return files_in(source, FILES)


def needed(files: Mapping[str, Path], *names: str) -> list[Path]:
    """The paths of ``names`` in ``files``, or a clear error naming what the caller did not pass."""
    missing = [n for n in names if n not in files]
    if missing:
        raise ValueError(f"missing dataset file(s) {', '.join(missing)}: pass them (declare them as the rule's "
                         f"inputs) or give the dataset folder")
    return [files[n] for n in names]


def split_of(index: int) -> str:
    """Validity rule 3: even question index = tune, odd = holdout."""
    return SPLITS[index % 2]


def group_label(question: Mapping[str, Any]) -> str | None:
    """A question's group as tables show it: its type, with LoCoMo's raw category number beside the name
    ("4 single-hop"), since the names are one disputed reading of the numbers (README); None without either."""
    category, qtype = question.get("category"), question.get("question_type")
    qtype = None if qtype is None or pd.isna(qtype) else str(qtype)
    if category is None or pd.isna(category):
        return qtype
    return f"{int(category)} {qtype}" if qtype else str(int(category))


def frame(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(columns))
    return df.astype(columns)


@dataclass
class ParsedDataset:
    kind: str
    questions: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    haystacks: list[dict[str, Any]] = field(default_factory=list)
    qrels: list[dict[str, Any]] = field(default_factory=list)
    evidence_errata: list[dict[str, Any]] = field(default_factory=list)
    gold_roles: list[dict[str, Any]] = field(default_factory=list)
    rubrics: list[dict[str, Any]] = field(default_factory=list)
    log: NormalizationLog = field(default_factory=NormalizationLog)
    counts: dict[str, Any] = field(default_factory=dict)
    gold_issues: tuple[str, ...] = ()  # the `gold_issue` reasons its parser can give, counted even when 0

    def tables(self) -> dict[str, pd.DataFrame]:
        """The four tables every benchmark has, then the gold roles and rubrics (empty where it has none)."""
        return {
            "questions": frame(self.questions, QUESTION_COLUMNS),
            "turns": frame(self.turns, TURN_COLUMNS),
            "haystacks": frame(self.haystacks, HAYSTACK_COLUMNS),
            "qrels": frame(self.qrels, QREL_COLUMNS),
            "gold_roles": frame(self.gold_roles, GOLD_ROLE_COLUMNS),
            "rubrics": frame(self.rubrics, RUBRIC_COLUMNS),
        }

    def write(self, out: Path | Mapping[str, Any], sources: dict[str, str]) -> None:
        """Write the four Parquet tables and normalization.json (each atomically) to the paths in ``out`` (see
        :func:`dataset_files`), and the evidence errata, gold roles and rubrics tables where ``out`` names them (a
        folder always does)."""
        paths = needed(dataset_files(out), *TABLES, "normalization")
        tables = self.tables()
        tables["evidence_errata"] = frame(self.evidence_errata, EVIDENCE_ERRATA_COLUMNS)
        extra = {name: dataset_files(out).get(name) for name in ("evidence_errata", *OPTIONAL_TABLES)}
        for path in [*paths, *(p for p in extra.values() if p)]:
            path.parent.mkdir(parents=True, exist_ok=True)
        for name, path in [*zip(TABLES, paths), *((n, p) for n, p in extra.items() if p)]:
            atomic_write_parquet(tables[name], path)
        report = {"kind": self.kind, "counts": self.counts, "sources": sources,
                  "gold": coverage(self.questions, self.gold_issues), "normalizations": self.log.as_list()}
        atomic_write_text(paths[-1], json.dumps(report, indent=2, ensure_ascii=False) + "\n")
