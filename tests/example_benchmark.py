"""`notes`, the tiny benchmark kind of the README's "Adding a benchmark": short notes, and questions naming the
notes that answer them (notes.json: {"notes": [{id, text}], "questions": [{id, text, relevant: [note id]}]}).
One module (parser, scorer, record); registering it is the one other line. tests/test_benchmark_record.py
parses, ranks and scores it."""

from __future__ import annotations

from pathlib import Path

from membench.benchmarks.record import Benchmark
from membench.datasets.fields import expect, get, load_json, nonempty_str, unique
from membench.datasets.tables import ParsedDataset, split_of
from membench.errors import InputError
from membench.scoring.tables import frame, ranked_lists, rows_for
from membench.datasets.session_keys import SessionKeys


def parse(source: Path) -> ParsedDataset:
    """Every note is a one-turn session of one haystack, `notes`; a question's relevant notes are its qrels."""
    path = source / "notes.json" if source.is_dir() else source
    root = expect(load_json(path), dict, path, None, None)
    data, keys, ids = ParsedDataset("notes"), SessionKeys(), []
    for position, note in enumerate(get(root, "notes", list, path, None)):
        rec = f"notes[{position}]"
        ids.append(nonempty_str(expect(note, dict, path, rec, None), "id", path, rec))
        event = {"kind": "turn", "role": "user", "speaker": None, "text": nonempty_str(note, "text", path, rec),
                 "caption": None, "state": None, "action": None}
        key, _ = keys.key(ids[-1], None, [event])
        data.haystacks.append({"haystack_id": "notes", "position": position, "session_key": key})
        data.turns.append({"session_key": key, "session_id": ids[-1], "session_date": None, "conversation_id": None,
                           "turn_index": 0, "item_id": ids[-1], **event})
    unique(ids, path, "id")
    for index, question in enumerate(get(root, "questions", list, path, None)):
        rec = f"questions[{index}]"
        qid = nonempty_str(expect(question, dict, path, rec, None), "id", path, rec)
        for note in get(question, "relevant", list, path, rec):
            if note not in ids:
                raise InputError(path, f"relevant note {note!r} is not among the notes", rec, "relevant")
            data.qrels.append({"question_id": qid, "item_id": note, "granularity": "turn", "relevance": 1.0})
        data.questions.append({"question_id": qid, "index": index, "split": split_of(index),
                               "question": nonempty_str(question, "text", path, rec), "question_type": "note",
                               "is_abstention": False, "haystack_id": "notes"})
    data.counts = {"notes": len(ids), "questions": len(data.questions)}
    return data


def score(run, gold):
    """hit@1 (a relevant note first) and recall@2 (share of the relevant notes in the top 2)."""
    ranked, relevant = ranked_lists(run, "turn"), gold.qrels_by_question("turn")
    rows = []
    for q in gold.questions.to_dict("records"):
        top, wanted = ranked.get(q["question_id"], []), relevant[q["question_id"]]
        rows += rows_for(q, {"hit@1": float(top[:1] != [] and top[0] in wanted),
                             "recall@2": len(set(top[:2]) & set(wanted)) / len(wanted)}, None)
    return frame(rows)


BENCHMARK = Benchmark(
    kind="notes", parse=parse, score=score, granularities=("turn",),
    headlines=("hit@1", "recall@2"), curve="recall", breakdown="hit@1",
    units_note="Retrieval units: one note each.",
)
