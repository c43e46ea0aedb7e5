"""LoCoMo (locomo10): ten long conversations; a question's haystack is its conversation, items are turns.

Gold is each QA's `evidence` list of dia_ids. The file's known defects are repaired or dropped visibly
(see `_evidence`), and sessions are enumerated by `session_N` keys, never by date keys. A QA whose evidence
is empty or dangling carries a `gold_issue` (membench.datasets.gold), by which the scorer leaves it out or
scores it on what resolves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from membench.benchmarks.locomo.dates import locomo_date, locomo_date_text
from membench.datasets.fields import expect, get, load_json, nonempty_str, unique
from membench.datasets.tables import ParsedDataset, split_of
from membench.errors import InputError
from membench.datasets.session_keys import SessionKeys

KIND = "locomo"
FILE_NAME = "locomo10.json"
# Category names as snap-research/locomo's own evaluation code reads the numbers; disputed (README, "LoCoMo
# categories"), so `datasets.<name>.category_names` can rename them (its schema default equals this).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
GOLD_ISSUES = ("empty_evidence", "dangling_evidence", "partly_dangling_evidence")
_SESSION = re.compile(r"session_(\d+)")
_DATE_KEY = re.compile(r"session_(\d+)_date_time")
_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def retrieval_unit(session_date: str | None, speaker: str | None, text: str, caption: str | None) -> str:
    """A turn as LoCoMo's own retrieval code indexes it (snap-research/locomo, branch `code`,
    task_eval/dpr_qa.py): `(<session date>) <speaker> said, "<text>"`, then `[shares <blip caption>]` for a
    turn that shares an image. Upstream ends each part with a newline; here they are joined by one space."""
    unit = f'({locomo_date_text(session_date)}) ' if session_date else ""
    unit += f'{speaker} said, "{text}"'
    return f"{unit} [shares {caption}]" if caption else unit


def name_categories(data: ParsedDataset, names: Mapping[str, str]) -> None:
    """Give every QA the configured name of its category (`names`: "1".."5" -> name) as its question type."""
    for q in data.questions:
        q["question_type"] = names[str(q["category"])]


def find_file(source: Path) -> Path:
    if source.is_file():
        return source
    path = source / FILE_NAME
    if not path.exists():
        raise InputError(path, "LoCoMo file not found in the dataset folder")
    return path


def parse(source: Path) -> ParsedDataset:
    path = find_file(source)
    samples = expect(load_json(path), list, path, None, None)
    if not samples:
        raise InputError(path, "the file holds no conversations")
    data = ParsedDataset(KIND, gold_issues=GOLD_ISSUES)
    keys = SessionKeys()
    sample_ids = []
    for s, sample in enumerate(samples):
        expect(sample, dict, path, f"#{s}", None)
        sample_id = nonempty_str(sample, "sample_id", path, f"#{s}")
        sample_ids.append(sample_id)
        dia_ids = _parse_conversation(path, sample_id, sample, data, keys)
        _parse_qa(path, sample_id, sample, dia_ids, data)
    unique(sample_ids, path, "sample_id")
    if not data.questions:
        raise InputError(path, "the file holds no questions (every `qa` list is empty)", None, "qa")
    data.counts = {
        "conversations": len(samples),
        "sessions": len(data.haystacks),
        "turns": len(data.turns),
        "turns_with_images": data.counts.pop("turns_with_images", 0),
        "turns_with_captions": sum(t["caption"] is not None for t in data.turns),
        "questions": len(data.questions),
        "questions_by_category": {str(c): sum(q["category"] == c for q in data.questions) for c in CATEGORIES},
        "evidence_items": len(data.qrels),
    }
    return data


def _parse_conversation(path: Path, sample_id: str, sample: dict, data: ParsedDataset, keys: SessionKeys) -> set[str]:
    rec = f"sample_id={sample_id}"
    conv = get(sample, "conversation", dict, path, rec)
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
    if not numbers:
        raise InputError(path, "empty haystack: conversation has no session_N keys", rec, "conversation")
    for k in conv:
        m = _DATE_KEY.fullmatch(k)
        if m and int(m.group(1)) not in numbers:
            data.log.note("date_key_without_session", "dropped", "session_N_date_time key with no session_N",
                          f"{sample_id}: {k}")
    dia_ids: list[str] = []
    for position, n in enumerate(numbers):
        field = f"conversation.session_{n}"
        turns = get(conv, f"session_{n}", list, path, rec, "conversation.")
        date_text = get(conv, f"session_{n}_date_time", str, path, rec, "conversation.")
        try:
            date = locomo_date(date_text)
        except ValueError as err:
            raise InputError(path, str(err), rec, f"{field}_date_time") from None
        if not turns:
            raise InputError(path, "session has no turns", rec, field)
        events = []
        for t, turn in enumerate(turns):
            tf = f"{field}[{t}]"
            expect(turn, dict, path, rec, tf)
            dia_ids.append(nonempty_str(turn, "dia_id", path, rec, f"{tf}."))
            events.append({"kind": "turn", "role": nonempty_str(turn, "speaker", path, rec, f"{tf}."),
                           "text": get(turn, "text", str, path, rec, f"{tf}."),
                           "caption": get(turn, "blip_caption", str, path, rec, f"{tf}.", optional=True)})
            events[-1]["speaker"] = events[-1]["role"]
            if "img_url" in turn:
                data.counts["turns_with_images"] = data.counts.get("turns_with_images", 0) + 1
        key, new = keys.key(f"{sample_id}/session_{n}", date, events)
        data.haystacks.append({"haystack_id": sample_id, "position": position, "session_key": key})
        if new:
            for t, event in enumerate(events):
                data.turns.append({"session_key": key, "session_id": f"{sample_id}/session_{n}",
                                   "session_date": date, "conversation_id": sample_id, "turn_index": t,
                                   "item_id": dia_ids[len(dia_ids) - len(events) + t], "state": None,
                                   "action": None, **event})
    unique(dia_ids, path, "dia_id", rec)
    return set(dia_ids)


def _parse_qa(path: Path, sample_id: str, sample: dict, dia_ids: set[str], data: ParsedDataset) -> None:
    qas = get(sample, "qa", list, path, f"sample_id={sample_id}")
    for j, qa in enumerate(qas):
        qid = f"{sample_id}_q{j}"
        rec = f"question_id={qid} (sample_id={sample_id}, qa[{j}])"
        expect(qa, dict, path, rec, None)
        question = nonempty_str(qa, "question", path, rec)
        category = get(qa, "category", int, path, rec)
        if category not in CATEGORIES:
            raise InputError(path, f"category must be 1-5, got {category}", rec, "category")
        answer = get(qa, "answer", (str, int, float), path, rec, optional=True)
        adversarial = get(qa, "adversarial_answer", (str, int, float), path, rec, optional=True)
        if answer is None and adversarial is None:
            raise InputError(path, "neither answer nor adversarial_answer is present", rec, "answer")
        if answer is None:
            data.log.note("adversarial_answer_only", "kept", "category-5 QA with only `adversarial_answer` "
                          "(no normal answer; kept as adversarial_answer)", qid)
        elif adversarial is not None:
            data.log.note("answer_and_adversarial_answer", "kept", "QA with both `answer` and "
                          "`adversarial_answer`; both kept", qid)
        if answer is not None and not isinstance(answer, str):
            data.log.note("answer_not_string", "repaired", "non-string answer converted to text", f"{qid}: {answer!r}")
            answer = str(answer)
        evidence = get(qa, "evidence", list, path, rec)
        items, dropped = _evidence(path, rec, qid, evidence, dia_ids, data)
        issue = _gold_issue(evidence, items, dropped)
        if issue == "dangling_evidence":
            data.log.note("evidence_all_dropped", "flagged", "every evidence string of this QA was dropped: "
                          "left out of retrieval scoring", qid)
        if issue == "empty_evidence":
            data.log.note("empty_evidence", "kept", "QA with empty evidence: left out of retrieval scoring "
                          "(LoCoMo's own scorer counts it as recall 1.0)", qid)
        index = len(data.questions)
        data.questions.append({
            "question_id": qid, "index": index, "split": split_of(index), "question": question,
            "question_date": None, "question_type": CATEGORIES[category], "category": category, "tier": None,
            "answer": answer, "adversarial_answer": None if adversarial is None else str(adversarial),
            "is_abstention": False, "haystack_id": sample_id, "gold_issue": issue,
        })
        for item in dict.fromkeys(items):
            data.qrels.append({"question_id": qid, "item_id": item, "granularity": "turn",
                               "relevance": float(items.count(item))})


def _gold_issue(evidence: list, items: list[str], dropped: int) -> str | None:
    """Why the QA's gold is empty or partial (membench.datasets.gold), or None."""
    if not evidence:
        return "empty_evidence"
    if not items:
        return "dangling_evidence"
    return "partly_dangling_evidence" if dropped else None


