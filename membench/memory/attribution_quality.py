"""How well attribution finds the sources of rewritten memories, where the sources are known.

LoCoMo ships, per session and speaker, facts written from the dialogue with the dia_ids they came from
(`observation`, 2,541 facts in locomo10.json; see `membench.facts.observations`): rewritten memories with
gold sources, and no model call to make them. Each fact is attributed (`membench.memory.attribution`) over every
turn of its conversation -- what a memory system's search scope holds -- and compared with its dia_ids:

- precision: of the (fact, turn) pairs attribution names, the share that are among the fact's sources;
- recall: of the (fact, source) pairs, the share attribution names;
- dropped: the share of facts attributed to no turn (a search result that would still be dropped).

Micro-averaged over facts. A dia_id that names no turn of the conversation (as `observation_facts` counts them) is
left out of the sources, and a fact with none left is not counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable, Sequence

from membench.benchmarks.locomo.dia_ids import split_dia_ids
from membench.memory.attribution import Attribution, ScopeTurns, attribute_in
from membench.sessions.view import turn_text


@dataclass(frozen=True)
class Case:
    """One rewritten memory with its known sources and the turns it may be attributed to."""

    conversation: str
    text: str
    sources: frozenset[str]
    turns: tuple[tuple[str, str], ...]  # (dia_id, turn text) of the whole conversation, in order


def locomo_observation_cases(locomo_json: Path, conversations: Iterable[str] | None = None) -> list[Case]:
    """LoCoMo's observations as cases (of the named conversations, or all), in file order."""
    wanted = set(conversations) if conversations is not None else None
    cases = []
    for sample in json.loads(Path(locomo_json).read_text(encoding="utf-8")):
        if wanted is not None and sample["sample_id"] not in wanted:
            continue
        talk = sample["conversation"]
        sessions = sorted((k for k in talk if k.startswith("session_") and isinstance(talk[k], list)),
                          key=lambda k: int(k.split("_")[1]))
        turns = tuple((t["dia_id"], turn_text(SimpleNamespace(text=t.get("text", ""), caption=t.get("blip_caption"))))
                      for key in sessions for t in talk[key])
        known = {dia for dia, _ in turns}
        for by_speaker in sample["observation"].values():
            for facts in by_speaker.values():
                for text, raw in facts:
                    sources = frozenset(split_dia_ids(raw)[0]) & known
                    if sources:
                        cases.append(Case(sample["sample_id"], text, sources, turns))
    return cases


def measure(cases: Sequence[Case], cache: Any, rule: Attribution) -> dict[str, Any]:
    """Precision, recall and the dropped share of `rule` over `cases` (module docstring), with their counts."""
    named = right = truth = dropped = exact = 0
    prepared: dict[int, ScopeTurns] = {}  # one per conversation (its cases share the turns tuple)
    for case in cases:
        scope = prepared.get(id(case.turns))
        if scope is None:
            scope = prepared[id(case.turns)] = ScopeTurns.of(case.turns, cache, rule)
        found = set(attribute_in(case.text, scope, cache, rule))
        named += len(found)
        right += len(found & case.sources)
        truth += len(case.sources)
        dropped += not found
        exact += found == case.sources
    return {"facts": len(cases), "sources": truth, "attributed_pairs": named, "correct_pairs": right,
            "precision": round(right / named, 4) if named else None, "recall": round(right / truth, 4),
            "dropped": round(dropped / len(cases), 4), "exact": round(exact / len(cases), 4)}
