"""Gold-label errata: known errors in a benchmark's QA answers, each with its public source, applied while
parsing as a visible normalisation (never a silent fix).

LoCoMo's shipped file (``membench/benchmarks/locomo/errata.json``) lists LoCoMo corrections reported in upstream issues and
checked against the transcript. An entry applies only when the question and the upstream answer still read
exactly as recorded (a fixed upstream file, or another version, makes it inapplicable, which is flagged).
Applied entries set the question's ``answer`` (corrected, or ``None`` when the answer is withdrawn), keep the
original in ``upstream_answer`` and the entry id in ``erratum``; answer-mode QA then scores both ways.
These errata touch answers only; known wrong evidence labels are ``evidence.py``'s (a benchmark's ``evidence-errata.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from membench.datasets.errata.files import Entry, entries
from membench.datasets.tables import ParsedDataset
from membench.errors import InputError

__all__ = ["Erratum", "ACTIONS", "load_errata", "apply_errata"]

ACTIONS = ("replace_answer", "withdraw_answer")
_FIELDS = ("id", "sample_id", "qa_index", "question", "upstream_answer", "action", "reason", "sources")


@dataclass(frozen=True)
class Erratum(Entry):
    upstream_answer: str = ""
    action: str = "replace_answer"
    answer: str | None = None


def load_errata(path: str | Path) -> list[Erratum]:
    """Read and check an errata file (a benchmark ships its own: `Benchmark.errata`)."""
    path = Path(path)
    out = []
    for rec, e, sources in entries(path, _FIELDS, "errata.path"):
        if e["action"] not in ACTIONS:
            raise InputError(path, f"action must be one of {', '.join(ACTIONS)}, got {e['action']!r}", rec, "action")
        if (e["action"] == "replace_answer") != bool(e.get("answer")):
            raise InputError(path, "replace_answer needs an 'answer'; withdraw_answer must not have one", rec, "answer")
        out.append(Erratum(str(e["id"]), f"{e['sample_id']}_q{int(e['qa_index'])}", str(e["question"]),
                           str(e["reason"]), sources, str(e["upstream_answer"]), e["action"], e.get("answer")))
    return out


def apply_errata(data: ParsedDataset, settings: Mapping[str, Any] | None, shipped: Path) -> int:
    """Apply the errata to parsed questions, noting each in the normalisation log; returns how many applied.

    ``settings`` is the config's ``errata`` section ({enabled, path}; a null path reads ``shipped``, the
    benchmark's own list); disabled, nothing changes and the log says how many known errata were left out.
    """
    settings = dict(settings or {})
    errata = load_errata(settings.get("path") or shipped)
    if not settings.get("enabled", True):
        if errata:
            data.log.note("gold_errata_off", "kept", "known gold-label errata not applied (errata.enabled: false)",
                          ", ".join(e.id for e in errata[:3]), count=len(errata))
        return 0
    by_id = {q["question_id"]: q for q in data.questions}
    applied = 0
    for e in errata:
        q = by_id.get(e.question_id)
        if q is None or q["question"] != e.question or q["answer"] != e.upstream_answer:
            data.log.note("gold_erratum_not_applicable", "flagged", "erratum whose question or upstream answer "
                          "no longer reads as recorded (fixed upstream, or another file version): not applied",
                          f"{e.id} ({e.question_id})")
            continue
        q["upstream_answer"], q["erratum"] = q["answer"], e.id
        q["answer"] = e.answer
        if e.action == "replace_answer":
            data.log.note("gold_erratum_corrected", "repaired", "gold answer corrected by a published erratum "
                          "(QA is reported with and without)", f"{e.question_id}: {e.upstream_answer!r} -> "
                          f"{e.answer!r} ({e.sources[0]})")
        else:
            data.log.note("gold_erratum_withdrawn", "flagged", "gold answer withdrawn by a published erratum "
                          "(wrong premise): kept for retrieval, left out of QA scoring",
                          f"{e.question_id}: {e.question!r} ({e.sources[0]})")
        applied += 1
    return applied
