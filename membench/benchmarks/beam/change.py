"""Measures of change on BEAM's role-named gold: does a system find what changed, not only what was said.

Each measure reads one question's ranked messages (best first, repeats after the first dropped) and its gold roles
(`membench.benchmarks.beam.parse`). A side or an event that names several messages is *found in the top k* when any
of its messages is there; its *rank* is that of its best-ranked message (infinite when none was retrieved).

- **Knowledge update** (`original_info` -> `updated_info`):
  - ``fresh@k`` = 1 when the update is in the top k and ranked above the original (which may be missing);
  - ``stale@k`` = 1 when the original is in the top k and the update is not: the answer an agent would give is the
    outdated one, the failure a memory system exists to avoid. Lower is better.
- **Contradiction** (`first_statement`, `second_statement`): ``both_sides@k`` = 1 when both statements are in the
  top k; ``one_side@k`` = 1 when exactly one is (the system hides the conflict). Lower is better for the second.
- **Temporal reasoning** (`first_event`, `second_event`): ``both_events@k`` = 1 when both are in the top k.
- **Event ordering** (an ordered list, the gold order of mention): ``all_events@k`` = 1 when every event is in the
  top k; ``event_recall@k`` = the share that is; ``order_tau@k`` = Kendall's tau-b between the gold order of the
  events found in the top k and the order in which they appear in the conversation (each at its earliest found
  message): 1 when the conversation order of what was found agrees with the gold order, -1 when reversed. It needs
  two events found; a question with fewer has no ``order_tau@k`` row at that k.

Cases a measure cannot use as given are not scored by it (the question still has its recall rows) and are counted
by `coverage`: two sides naming the same messages (nothing distinguishes an update from its original), a side with
no messages (null or empty), an ordering with fewer than two events. The gold order of mention is not always the
order in the conversation (`coverage` counts those too), so a perfect system does not always reach tau = 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


from membench.benchmarks.beam.metrics import KS
from membench.metrics.trec import dedupe

PAIRS = {"knowledge_update": ("original_info", "updated_info"),
         "contradiction_resolution": ("first_statement", "second_statement"),
         "temporal_reasoning": ("first_event", "second_event")}
ORDERING = "event_ordering"
EVENT = "event"
PREFIX = "change/"
INF = math.inf


def roles_of(rows: Iterable[tuple[str, str, int, str]]) -> dict[str, dict[str, list]]:
    """(question, role, group, message) rows -> question -> role -> its messages; for an ordering, "event" -> its
    events in gold order, each its messages."""
    out: dict[str, dict[str, list]] = {}
    for qid, role, group, item in rows:
        mine = out.setdefault(qid, {})
        if role == EVENT:
            mine.setdefault(EVENT, {}).setdefault(int(group), []).append(item)
        else:
            mine.setdefault(role, []).append(item)
    for mine in out.values():
        if EVENT in mine:
            mine[EVENT] = [mine[EVENT][g] for g in sorted(mine[EVENT])]
    return out


def ranks(ranked: Sequence[str]) -> dict[str, int]:
    """item -> its 1-based rank, repeats after the first dropped."""
    return {item: r for r, item in enumerate(dedupe(ranked), start=1)}


def best_rank(items: Sequence[str], rank: Mapping[str, int]) -> float:
    return min((rank[i] for i in items if i in rank), default=INF)


def pair_measures(ability: str, sides: Mapping[str, Sequence[str]], rank: Mapping[str, int],
                  ks: Sequence[int] = KS) -> dict[str, float]:
    """The measures of a two-sided question (knowledge update, contradiction, temporal reasoning)."""
    before, after = (best_rank(sides.get(role, ()), rank) for role in PAIRS[ability])
    out: dict[str, float] = {}
    for k in ks:
        if ability == "knowledge_update":
            out[f"{PREFIX}fresh@{k}"] = float(after <= k and after < before)
            out[f"{PREFIX}stale@{k}"] = float(before <= k < after)
        elif ability == "contradiction_resolution":
            out[f"{PREFIX}both_sides@{k}"] = float(before <= k and after <= k)
            out[f"{PREFIX}one_side@{k}"] = float((before <= k) != (after <= k))
        else:
            out[f"{PREFIX}both_events@{k}"] = float(before <= k and after <= k)
    return out


def ordering_measures(events: Sequence[Sequence[str]], rank: Mapping[str, int], position: Mapping[str, int],
                      ks: Sequence[int] = KS) -> dict[str, float]:
    """The measures of an event ordering: `events` in gold order, each its messages; `position` is each message's
    place in the conversation."""
    out: dict[str, float] = {}
    for k in ks:
        found = [(g, min(position[i] for i in event if rank.get(i, INF) <= k))
                 for g, event in enumerate(events) if best_rank(event, rank) <= k]
        out[f"{PREFIX}all_events@{k}"] = float(len(found) == len(events))
        out[f"{PREFIX}event_recall@{k}"] = len(found) / len(events)
        if len(found) >= 2:
            out[f"{PREFIX}order_tau@{k}"] = tau_b([g for g, _ in found], [p for _, p in found])
    return out


def tau_b(gold: Sequence[int], found: Sequence[int]) -> float:
    """Kendall's tau-b of two orderings of the same events; 0 where one ordering is constant. The formula and the
    order of its float operations are scipy.stats.kendalltau(variant="b")'s, so the figure is the same to the bit
    (tests/test_beam.py compares them), counted pair by pair: a question orders a handful of events, and importing
    scipy.stats would cost each BEAM score job ~0.9 s."""
    pairs = len(gold) * (len(gold) - 1) // 2
    balance = gold_ties = found_ties = 0  # balance: concordant minus discordant pairs
    for i, (g, f) in enumerate(zip(gold, found)):
        for g2, f2 in zip(gold[i + 1:], found[i + 1:]):
            by_gold, by_found = (g > g2) - (g < g2), (f > f2) - (f < f2)
            gold_ties += by_gold == 0
            found_ties += by_found == 0
            balance += by_gold * by_found
    if pairs == 0 or gold_ties == pairs or found_ties == pairs:
        return 0.0
    return min(1.0, max(-1.0, balance / math.sqrt(pairs - gold_ties) / math.sqrt(pairs - found_ties)))


def usable_sides(ability: str, sides: Mapping[str, Sequence[str]]) -> str | None:
    """Why a two-sided question cannot be measured (`side_empty`, `sides_equal`), or None."""
    first, second = (list(sides.get(role, ())) for role in PAIRS[ability])
    if not first or not second:
        return "side_empty"
    if set(first) == set(second):
        return "sides_equal"
    return None


def coverage(questions: Sequence[Mapping], roles: Mapping[str, Mapping[str, list]],
             positions: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """Per ability with a measure of change: its questions, how many its measures score, and why the rest are not
    (`roles`: as `roles_of` gives them; `positions`: haystack -> message -> place in the conversation)."""
    out: dict[str, dict[str, int]] = {}
    for q in questions:
        ability, qid = q["question_type"], q["question_id"]
        if ability not in PAIRS and ability != ORDERING:
            continue
        row = out.setdefault(ability, {"questions": 0, "scored": 0})
        row["questions"] += 1
        mine = roles.get(qid)
        if not mine:
            reason = "no_source_ids"
        elif ability == ORDERING:
            events = mine.get(EVENT, [])
            reason = None if len(events) >= 2 else "fewer_than_two_events"
            if reason is None:
                place = [min(positions[q["haystack_id"]][i] for i in event) for event in events]
                row["gold_order_not_conversation_order"] = row.get("gold_order_not_conversation_order", 0) + int(
                    place != sorted(place))
        else:
            reason = usable_sides(ability, mine)
        if reason:
            row[reason] = row.get(reason, 0) + 1
        else:
            row["scored"] += 1
    return out
