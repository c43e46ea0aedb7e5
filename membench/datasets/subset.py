"""Quick runs: keep N questions per question group (stratified, deterministic) and only what they need.

The group is the tier when the dataset has tiers (Procedural), else the question type (LongMemEval's
types, LoCoMo's categories). Questions keep their benchmark index, so their tune/holdout split is the one
they have in the full run.
"""

from __future__ import annotations

import numpy as np

from membench.datasets.tables import ParsedDataset


def group_of(question: dict, by_tier: bool) -> str:
    return str(question["tier"] if by_tier else question["question_type"])


def sample_questions(questions: list[dict], per_group: int, seed: int) -> list[dict]:
    """`per_group` questions of each group (all of a smaller group), drawn with numpy's default_rng(seed)
    from the group's questions in benchmark order; returned in benchmark order."""
    if per_group < 1:
        raise ValueError(f"subset.per_group must be >= 1, got {per_group!r}")
    by_tier = any(q.get("tier") for q in questions)
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        groups.setdefault(group_of(q, by_tier), []).append(i)
    rng = np.random.default_rng(seed)
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
                        log=data.log, counts=dict(data.counts))
    out.counts["subset"] = {"per_group": per_group, "seed": seed, "questions": len(questions),
                            "of_questions": len(data.questions), "sessions": len(keys)}
    out.log.note("subset", "dropped", f"subset run: {per_group} questions per question group (seed {seed}) kept, "
                 "the other questions dropped", f"{len(questions)} of {len(data.questions)} questions kept",
                 count=len(data.questions) - len(questions))
    return out
