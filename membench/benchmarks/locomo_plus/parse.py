"""LoCoMo-Plus (xjtuleeyf/Locomo-Plus): 401 cue/trigger pairs, each stitched into a LoCoMo conversation. The trigger is
the question, and the cue dialogue, inserted as a session of its own, is the evidence to find.

An example is built as upstream builds one (`data/build_conv.py`, which `data/unified_input.py` calls):

1. one LoCoMo conversation is chosen for the item (see "Choices" for how);
2. each line of the cue dialogue and the trigger that starts with `A:` or `B:` is a turn; A is the conversation's
   `speaker_a`, B its `speaker_b`; a line starting with neither is dropped (none is, in the published file);
3. the trigger is dated 7 days after the conversation's last session, and the cue dialogue `time_gap` before the
   trigger (`gap_days`: the first "<number> week(s)/month(s)/year(s)" in the text, where a number is digits, one to
   twelve in words, or "a"/"an"; a week is 7 days, a month 30, a year 365; "about" and the like change nothing);
   the cue keeps the clock time of the last session;
4. the cue session goes among the conversation's sessions by date: after every session dated at or before it
   (upstream appends it after the sessions and sorts them stably by time). A gap longer than the conversation puts
   it first; a gap of a week or less puts it after the last session.

Each item is its own haystack: the chosen conversation's sessions and its cue session. The LoCoMo sessions keep
their content keys, so the 401 haystacks share them: the turns table holds LoCoMo's turns once plus the cue turns.
A LoCoMo turn keeps its dia_id (`D<session>:<turn>`); a cue turn is `<question id>/cue:<n>`, 1-based. Gold is every
turn of the cue dialogue. The question is category 6, "cognitive" (upstream's sixth category, "Cognitive"); it has
no reference answer (upstream's judge grades an answer against the cue dialogue). Its relation type (causal, state,
goal, value) starts its question id (`causal-0`, `goal-201`: the type and the item's index in `locomo_plus.json`)
and is counted; the `tier` column stays empty.

Choices where upstream leaves it open, each counted in `counts`:

- Which conversation. `build_conv.py` draws it with an unseeded `random.choice`, so its placements differ run to
  run (`unified_input.py`, the README's quick start, takes conversation `i % 10` instead). Here each item, in file
  order, draws with `random.Random(seed).choice` over the conversations in file order; `seed` is the dataset's
  config key `seed` (default 0). The same seed and files give the same examples on every machine.
- A gap the rule in 3 cannot read ("several months later", "a few weeks later", "a couple of months later"):
  upstream's parser returns 0 days for it, which dates the cue at the trigger's own time, after every session.
  Kept as upstream has it (so the examples are upstream's), flagged in the normalisation log and counted
  (`time_gaps.unread`).
- The question text: the trigger's lines with their speakers named, `<speaker>: <text>`, one per line (upstream
  asks the raw `A: ...` text with the stitched dialogue before it, where the trigger is `<speaker> said, ...`).
- A cue line holding both speakers: 44 cue dialogues put B's reply on A's line (31 after a literal backslash-n,
  13 after a space). Upstream reads such a line as one turn of A, text and all, and so does this parser, so the
  examples are upstream's; flagged and counted (`cue_lines_with_both_speakers`). Their gold is that one turn.
- The trigger itself is the question, not a session of the haystack (upstream stitches it in as the last session
  of the dialogue it gives the model): a system searching its memory for the trigger would otherwise find it.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from membench.benchmarks.locomo import parse as locomo
from membench.datasets.fields import expect, get, load_json, nonempty_str
from membench.datasets.session_keys import SessionKeys
from membench.datasets.tables import ParsedDataset, split_of
from membench.errors import InputError

KIND = "locomo-plus"
FILE_NAME = "locomo_plus.json"
# where the two files are in a dataset folder: side by side (upstream's `data/`, a download), or each in its own
# folder (the layout of ../shared/data: locomo-plus/locomo_plus.json, locomo/locomo10.json)
LAYOUTS = ((Path(FILE_NAME), Path(locomo.FILE_NAME)),
           (Path("locomo-plus") / FILE_NAME, Path("locomo") / locomo.FILE_NAME))
CATEGORY = 6
QUESTION_TYPE = "cognitive"
RELATION_TYPES = ("causal", "state", "goal", "value")
TRIGGER_DELAY = timedelta(days=7)  # the trigger's date after the conversation's last session
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_UNIT_DAYS = {"week": 7, "month": 30, "year": 365}
_GAP = re.compile(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")\b\s*(week|month|year)s?\b")
_LINE = re.compile(r"([AB]):(.*)")
_TAG_INSIDE = re.compile(r"(?:\\n|\s)[AB]:")  # a speaker tag inside a line's text, after a literal "\n" or a space


def find_files(source: Path) -> tuple[Path, Path]:
    """(locomo_plus.json, locomo10.json) in a dataset folder, in either layout of `LAYOUTS`."""
    source = Path(source)
    if not source.is_dir():
        raise InputError(source, f"a LoCoMo-Plus dataset is a folder holding {FILE_NAME} and LoCoMo's "
                                 f"{locomo.FILE_NAME} (side by side, or in locomo-plus/ and locomo/)")
    for plus, conversations in LAYOUTS:
        if (source / plus).is_file():
            if not (source / conversations).is_file():
                raise InputError(source / conversations, f"LoCoMo file not found beside {plus}")
            return source / plus, source / conversations
    raise InputError(source / FILE_NAME, "LoCoMo-Plus file not found in the dataset folder (nor in locomo-plus/)")


def files_read(source: Path) -> tuple[Path, ...]:
    return find_files(source)


def gap_days(time_gap: str) -> int | None:
    """Days between cue and trigger as upstream reads `time_gap` (module docstring, step 3); None where it reads
    no number of weeks, months or years (upstream then takes 0 days)."""
    m = _GAP.search(time_gap.lower().strip())
    if m is None:
        return None
    number, unit = m.groups()
    count = int(number) if number.isdigit() else _NUMBER_WORDS[number]
    return count * _UNIT_DAYS[unit]


def dialogue_lines(text: str) -> tuple[list[tuple[str, str]], int]:
    """The `A:`/`B:` lines of a dialogue as (A or B, text stripped), and how many other non-blank lines were dropped."""
    lines, dropped = [], 0
    for line in text.split("\n"):
        m = _LINE.match(line.strip())
        if m:
            lines.append((m.group(1), m.group(2).strip()))
        elif line.strip():
            dropped += 1
    return lines, dropped


def placement(session_dates: list[str], time_gap: str) -> tuple[int, str, str]:
    """(the cue session's position among the conversation's sessions, its date, the trigger's date): dates are ISO
    8601, the sessions' in conversation order (module docstring, steps 3-4)."""
    trigger = datetime.fromisoformat(session_dates[-1]) + TRIGGER_DELAY
    cue = trigger - timedelta(days=gap_days(time_gap) or 0)
    position = sum(1 for d in session_dates if datetime.fromisoformat(d) <= cue)
    return position, cue.isoformat(), trigger.isoformat()


@dataclass(frozen=True)
class _Conversation:
    """A LoCoMo conversation as the examples use it: its speakers and its sessions (content key, date) in order."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[tuple[str, str]]

    def speaker(self, side: str) -> str:
        """A line's speaker: A is `speaker_a`, any other `speaker_b` (as upstream's `map_speaker`)."""
        return self.speaker_a if side == "A" else self.speaker_b


def parse(source: Path, seed: int = 0) -> ParsedDataset:
    plus_path, locomo_path = find_files(source)
    items = expect(load_json(plus_path), list, plus_path, None, None)
    if not items:
        raise InputError(plus_path, "the file holds no items")
    base = locomo.parse(locomo_path)  # LoCoMo's sessions and turns, checked as the LoCoMo benchmark checks them
    conversations = _conversations(locomo_path, base)
    data = ParsedDataset(KIND)
    for entry in base.log.as_list():
        if entry["code"] == "date_key_without_session":  # its other notes are about its QA, unused here
            data.log.note(entry["code"], entry["action"], entry["description"], entry["examples"][0], entry["count"])
    keys = SessionKeys()
    for turns in _sessions_of(base.turns).values():  # LoCoMo's keys first, so that no cue session can take one
        keys.key(turns[0]["session_id"], turns[0]["session_date"], turns)
    rng = random.Random(seed)
    chosen = [rng.choice(conversations) for _ in items]
    tally: dict[str, Counter] = {name: Counter() for name in ("relation", "position", "cue_turns", "unread")}
    for index, (item, conv) in enumerate(zip(items, chosen)):
        _example(plus_path, index, item, conv, data, keys, tally)
    used = {c.sample_id for c in chosen}
    locomo_turns = [t for t in base.turns if t["conversation_id"] in used]
    data.turns = locomo_turns + data.turns
    data.counts = {
        "seed": seed,
        "items": len(items),
        "questions": len(data.questions),
        "haystacks": len({h["haystack_id"] for h in data.haystacks}),
        "haystack_sessions": len(data.haystacks),
        "conversations": len(conversations),
        "questions_by_conversation": {c.sample_id: sum(x is c for x in chosen) for c in conversations},
        "questions_by_relation_type": {r: tally["relation"][r] for r in sorted(tally["relation"])},
        "cue_turns": sum(n * k for n, k in tally["cue_turns"].items()),
        "items_by_cue_turns": {str(n): tally["cue_turns"][n] for n in sorted(tally["cue_turns"])},
        "cue_lines_with_both_speakers": data.log.count("cue_lines_with_both_speakers"),
        "cue_position": {p: tally["position"][p] for p in ("first", "between", "last")},
        "time_gaps": {"read": len(items) - sum(tally["unread"].values()), "unread": sum(tally["unread"].values()),
                      "unread_values": dict(sorted(tally["unread"].items()))},
        "sessions": len({t["session_key"] for t in data.turns}),
        "turns": len(data.turns),
        "locomo_turns": len(locomo_turns),
        "evidence_items": len(data.qrels),
    }
    return data


def _sessions_of(turns: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """session_key -> its turn rows, in table order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for t in turns:
        out.setdefault(t["session_key"], []).append(t)
    return out


