"""LLM judge for the Procedural benchmark: grade retrieved trajectories that have no official label.

The benchmark's labels were pooled from at most 40 keyword-matched candidates per query, so a retrieved
trajectory without a label is *unjudged*, not irrelevant. The judge grades exactly those pairs -- the
top ``k`` of an adapter's run that carry no official label -- on the benchmark's own 0-10
procedural-similarity scale (upstream ``procedural_memory_benchmark/llm/llm_reasoner.py``: 8-10 same
goal with a complete procedure, 6-7 same goal partial procedure or large procedural overlap, 4-5 minor
overlap, 0-3 no transferable procedure; relevant = score >= 6). Upstream grades a batch of k
trajectories in one call; here each (query, trajectory) pair is its own call, so the same pair retrieved by
another adapter has an identical prompt and is a cache hit, never a second call.

The trajectory is shown as upstream formats it -- ``Task: <description>`` then ``Steps:`` and
``<i>. State: <state> -> Action: <action>`` lines -- with each state cut to ``max_state_chars`` (ALFWorld
room descriptions are long and repeat) and at most ``max_steps`` steps (the corpus has at most 35).

A reply must be ``{"score": <number 0-10>, "reason": str}``; anything else is malformed (re-asked once
with the reason, then a failure with score NaN). Judgments never replace official labels
(:mod:`membench.benchmarks.procedural.extended` keeps them apart).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from membench.llm.prompts import Prompt
from membench.llm.replies import MalformedReply, json_object_parser, wants_json

__all__ = ["JUDGMENT_COLUMNS", "unlabelled_pairs", "trajectory_texts", "grade_parser", "grade_messages"]

JUDGMENT_COLUMNS = {"question_id": "string", "item_id": "string", "rank": "int64", "score": "float64",
                    "status": "string", "model": "string", "reason": "string", "error": "string"}


def unlabelled_pairs(run: pd.DataFrame, labelled: Mapping[str, Mapping[str, float]], k: int) -> pd.DataFrame:
    """(question_id, item_id, rank) of the top-``k`` trajectories per question that carry no official label.

    Repeated items of a ranked list count once (their first rank), as in trec_eval.
    """
    part = run[run.granularity == "trajectory"] if "granularity" in run else run
    part = part.sort_values(["question_id", "rank"], kind="stable").drop_duplicates(["question_id", "item_id"])
    rows = []
    for qid, group in part.groupby("question_id", sort=False):
        labels = labelled.get(qid, {})
        for item, rank in zip(group.item_id.head(k), group["rank"].head(k)):
            if item not in labels:
                rows.append((qid, item, int(rank)))
    return pd.DataFrame(rows, columns=["question_id", "item_id", "rank"]).astype(
        {"question_id": "string", "item_id": "string", "rank": "int64"})


def _clip(text: str, limit: int | None) -> str:
    text = " ".join(str(text).split())
    if limit and len(text) > limit:
        return text[: max(0, limit - 1)].rstrip() + "…"
    return text


def trajectory_texts(turns: pd.DataFrame, max_state_chars: int | None = 300,
                     max_steps: int | None = 40) -> dict[str, str]:
    """Trajectory id -> the text the judge sees (task description + numbered State -> Action steps)."""
    out: dict[str, str] = {}
    for tid, group in turns.sort_values(["session_id", "turn_index"]).groupby("session_id", sort=False):
        task = group[group.kind == "task"]
        steps = group[group.kind == "step"]
        lines = [f"Task: {_clip(task.text.iloc[0], None) if len(task) else '(none)'}", "Steps:"]
        shown = steps if not max_steps else steps.head(max_steps)
        for i, (state, action) in enumerate(zip(shown.state, shown.action), 1):
            lines.append(f"{i}. State: {_clip(state or '', max_state_chars)} -> Action: {_clip(action or '', None)}")
        if len(steps) > len(shown):
            lines.append(f"... ({len(steps) - len(shown)} more steps not shown)")
        out[str(tid)] = "\n".join(lines)
    return out


def _check_grade(obj: dict) -> None:
    score = obj["score"]
    if not 0 <= float(score) <= 10:
        raise MalformedReply(f"score must be within 0-10, got {score!r}")
    reason = obj.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise MalformedReply(f"reason must be a string, got {type(reason).__name__}")


def grade_parser():
    """``{"score": number 0-10, "reason": str}`` -> ``(score as float, reason)``."""
    check = json_object_parser({"score": (int, float)}, check=_check_grade)

    def parse(text: str) -> tuple[float, str]:
        obj = check(text)
        return float(obj["score"]), " ".join(str(obj.get("reason") or "").split())

    return wants_json(parse, check)


def grade_messages(prompt: Prompt, query: str, trajectory: str) -> list[dict[str, Any]]:
    return prompt.messages(query=" ".join(str(query).split()), trajectory=trajectory)