def _evidence(path: Path, rec: str, qid: str, evidence: list, dia_ids: set[str],
              data: ParsedDataset) -> tuple[list[str], int]:
    """Known-good dia_ids, repeats kept, and how many parts were dropped; packed lists are split, malformed ids
    repaired, dangling ones dropped."""
    items: list[str] = []
    dropped = 0
    for e, raw in enumerate(evidence):
        expect(raw, str, path, rec, f"evidence[{e}]")
        if raw in dia_ids:
            parts = [raw]
        else:
            parts = [p for p in re.split(r"[;,\s]+", raw) if p]
            if len(parts) > 1:
                data.log.note("evidence_list_in_one_string", "repaired",
                              "several dia_ids packed into one evidence string: split", f"{qid}: {raw!r}")
        for part in parts:
            m = _DIA.fullmatch(part)
            fixed = f"D{m.group(1)}:{m.group(2)}" if m else None
            if part in dia_ids:
                item = part
            elif fixed in dia_ids:
                data.log.note("evidence_malformed_repaired", "repaired",
                              "malformed dia_id repaired to an existing one", f"{qid}: {part!r} -> {fixed!r}")
                item = fixed
            else:
                data.log.note("evidence_dangling_dropped", "dropped",
                              "evidence string that is malformed or names no dia_id: dropped", f"{qid}: {part!r}")
                dropped += 1
                continue
            if item in items:
                data.log.note("evidence_duplicate_weighted", "kept", "dia_id listed twice in one QA's evidence: "
                              "one qrel with relevance 2, since upstream recall counts every entry", f"{qid}: {item!r}")
            items.append(item)
    return items, dropped
