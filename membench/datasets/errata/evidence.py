"""Evidence errata: known wrong evidence labels (the turns or sessions a question's gold points at), each with its
public source, checked while parsing and applied only when asked (`errata.evidence: apply`).

By default the figures stay as published: the benchmark's own evidence is scored, and the log counts the known
errata that read as recorded. With `apply`, a question's evidence is replaced by the corrected list, and the
question's evidence as published and as corrected goes to the `evidence_errata` table, from which the published
figures are scored beside the corrected ones. An entry is applied only where the file still reads as recorded:
the question text and its evidence at the entry's granularity (after the parser's visible repairs, repeats
counted) equal the entry's; a file that already reads as corrected, or otherwise, is counted and left alone.

Where a session's evidence is corrected (LongMemEval), the evidence turns of a session taken out go with it, as
LongMemEval's rule counts a turn as evidence only inside an evidence session (and its scorer knows an evidence
session by the `answer_` in its id, so a LongMemEval correction can take sessions out, not add any). Shipped lists:
``<kind>-evidence.json`` beside this module (LoCoMo; LongMemEval, whose one entry could not be checked against a
copy of its file here, as no public copy is reachable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from membench.datasets.errata.files import Entry, entries
from membench.datasets.tables import ParsedDataset
from membench.errors import InputError

__all__ = ["EvidenceErratum", "load_evidence_errata", "apply_evidence_errata", "MODES"]

MODES = ("published", "apply")
_FIELDS = ("id", "question_id", "question", "granularity", "recorded", "corrected", "reason", "sources")


@dataclass(frozen=True)
class EvidenceErratum(Entry):
    granularity: str = "turn"  # the qrels granularity the evidence lists are at (LoCoMo: turn; LongMemEval: session)
    recorded: tuple[str, ...] = ()  # the evidence as the file gives it (repeats kept: LoCoMo counts each entry)
    corrected: tuple[str, ...] = ()


def load_evidence_errata(path: str | Path) -> list[EvidenceErratum]:
    """Read and check an evidence errata file."""
    path = Path(path)
    out = []
    for rec, e, sources in entries(path, _FIELDS, "errata.evidence_path"):
        lists = {key: e[key] for key in ("recorded", "corrected")}
        for key, items in lists.items():
            if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
                raise InputError(path, f"'{key}' must be a non-empty list of item ids", rec, key)
        if Counter(lists["recorded"]) == Counter(lists["corrected"]):
            raise InputError(path, "'corrected' equals 'recorded': nothing to correct", rec, "corrected")
        out.append(EvidenceErratum(str(e["id"]), str(e["question_id"]), str(e["question"]), str(e["reason"]), sources,
                                   str(e["granularity"]), tuple(lists["recorded"]), tuple(lists["corrected"])))
    return out


def apply_evidence_errata(data: ParsedDataset, settings: Mapping[str, Any] | None, shipped: Path) -> dict[str, int]:
    """Check every known evidence erratum of ``data`` against its evidence, apply those that read as recorded
    when ``settings`` (the config's ``errata`` section) says ``evidence: apply``; returns the counts by outcome.
    A null ``evidence_path`` reads ``shipped``, the benchmark's own list (`Benchmark.evidence_errata`)."""
    settings = dict(settings or {})
    errata = load_evidence_errata(settings.get("evidence_path") or shipped)
    counts = Counter({"known": len(errata)})
    if not settings.get("enabled", True):
        if errata:
            data.log.note("evidence_errata_off", "kept", "known evidence errata not checked (errata.enabled: false)",
                          ", ".join(e.id for e in errata[:3]), count=len(errata))
        return dict(counts)
    apply = settings.get("evidence", "published") == "apply"
    questions = {q["question_id"]: q for q in data.questions}
    for e in errata:
        q = questions.get(e.question_id)
        if q is None:
            counts["question_absent"] += 1  # another file or split, or a subset run
            continue
        have = _evidence(data, e.question_id, e.granularity)
        if q["question"] == e.question and have == Counter(e.corrected):
            counts["already_corrected"] += 1
            data.log.note("evidence_erratum_already_corrected", "kept", "known evidence erratum that the file "
                          "already reads as corrected (fixed upstream): nothing to do", f"{e.id} ({e.question_id})")
        elif q["question"] != e.question or have != Counter(e.recorded):
            counts["not_applicable"] += 1
            data.log.note("evidence_erratum_not_applicable", "flagged", "known evidence erratum whose question or "
                          "evidence no longer reads as recorded (another file version): not applied",
                          f"{e.id} ({e.question_id})")
        elif apply:
            counts["applied"] += 1
            _correct(data, e)
        else:
            counts["as_recorded"] += 1
            data.log.note("evidence_errata_not_applied", "kept", "known wrong evidence labels that read as recorded, "
                          "scored as published (errata.evidence: published; `apply` corrects them)",
                          f"{e.id} ({e.question_id})")
    return dict(counts)


def _evidence(data: ParsedDataset, question_id: str, granularity: str) -> Counter:
    """A question's evidence at one granularity, each item counted as often as its relevance says."""
    return Counter({r["item_id"]: int(r["relevance"]) for r in data.qrels
                    if r["question_id"] == question_id and r["granularity"] == granularity})


def _correct(data: ParsedDataset, e: EvidenceErratum) -> None:
    """Replace the question's evidence at the erratum's granularity (and the turns of sessions taken out), keeping
    its evidence as published and as corrected in ``data.evidence_errata``."""
    removed = set(e.recorded) - set(e.corrected)
    session_of = {t["item_id"]: t["session_id"] for t in data.turns} if e.granularity == "session" else {}
    published = [r for r in data.qrels if r["question_id"] == e.question_id]
    kept = [r for r in published if r["granularity"] != e.granularity and session_of.get(r["item_id"]) not in removed]
    corrected = kept + [{"question_id": e.question_id, "item_id": item, "granularity": e.granularity,
                         "relevance": float(n)} for item, n in Counter(e.corrected).items()]
    data.qrels = _replace_rows(data.qrels, e.question_id, corrected)
    data.evidence_errata += [{**r, "evidence": side, "erratum": e.id, "source": e.sources[0]}
                             for side, rows in (("published", published), ("corrected", corrected)) for r in rows]
    data.log.note("evidence_erratum_applied", "repaired", "evidence label corrected by a published erratum "
                  "(errata.evidence: apply; the report shows the figures it changes both ways)",
                  f"{e.question_id}: {', '.join(e.recorded)} -> {', '.join(e.corrected)} ({e.sources[0]})")


def _replace_rows(qrels: list[dict[str, Any]], question_id: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``qrels`` with the question's rows replaced by ``rows``, where its first row stood."""
    out, placed = [], False
    for r in qrels:
        if r["question_id"] != question_id:
            out.append(r)
        elif not placed:
            out += rows
            placed = True
    return out
