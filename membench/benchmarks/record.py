"""What membench knows about one benchmark kind, written once: how to parse it, what it is ranked and scored at,
what the report leads with, and which optional stages (QA, facts, judge, errata) apply to it."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from membench.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from membench.datasets.tables import ParsedDataset
    from membench.scoring.tables import Gold
    from membench.sessions.view import Haystack


@dataclass(frozen=True)
class JudgeCall:
    """One model call a benchmark's own judge asks for (see `Judge`)."""

    messages: Sequence[Mapping[str, str]]  # the chat messages, exactly as its protocol sends them
    # its reply -> the value handed back to the judge; a ValueError marks a reply the protocol cannot read (the
    # client then asks again, and the question fails if no reply can be read: never a guessed score)
    parse: Callable[[str], Any]
    params: Mapping[str, Any] = field(default_factory=dict)  # its protocol's request parameters (qa.verdict_params win)
    tags: Mapping[str, Any] = field(default_factory=dict)  # cache-key tags (its prompt's version), never sent


@dataclass(frozen=True)
class Judged:
    """What a benchmark's own judge concludes about one answer."""

    scores: Mapping[str, float]  # metric (one of `Judge.metrics`) -> value; NaN where its formula is undefined
    correct: bool | None = None  # a verdict, where its protocol gives one (used where no generic verdict is made)
    detail: Mapping[str, Any] = field(default_factory=dict)  # what it judged, JSON-able, for the QA table


# One question's judging: yields the calls it needs next (a list, asked together), is sent their parsed replies in
# the same order, and returns its `Judged`. Calls that depend on earlier replies are yielded in later rounds.
JudgeRun = Generator[list[JudgeCall], list[Any], Judged]


class Judge(Protocol):
    """A benchmark's own scoring of an answer by model calls (`Qa.judge`): BEAM's rubric judge, LoCoMo-Plus's labels.

    The QA stage asks it once per answered question, beside membench's generic verdict (which runs wherever the
    question has a gold answer), through the QA judge's client and call cache."""

    name: str  # its version as the QA table records it, e.g. ``beam-rubric@1a2b3c4d``
    metrics: tuple[str, ...]  # the score-row metrics it gives (``qa/...``), each also a column of the QA table
    tables: tuple[str, ...]  # the parsed tables it reads (`membench.datasets.tables.FILES` keys)

    def prompts(self) -> list[dict[str, str]]:
        """Its prompt files' provenance records (name, source, sha256, version)."""

    def prepare(self, tables: Mapping[str, pd.DataFrame], options: Mapping[str, Any]
                ) -> Callable[[Mapping[str, Any], str], JudgeRun]:
        """(question row, answer) -> its judging, given the tables it reads and ``qa.judge_options``."""

    def summary(self, qa: pd.DataFrame, questions: pd.DataFrame) -> dict[str, Any]:
        """Its own aggregate figures over the QA table (as its upstream reports them), JSON-able."""


@dataclass(frozen=True)
class Qa:
    """How answer-mode QA runs on a benchmark (`Benchmark.qa` is None where it does not)."""

    granularity: str  # the ranking whose top K becomes the context when qa.granularity is null
    expand_rounds: bool  # default of qa.expand_rounds: a retrieved user turn brings the reply that follows it
    categories: bool = False  # LoCoMo's categories: cat-2 date hint, cat-5 choice decided by rule, token F1
    abstention: bool = False  # LongMemEval's abstention questions are judged as "unanswerable"
    rubrics: Mapping[str, str] = field(default_factory=dict)  # the judge's rule for its own question types
    # a verdict that needs no model (question, answer) -> bool, or None where a judge decides (LoCoMo category 5)
    verdict_by_rule: Callable[[Mapping[str, Any], str], bool | None] | None = None
    answer_f1: Callable[[int, Any, Any], float] | None = None  # its own token F1 (category, answer, gold)
    judge: Judge | None = None  # its own scoring of answers by model calls, beside the generic verdict


