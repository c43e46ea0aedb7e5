"""BEAM (mohammadtavakoli78/BEAM, "Beyond a Million Tokens"): long user-assistant chats, 20 probing questions each.

A size's folder (`100K`, `500K`) holds one folder per chat: its chat file and
`probing_questions/probing_questions.json`. Each chat is a haystack, each batch a session (dated by the time anchor
its first message carries), each message an item (user and assistant alike; its `id`, unique in its chat, is what
the gold names). The chat file is chosen as upstream's answering code chooses it: `chat_trunecated.json` (upstream's
spelling) where it exists, else `chat.json`.

Gold is a question's `source_chat_ids`: absent or null (abstention: nothing to find), a list (an event ordering's is
in the gold order of mention; an entry may itself be a list, one event named by several messages), or named lists
(knowledge_update `original_info`/`updated_info`, contradiction_resolution `first_statement`/`second_statement`,
temporal_reasoning `first_event`/`second_event`). Every id it names is relevant (qrels); the roles go to the
`gold_roles` table, which the measures of change read (`membench.benchmarks.beam.change`). Questions without ids
are left out of retrieval scoring and counted; the cases a measure of change cannot use as given (both sides naming
the same ids, an empty side, a repeated event) are kept in the roles and counted here, each by its own note.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from membench.benchmarks.beam import change
from membench.datasets.fields import expect, get, load_json, nonempty_str
from membench.datasets.session_keys import SessionKeys
from membench.datasets.tables import ParsedDataset, split_of
from membench.errors import InputError

KIND = "beam"
CHAT_FILES = ("chat_trunecated.json", "chat.json")  # upstream's choice, first found wins
QUESTIONS_FILE = Path("probing_questions") / "probing_questions.json"
ABILITIES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction",
             "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
             "summarization", "temporal_reasoning")
# the named lists of `source_chat_ids`, by ability, in the order the measures of change read them (before, after)
ROLES = {"knowledge_update": ("original_info", "updated_info"),
         "contradiction_resolution": ("first_statement", "second_statement"),
         "temporal_reasoning": ("first_event", "second_event")}
ANSWER_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary")
GOLD_ISSUES = ("no_source_ids", "empty_source_ids")
EVENT = "event"  # the role of each entry of an ordered list
_CHAT = re.compile(r"\d+")


def chat_folders(source: Path) -> list[Path]:
    """The chat folders of a size's folder, in chat number order."""
    if not source.is_dir():
        raise InputError(source, "a BEAM dataset is a folder of numbered chat folders (e.g. BEAM's chats/100K)")
    folders = sorted((p for p in source.iterdir() if p.is_dir() and _CHAT.fullmatch(p.name)), key=lambda p: int(p.name))
    if not folders:
        raise InputError(source, "no numbered chat folders in the dataset folder")
    return folders


def chat_file(folder: Path) -> Path:
    for name in CHAT_FILES:
        if (folder / name).is_file():
            return folder / name
    raise InputError(folder / CHAT_FILES[-1], "chat file not found in the chat folder")


def files_read(source: Path) -> tuple[Path, ...]:
    """The files parsing reads: each chat's chosen chat file and its probing questions."""
    return tuple(p for folder in chat_folders(source) for p in (chat_file(folder), folder / QUESTIONS_FILE))


def anchor_date(text: str, path: Path, record: str, field: str) -> str:
    """BEAM's time anchor ('March-15-2024') as ISO 8601."""
    try:
        return datetime.strptime(text, "%B-%d-%Y").isoformat()
    except ValueError:
        raise InputError(path, f"expected a time anchor like 'March-15-2024', got {text!r}", record, field) from None