def _conversations(path: Path, base: ParsedDataset) -> list[_Conversation]:
    """LoCoMo's conversations in file order, with their speakers and their sessions' keys and dates."""
    dates = {t["session_key"]: t["session_date"] for t in base.turns}
    sessions: dict[str, list[tuple[str, str]]] = {}
    for h in sorted(base.haystacks, key=lambda h: h["position"]):
        sessions.setdefault(h["haystack_id"], []).append((h["session_key"], dates[h["session_key"]]))
    out = []
    for sample in load_json(path):
        sample_id = sample["sample_id"]  # checked by the LoCoMo parse
        rec = f"sample_id={sample_id}"
        conv = get(sample, "conversation", dict, path, rec)
        speakers = [nonempty_str(conv, k, path, rec, "conversation.") for k in ("speaker_a", "speaker_b")]
        out.append(_Conversation(sample_id, *speakers, sessions[sample_id]))
    return out


def _example(path: Path, index: int, item: Any, conv: _Conversation, data: ParsedDataset, keys: SessionKeys,
             tally: dict[str, Counter]) -> None:
    """One item as its own haystack and question (module docstring)."""
    rec = f"item #{index}"
    expect(item, dict, path, rec, None)
    relation = nonempty_str(item, "relation_type", path, rec)
    if relation not in RELATION_TYPES:
        data.log.note("unknown_relation_type", "kept", f"relation_type other than {', '.join(RELATION_TYPES)}",
                      f"#{index}: {relation!r}")
    qid = f"{relation}-{index}"
    time_gap = nonempty_str(item, "time_gap", path, rec)
    cue = _turns(path, rec, "cue_dialogue", nonempty_str(item, "cue_dialogue", path, rec), conv, qid, data)
    trigger = _turns(path, rec, "trigger_query", nonempty_str(item, "trigger_query", path, rec), conv, qid, data)
    if gap_days(time_gap) is None:
        data.log.note("time_gap_unread", "flagged", "time_gap names no number of weeks, months or years: the cue is "
                      "dated at the trigger's time (0 days before it), as upstream's parser has it",
                      f"{qid}: {time_gap!r}")
        tally["unread"][time_gap] += 1
    position, cue_date, trigger_date = placement([d for _, d in conv.sessions], time_gap)
    tally["position"]["first" if position == 0 else "last" if position == len(conv.sessions) else "between"] += 1
    tally["relation"][relation] += 1
    tally["cue_turns"][len(cue)] += 1
    session_id = f"{qid}/cue"
    events = [{"kind": "turn", "role": speaker, "speaker": speaker, "text": text, "caption": None}
              for speaker, text in cue]
    key, new = keys.key(session_id, cue_date, events)
    order = [k for k, _ in conv.sessions]
    order.insert(position, key)
    data.haystacks += [{"haystack_id": qid, "position": p, "session_key": k} for p, k in enumerate(order)]
    items = [f"{session_id}:{n}" for n in range(1, len(events) + 1)]
    if new:
        data.turns += [{"session_key": key, "session_id": session_id, "session_date": cue_date,
                        "conversation_id": conv.sample_id, "turn_index": t, "item_id": item_id, "state": None,
                        "action": None, **event} for t, (item_id, event) in enumerate(zip(items, events))]
    data.questions.append({
        "question_id": qid, "index": index, "split": split_of(index),
        "question": "\n".join(f"{speaker}: {text}" for speaker, text in trigger), "question_date": trigger_date,
        "question_type": QUESTION_TYPE, "category": CATEGORY, "tier": None, "answer": None,
        "adversarial_answer": None, "is_abstention": False, "haystack_id": qid, "gold_issue": None,
        "conversation_id": conv.sample_id})
    data.qrels += [{"question_id": qid, "item_id": i, "granularity": "turn", "relevance": 1.0} for i in items]


def _turns(path: Path, rec: str, field: str, text: str, conv: _Conversation, qid: str,
           data: ParsedDataset) -> list[tuple[str, str]]:
    """A dialogue's lines as (speaker name, text), A and B mapped to the conversation's speakers."""
    lines, dropped = dialogue_lines(text)
    if dropped:
        data.log.note("dialogue_line_dropped", "dropped", "a line starting with neither 'A:' nor 'B:' (upstream "
                      "drops it too)", f"{qid}: {field}", dropped)
    if not lines:
        raise InputError(path, "no line starts with 'A:' or 'B:'", rec, field)
    both = sum(1 for _, line in lines if _TAG_INSIDE.search(line))
    if both:
        code = "cue_lines_with_both_speakers" if field == "cue_dialogue" else "trigger_lines_with_both_speakers"
        data.log.note(code, "flagged", "a line whose text holds a speaker tag too (after a literal backslash-n or a "
                      "space): one turn of its first speaker, as upstream reads it", f"{qid}: {field}", both)
    return [(conv.speaker(side), line) for side, line in lines]