@dataclass(frozen=True)
class Benchmark:
    """One benchmark kind (`datasets.<name>.kind` in the config)."""

    kind: str
    parse: Callable[..., ParsedDataset]  # the native files (a file or folder), parse_options -> normalised tables
    score: Callable[[pd.DataFrame, Gold], pd.DataFrame]  # a run + gold -> one row per question x metric
    granularities: tuple[str, ...]  # what it is ranked and scored at, in run order
    headlines: tuple[str, ...]  # the metrics its tables lead with (also the Holm headline family)
    curve: str  # the metric family drawn over k (`<curve>@k`)
    breakdown: str  # the metric the per-group table and plot show
    units_note: str  # the report's sentence on what a retrieval unit is
    user_turns_only: bool = False  # the protocol indexes user turns only
    full_depth: bool = False  # ranked over the whole haystack (else to retrieval.depth)
    unit_format: Callable[[str | None, str | None, str, str | None], str] | None = None  # its own turn text
    cluster: tuple[str, str] | None = None  # bootstrap unit: (its name, the questions column holding it)
    qa: Qa | None = None  # answer-mode QA
    facts: bool = False  # model-extracted facts (facts.source: llm)
    observations: bool = False  # ships its own fact logs (facts.source: observation)
    errata: Path | None = None  # its shipped gold-label (answer) errata, applied while parsing (`errata.json`)
    evidence_errata: Path | None = None  # its shipped evidence errata, checked while parsing (`evidence-errata.json`)
    judged: bool = False  # its top k is graded by the LLM judge (judge:)
    retrieval_log: bool = False  # upstream-format retrieval logs are written per granularity
    # names its numbered question categories from `datasets.<name>.category_names` (LoCoMo), after parsing
    name_categories: Callable[[ParsedDataset, Mapping[str, str]], None] | None = None
    reads: Callable[[Path], tuple[Path, ...]] | None = None  # the files `parse` reads in a file or folder
    # the dataset config keys `parse` takes as keyword arguments (LoCoMo-Plus: its placement `seed`)
    parse_options: tuple[str, ...] = ()
    # recall within this many tokens of results (membench.metrics.efficiency.budget_recall): about one of its longer
    # results (a session, a trajectory) or a few dozen turns, so a system that returns chunks still reads some
    token_budget: int = 2048

    def files_read(self, source: Path) -> list[Path]:
        """The native files parsing `source` reads (`reads`; by default the file itself, or every file below
        the folder but hidden ones): what a local dataset is tracked by. They may not all exist; a source
        whose files cannot be told is itself the answer, and parsing it says what is wrong."""
        source = Path(source)
        if self.reads is not None:
            try:
                return list(self.reads(source))
            except InputError:
                return [source]
        if source.is_dir():
            return sorted(p for p in source.rglob("*") if p.is_file() and not p.name.startswith("."))
        return [source]

    def parse_source(self, source: Path, **options: Any) -> ParsedDataset:
        """Parse its native files at `source`, naming the source when it is missing; `options`: the values of its
        `parse_options` (others are refused)."""
        unknown = sorted(set(options) - set(self.parse_options))
        if unknown:
            raise ValueError(f"{self.kind} parsing takes no option {', '.join(unknown)}")
        if not Path(source).exists():
            raise InputError(source, "dataset source not found")
        return self.parse(Path(source), **options)

    def depth_for(self, haystack: Haystack, granularity: str, depth: int) -> int:
        """How many of a haystack's documents a run ranks: all of them (full_depth) or `retrieval.depth`."""
        return len(haystack.documents(granularity)) if self.full_depth else depth

    def depth_label(self, depth: int) -> int | str:
        """The ranking depth as run metadata records it: "full" or `retrieval.depth`."""
        return "full" if self.full_depth else depth

    def qa_rule(self, name: str) -> bool:
        """Whether its QA follows the `Qa` rule `name` ("categories", "abstention"); False without QA."""
        return bool(self.qa and getattr(self.qa, name))
