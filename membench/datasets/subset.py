"""Quick runs: keep N questions per question group (stratified, deterministic) and only what they need.

The group is the tier when the dataset has tiers (Procedural), else the question type (LongMemEval's
types, LoCoMo's categories). Questions keep their benchmark index, so their tune/holdout split is the one
they have in the full run.

A quick run's cost is embedding the haystacks its questions search, not the questions: LoCoMo's 10
conversations hold 6,081 distinct texts, and 15 questions drawn from all of LoCoMo reach 8-10 of them. So
the questions come from the fewest haystacks that hold N of every group (haystacks taken in a seeded
order, at least two so that a conversation-level bootstrap still has two units), then N per group are drawn
from those. Each haystack is searched whole, as in the full run. LongMemEval (a haystack per question) and
Procedural (one shared corpus) are a plain stratified draw either way.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from membench.datasets.tables import ParsedDataset


def group_of(question: dict, by_tier: bool) -> str:
    return str(question["tier"] if by_tier else question["question_type"])


def covering_haystacks(questions: list[dict], targets: dict[str, int], by_tier: bool,
                       rng: np.random.Generator) -> set[str]:
    """Haystacks in a seeded order, each taken while some group it holds is short of its target (or fewer
    than two are taken), until every group reaches its target."""
    held: dict[str, list[str]] = {}
    for q in questions:
        held.setdefault(q["haystack_id"], []).append(group_of(q, by_tier))
    order = sorted(held)
    have = dict.fromkeys(targets, 0)
    chosen: set[str] = set()
    for i in rng.permutation(len(order)):
        if len(chosen) >= 2 and all(have[g] >= targets[g] for g in targets):
            break
        if len(chosen) < 2 or any(have[g] < targets[g] for g in held[order[i]]):
            chosen.add(order[i])
            for g in held[order[i]]:
                have[g] += 1
    return chosen


def sample_questions(questions: list[dict], per_group: int, seed: int) -> list[dict]:
    """`per_group` questions of each group (all of a smaller group), drawn with numpy's default_rng(seed)
    from the group's questions (in benchmark order) in the covering haystacks; returned in benchmark order."""
    if per_group < 1:
        raise ValueError(f"subset.per_group must be >= 1, got {per_group!r}")
    by_tier = any(q.get("tier") for q in questions)
    group = [group_of(q, by_tier) for q in questions]
    sizes = Counter(group)
    rng = np.random.default_rng(seed)
    haystacks = covering_haystacks(questions, {g: min(per_group, n) for g, n in sizes.items()}, by_tier, rng)
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        if q["haystack_id"] in haystacks:
            groups.setdefault(group[i], []).append(i)
    keep: list[int] = []
    for name in sorted(groups):
        members = groups[name]
        chosen = rng.choice(len(members), size=min(per_group, len(members)), replace=False)
        keep += [members[j] for j in chosen]
    return [questions[i] for i in sorted(keep)]


def subset(data: ParsedDataset, per_group: int, seed: int) -> ParsedDataset:
    """The dataset cut to the sampled questions, their qrels, haystacks and the sessions those hold."""
    questions = sample_questions(data.questions, per_group, seed)
    ids = {q["question_id"] for q in questions}
    haystack_ids = {q["haystack_id"] for q in questions}
    haystacks = [h for h in data.haystacks if h["haystack_id"] in haystack_ids]
    keys = {h["session_key"] for h in haystacks}
    out = ParsedDataset(data.kind, questions=questions, turns=[t for t in data.turns if t["session_key"] in keys],
                        haystacks=haystacks, qrels=[r for r in data.qrels if r["question_id"] in ids],
                        gold_roles=[r for r in data.gold_roles if r["question_id"] in ids],
                        rubrics=[r for r in data.rubrics if r["question_id"] in ids],
                        log=data.log, counts=dict(data.counts), gold_issues=data.gold_issues)
    out.counts["subset"] = {"per_group": per_group, "seed": seed, "questions": len(questions),
                            "of_questions": len(data.questions), "haystacks": len(haystack_ids),
                            "of_haystacks": len({h["haystack_id"] for h in data.haystacks}), "sessions": len(keys)}
    kept = (f"{len(questions):,} of {len(data.questions):,} questions kept, from {len(haystack_ids):,} of "
            f"{out.counts['subset']['of_haystacks']:,} haystacks")
    out.log.note("subset", "dropped", f"subset run: {per_group} questions per question group (seed {seed}) kept, "
                 "the other questions dropped", kept, count=len(data.questions) - len(questions))
    return out
