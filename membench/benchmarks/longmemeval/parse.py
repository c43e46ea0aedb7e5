"""LongMemEval (s, m, oracle): per-question haystacks of chat sessions; gold = answer sessions and turns.

Relevance follows the upstream retrieval protocol: a session is relevant when it is in
`answer_session_ids` and holds a user turn with `has_answer`; a turn is relevant when it is such a user turn.
Turn item ids are `<session_id>_<i+1>`, i the turn's 0-based position among all turns of the session.

A haystack may list one session more than once (the cleaned LongMemEval-S file does so in 13 histories:
the same filler session, same turns, another date; upstream issue #54). Upstream's `run_retrieval.py` makes
every listing a corpus entry of its own under the same id, so membench keeps each listing as a session of its
own, at its own date, named `<session_id>#<n>` from the second listing on (`listed_id` maps it back for the
upstream formulas). The same id with other turns is an error: no rule says which listing is the session.
"""

from __future__ import annotations

from pathlib import Path

from membench.benchmarks.longmemeval.dates import longmemeval_date
from membench.datasets.fields import expect, get, load_json, nonempty_str, unique
from membench.datasets.tables import ParsedDataset, split_of
from membench.errors import InputError
from membench.datasets.session_keys import SessionKeys

KIND = "longmemeval"
GOLD_ISSUES = ("abstention", "no_target")  # the reasons upstream's averages skip a question for
REPEAT_MARK = "#"  # `<session_id>#<n>`: the n-th listing (n >= 2) of a session in one haystack


def repeat_id(session_id: str, n: int) -> str:
    """The item name of the n-th listing of a session in one haystack (the first keeps the benchmark's id)."""
    return session_id if n == 1 else f"{session_id}{REPEAT_MARK}{n}"


def listed_id(item_id: str) -> str:
    """The benchmark's own id of a session or turn item (`s#2` -> `s`, `s#2_3` -> `s_3`)."""
    head, mark, tail = item_id.partition(REPEAT_MARK)
    if not mark:
        return item_id
    _n, sep, turn = tail.partition("_")
    return f"{head}{sep}{turn}"


def find_file(source: Path) -> Path:
    """The single LongMemEval JSON file in `source` (or `source` itself)."""
    if source.is_file():
        return source
    files = sorted(source.glob("*.json"))
    if len(files) != 1:
        raise InputError(source, f"expected exactly one LongMemEval .json file, found {len(files)}")
    return files[0]


def parse(source: Path) -> ParsedDataset:
    path = find_file(source)
    records = expect(load_json(path), list, path, None, None)
    data = ParsedDataset(KIND, gold_issues=GOLD_ISSUES)
    keys = SessionKeys()
    ids = []
    for index, record in enumerate(records):
        rid = f"#{index}"
        expect(record, dict, path, rid, None)
        qid = nonempty_str(record, "question_id", path, rid)
        ids.append(qid)
        _parse_question(path, index, qid, record, data, keys)
    unique(ids, path, "question_id")
    if not records:
        raise InputError(path, "the file holds no questions")
    data.counts = {
        "questions": len(records),
        "abstention_questions": sum(q["is_abstention"] for q in data.questions),
        "distinct_sessions": len({t["session_key"] for t in data.turns}),
        "turns_in_distinct_sessions": len(data.turns),
        "haystack_sessions": len(data.haystacks),
        "questions_with_repeated_sessions": data.log.count("repeated_haystack_session"),
    }
    return data


