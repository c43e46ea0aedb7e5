"""BEAM: recall at message and batch level for every question with gold ids, and the measures of change for the
abilities whose gold names roles (`membench.benchmarks.beam.change`). A question without ids (abstention, a few empty
lists) is left out under its parser's reason; one a measure of change cannot use is scored on recall only."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from membench.benchmarks.beam import change, metrics
from membench.scoring.tables import Gold, frame, gold_rows, ranked_lists

GRANULARITIES = ("turn", "session")


def conversation_positions(gold: Gold) -> dict[str, dict[str, int]]:
    """haystack -> message -> its place in the chat (batch order, then message order)."""
    out: dict[str, dict[str, int]] = {}
    for haystack, keys in gold.haystack_sessions.items():
        place = out.setdefault(haystack, {})
        for key in keys:
            for _, _, _, item in gold.turn_rows.get(key, []):
                place.setdefault(item, len(place))
    return out


def change_rows(q: Mapping, mine: Mapping[str, list], ranked: list[str], place: Mapping[str, int]) -> dict[str, float]:
    """The question's measures of change, where its ability has one and its gold can be used."""
    ability = q["question_type"]
    rank = change.ranks(ranked)
    if ability in change.PAIRS and change.usable_sides(ability, mine) is None:
        return change.pair_measures(ability, mine, rank)
    if ability == change.ORDERING and len(mine.get(change.EVENT, [])) >= 2:
        return change.ordering_measures(mine[change.EVENT], rank, place)
    return {}


def score(run: pd.DataFrame, gold: Gold) -> pd.DataFrame:
    present = [g for g in GRANULARITIES if (run.granularity == g).any()]
    ranked = {g: ranked_lists(run, g) for g in present}
    qrels = {g: gold.qrels_by_question(g) for g in present}
    roles = {} if gold.roles is None else change.roles_of(
        zip(gold.roles.question_id, gold.roles.role, gold.roles.group, gold.roles.item_id))
    positions = conversation_positions(gold)
    rows = []
    for q in gold.questions.to_dict("records"):
        qid = q["question_id"]
        values: dict[str, float] = {}
        for g in present:
            values.update(metrics.question_rows(g, ranked[g].get(qid, []), qrels[g].get(qid, {})))
        has_gold = bool(qrels["turn"].get(qid)) if "turn" in qrels else bool(qrels[present[0]].get(qid))
        if has_gold and "turn" in ranked:
            values.update(change_rows(q, roles.get(qid, {}), ranked["turn"].get(qid, []),
                                      positions.get(q["haystack_id"], {})))
        rows += gold_rows(q, values, has_gold)
    return frame(rows)