def parse(source: Path) -> ParsedDataset:
    data = ParsedDataset(KIND, gold_issues=GOLD_ISSUES)
    keys = SessionKeys()
    for folder in chat_folders(Path(source)):
        messages = _parse_chat(chat_file(folder), folder.name, data, keys)
        _parse_questions(folder / QUESTIONS_FILE, folder.name, messages, data)
    positions: dict[str, dict[str, int]] = {}
    for t in data.turns:  # chats, batches and messages in order
        place = positions.setdefault(t["conversation_id"], {})
        place[t["item_id"]] = len(place)
    roles = change.roles_of((r["question_id"], r["role"], r["group"], r["item_id"]) for r in data.gold_roles)
    data.counts.update(chats=len(positions), sessions=len(data.haystacks), messages=len(data.turns),
                       questions=len(data.questions),
                       questions_with_gold=sum(1 for q in data.questions if not q["gold_issue"]),
                       gold_messages=sum(1 for r in data.qrels if r["granularity"] == "turn"),
                       change=change.coverage(data.questions, roles, positions))
    return data


def _parse_chat(path: Path, chat: str, data: ParsedDataset, keys: SessionKeys) -> set[str]:
    """The chat's batches as sessions and its messages as turns; returns the message ids."""
    batches = expect(load_json(path), list, path, None, None)
    if not batches:
        raise InputError(path, "the chat holds no batches", f"chat {chat}")
    if path.name == CHAT_FILES[0]:
        data.log.note("truncated_chat_file", "kept", "chat read from chat_trunecated.json, as upstream's answering "
                      "code reads it where it exists", f"chat {chat}")
    ids: set[str] = set()
    for position, batch in enumerate(batches):
        rec = f"chat {chat}, batch [{position}]"
        expect(batch, dict, path, rec, None)
        number = get(batch, "batch_number", int, path, rec)
        events, date = [], None
        for t, turn in enumerate(get(batch, "turns", list, path, rec)):
            for m, message in enumerate(expect(turn, list, path, rec, f"turns[{t}]")):
                field = f"turns[{t}][{m}]"
                expect(message, dict, path, rec, field)
                role = get(message, "role", str, path, rec, f"{field}.")
                if role not in ("user", "assistant"):
                    raise InputError(path, f"role must be user or assistant, got {role!r}", rec, f"{field}.role")
                message_id = str(get(message, "id", int, path, rec, f"{field}."))
                if message_id in ids:
                    raise InputError(path, f"message id {message_id} appears twice in the chat", rec, f"{field}.id")
                ids.add(message_id)
                anchor = get(message, "time_anchor", str, path, rec, f"{field}.", optional=True)
                if anchor and date is None:
                    date = anchor_date(anchor, path, rec, f"{field}.time_anchor")
                events.append({"kind": "turn", "role": role, "speaker": role, "caption": None,
                               "text": get(message, "content", str, path, rec, f"{field}."), "item_id": message_id})
        if not events:
            raise InputError(path, "batch has no messages", rec, "turns")
        session_id = f"{chat}/batch_{number}"
        key, new = keys.key(session_id, date, [{k: e[k] for k in e if k != "item_id"} for e in events])
        data.haystacks.append({"haystack_id": chat, "position": position, "session_key": key})
        if new:
            for t, event in enumerate(events):
                data.turns.append({"session_key": key, "session_id": session_id, "session_date": date,
                                   "conversation_id": chat, "turn_index": t, "state": None, "action": None, **event})
    return ids