def _parse_question(path: Path, index: int, qid: str, record: dict, data: ParsedDataset, keys: SessionKeys) -> None:
    rec = f"question_id={qid}"
    question = nonempty_str(record, "question", path, rec)
    qtype = get(record, "question_type", str, path, rec)
    date_text = get(record, "question_date", str, path, rec)
    answer = get(record, "answer", (str, int, float), path, rec)
    if not isinstance(answer, str):
        data.log.note("answer_not_string", "repaired", "non-string answer converted to text", f"{qid}: {answer!r}")
        answer = str(answer)
    answer_ids = get(record, "answer_session_ids", list, path, rec)
    for i, sid in enumerate(answer_ids):
        expect(sid, str, path, rec, f"answer_session_ids[{i}]")
    session_ids = get(record, "haystack_session_ids", list, path, rec)
    dates = get(record, "haystack_dates", list, path, rec)
    sessions = get(record, "haystack_sessions", list, path, rec)
    if not sessions:
        raise InputError(path, "empty haystack: no sessions to search", rec, "haystack_sessions")
    if not (len(session_ids) == len(dates) == len(sessions)):
        raise InputError(path, f"haystack lists differ in length: {len(session_ids)} ids, {len(dates)} dates, "
                         f"{len(sessions)} sessions", rec, "haystack_sessions")
    for i, sid in enumerate(session_ids):
        expect(sid, str, path, rec, f"haystack_session_ids[{i}]")
    listing = _listings(path, rec, qid, session_ids, sessions, data)
    missing = [sid for sid in answer_ids if sid not in set(session_ids)]
    if missing:
        raise InputError(path, f"answer session {missing[0]!r} is not in the haystack", rec, "answer_session_ids")
    try:
        question_date = longmemeval_date(date_text)
    except ValueError as err:
        raise InputError(path, str(err), rec, "question_date") from None

    is_abs = qid.endswith("_abs")
    if is_abs:
        data.log.note("abstention_question", "kept", "abstention question (`_abs`): no evidence to find; "
                      "skipped in retrieval averages", qid)
    answer_set = set(answer_ids)
    evidence_turns = 0
    for position, (listed, date, turns) in enumerate(zip(session_ids, dates, sessions)):
        sid = repeat_id(listed, listing[position])
        field = f"haystack_sessions[{position}]"
        expect(turns, list, path, rec, field)
        expect(date, str, path, rec, f"haystack_dates[{position}]")
        try:
            session_date = longmemeval_date(date)
        except ValueError as err:
            raise InputError(path, str(err), rec, f"haystack_dates[{position}]") from None
        events, flags = [], []
        for t, turn in enumerate(turns):
            tfield = f"{field}[{t}]"
            expect(turn, dict, path, rec, tfield)
            role = get(turn, "role", str, path, rec, f"{tfield}.")
            if role not in ("user", "assistant"):
                raise InputError(path, f"role must be 'user' or 'assistant', got {role!r}", rec, f"{tfield}.role")
            content = get(turn, "content", str, path, rec, f"{tfield}.")
            flags.append(bool(get(turn, "has_answer", bool, path, rec, f"{tfield}.", optional=True, default=False)))
            events.append({"kind": "turn", "role": role, "speaker": role, "text": content})
        key, new = keys.key(sid, session_date, events)
        data.haystacks.append({"haystack_id": qid, "position": position, "session_key": key})
        if new:
            for t, event in enumerate(events):
                data.turns.append({"session_key": key, "session_id": sid, "session_date": session_date,
                                   "conversation_id": None, "turn_index": t, "item_id": f"{sid}_{t + 1}",
                                   "caption": None, "state": None, "action": None, **event})
        user_hits = [t for t, (e, f) in enumerate(zip(events, flags)) if f and e["role"] == "user"]
        if listed not in answer_set:
            if any(flags):
                data.log.note("has_answer_outside_answer_session", "dropped",
                              "has_answer turn outside answer_session_ids: not evidence", f"{qid}: {sid}")
            continue
        if not user_hits:
            data.log.note("answer_session_without_user_evidence", "dropped",
                          "answer session with no user has_answer turn: not relevant (upstream rule)", f"{qid}: {sid}")
            continue
        if len(user_hits) < sum(flags):
            data.log.note("assistant_has_answer", "dropped", "has_answer on an assistant turn: not a turn-level "
                          "evidence item (upstream indexes user turns only)", f"{qid}: {sid}",
                          count=sum(flags) - len(user_hits))
        data.qrels.append({"question_id": qid, "item_id": sid, "granularity": "session", "relevance": 1.0})
        for t in user_hits:
            data.qrels.append({"question_id": qid, "item_id": f"{sid}_{t + 1}", "granularity": "turn",
                               "relevance": 1.0})
        evidence_turns += len(user_hits)
    if not evidence_turns and not is_abs:
        data.log.note("question_without_user_evidence", "flagged",
                      "non-abstention question with no user-side evidence turn: skipped in averages", qid)
    data.questions.append({
        "question_id": qid, "index": index, "split": split_of(index), "question": question,
        "question_date": question_date, "question_type": qtype, "category": None, "tier": None,
        "answer": answer, "adversarial_answer": None, "is_abstention": is_abs, "haystack_id": qid,
        "gold_issue": "abstention" if is_abs else ("no_target" if not evidence_turns else None),
    })


def _listings(path: Path, rec: str, qid: str, session_ids: list[str], sessions: list, data: ParsedDataset) -> list[int]:
    """Which listing of its session each haystack position is (1, 2, ...); a session listed again must have the
    same turns (its date may differ), else the file does not say which listing is the session."""
    first: dict[str, int] = {}
    seen: dict[str, int] = {}
    out = []
    for position, sid in enumerate(session_ids):
        seen[sid] = seen.get(sid, 0) + 1
        out.append(seen[sid])
        if sid not in first:
            first[sid] = position
        elif sessions[position] != sessions[first[sid]]:
            raise InputError(path, f"session {sid!r} is listed again with other turns (positions {first[sid]} and "
                             f"{position}): a repeated session must repeat the same turns", rec,
                             f"haystack_sessions[{position}]")
    repeated = sorted(sid for sid, n in seen.items() if n > 1)
    if repeated:
        data.log.note("repeated_haystack_session", "kept",
                      "question whose haystack lists a session more than once (same turns): each listing is a "
                      "corpus entry of its own, as upstream builds it, named <id>#<n> from the second on",
                      f"{qid}: {', '.join(repeated)}")
    return out