def _parse_questions(path: Path, chat: str, messages: set[str], data: ParsedDataset) -> None:
    by_ability = expect(load_json(path), dict, path, None, None)
    unknown = sorted(set(by_ability) - set(ABILITIES))
    if unknown:
        raise InputError(path, f"unknown abilities {unknown}; BEAM has {', '.join(ABILITIES)}", f"chat {chat}")
    sessions = {t["item_id"]: t["session_id"] for t in data.turns if t["conversation_id"] == chat}
    for ability in ABILITIES:
        for i, question in enumerate(get(by_ability, ability, list, path, f"chat {chat}", optional=True) or []):
            qid = f"{chat}/{ability}/{i}"
            rec = f"question_id={qid}"
            expect(question, dict, path, rec, None)
            answer = next((question[f] for f in ANSWER_FIELDS if question.get(f) is not None), None)
            index = len(data.questions)
            roles = _gold(path, rec, qid, ability, question.get("source_chat_ids"), messages, data)
            issue = None
            if "source_chat_ids" not in question or question["source_chat_ids"] is None:
                issue = "no_source_ids"
            elif not roles:
                issue = "empty_source_ids"
            data.questions.append({
                "question_id": qid, "index": index, "split": split_of(index),
                "question": nonempty_str(question, "question", path, rec), "question_date": None,
                "question_type": ability, "category": None, "tier": None,
                "answer": None if answer is None else str(answer), "adversarial_answer": None,
                "is_abstention": ability == "abstention", "haystack_id": chat, "gold_issue": issue})
            items = list(dict.fromkeys(item for _, _, item in roles))
            for item in items:
                data.qrels.append({"question_id": qid, "item_id": item, "granularity": "turn", "relevance": 1.0})
            for session in dict.fromkeys(sessions[item] for item in items):
                data.qrels.append({"question_id": qid, "item_id": session, "granularity": "session",
                                   "relevance": 1.0})
            data.gold_roles += [{"question_id": qid, "role": role, "group": group, "item_id": item}
                                for role, group, item in roles]
            rubric = question.get("rubric") or []
            data.rubrics += [{"question_id": qid, "position": n, "text": str(text)} for n, text in enumerate(rubric)]


def _gold(path: Path, rec: str, qid: str, ability: str, ids: Any, messages: set[str],
          data: ParsedDataset) -> list[tuple[str, int, str]]:
    """(role, group, message id) for every id the question's `source_chat_ids` names, in order."""
    if ids is None:
        return []
    if isinstance(ids, dict):
        named = ROLES.get(ability)
        if named is None or set(ids) != set(named):
            raise InputError(path, f"named source_chat_ids for {ability} must be {named}, got {sorted(ids)}", rec,
                             "source_chat_ids")
        sides = {}
        for role in named:
            side = ids[role]
            if side is None:
                data.log.note("source_side_null", "flagged", "a named side of source_chat_ids is null: no measure of "
                              "change for this question", f"{qid}: {role}")
                side = []
            sides[role] = [_message(path, rec, role, x, messages) for x in expect(side, list, path, rec, role)]
            if not side and ids[role] is not None:
                data.log.note("source_side_empty", "flagged", "a named side of source_chat_ids is empty: no measure "
                              "of change for this question", f"{qid}: {role}")
        if sides[named[0]] and set(sides[named[0]]) == set(sides[named[1]]):
            data.log.note("source_sides_equal", "flagged", "both named sides of source_chat_ids name the same "
                          "messages: no measure of change for this question", qid)
        return [(role, 0, item) for role in named for item in sides[role]]
    out: list[tuple[str, int, str]] = []
    seen: set[str] = set()
    for group, entry in enumerate(expect(ids, list, path, rec, "source_chat_ids")):
        entries = entry if isinstance(entry, list) else [entry]
        if isinstance(entry, list):
            data.log.note("nested_source_ids", "kept", "an entry of source_chat_ids is itself a list: one event "
                          "named by several messages", f"{qid}: {entry}")
        for x in entries:
            item = _message(path, rec, f"source_chat_ids[{group}]", x, messages)
            if item in seen:
                data.log.note("repeated_source_id", "kept", "a message id repeats in source_chat_ids: its first "
                              "place counts", f"{qid}: {item}")
                continue
            seen.add(item)
            out.append((EVENT, group, item))
    return out


def _message(path: Path, rec: str, field: str, value: Any, messages: set[str]) -> str:
    expect(value, int, path, rec, field)
    if str(value) not in messages:
        raise InputError(path, f"source id {value} names no message of the chat", rec, field)
    return str(value)
