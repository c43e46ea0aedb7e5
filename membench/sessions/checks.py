"""What a system may answer about a haystack: a third-party system's output is checked before it is scored.

An adapter's ranking is a list of (item id, score) pairs; a memory system's answer is a list of `Hit`s naming turn
refs or session keys. Either is refused when it holds an id twice, an id that is not in the question's haystack, a
score that is not a finite number, or more than k items (a memory system: more than k hits); an adapter's
`score()` must give exactly one score per document (`Adapter.rank` checks). Fewer than k items is legal; the run's
metadata counts such answers ("short") and the report flags them. The rank stages raise `SystemOutputError`, which
names the run and the question; `membench validate` lists every problem it finds on a plugin instead.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np


class ScoreCountError(ValueError):
    """`score()` gave a number of scores other than the number of documents (raised by `Adapter.rank`)."""


def _score_problem(score: Any, what: str) -> str | None:
    if not isinstance(score, (float, np.floating)):
        return f"gave a score of type {type(score).__name__} ({score!r}); scores must be floats"
    if not math.isfinite(score):
        return f"gave the non-finite score {float(score)!r} for {what}"
    return None


def ranking_problems(ranking: Any, k: int, ids: Collection[str]) -> list[str]:
    """Problems with one adapter ranking (`[(item_id, score), ...]`, best first), each a short clause."""
    if not isinstance(ranking, (list, tuple)):
        return [f"returned a {type(ranking).__name__}, not a list of (item_id, score) pairs"]
    problems: list[str] = []
    if len(ranking) > k:
        problems.append(f"returned {len(ranking)} items (at most {k} allowed)")
    seen: set[Any] = set()
    for item in ranking:
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            problems.append(f"returned {item!r}, which is not an (item_id, score) pair")
            continue
        ident, score = item
        if ident not in ids:
            problems.append(f"returned the id {ident!r}, which is not in the haystack")
        if ident in seen:
            problems.append(f"returned the id {ident!r} more than once")
        seen.add(ident)
        problem = _score_problem(score, repr(ident))
        if problem:
            problems.append(problem)
    return problems


def hits_problems(hits: Any, k: int, refs: Collection[str]) -> list[str]:
    """Problems with one memory-system answer (`[Hit, ...]`): `refs` are the turn refs and session keys of the
    question's haystack."""
    if not isinstance(hits, (list, tuple)):
        return [f"returned a {type(hits).__name__}, not a list of Hits"]
    problems: list[str] = []
    if len(hits) > k:
        problems.append(f"returned {len(hits)} hits (at most {k} allowed)")
    for n, hit in enumerate(hits, 1):
        named = getattr(hit, "refs", None)
        if not isinstance(named, (tuple, list)) or not all(isinstance(r, str) for r in named):
            problems.append(f"returned hit {n} whose refs are {named!r}, not a tuple of ids")
            continue
        for ref in sorted(set(named) - set(refs)):
            problems.append(f"returned the id {ref!r} (hit {n}), which is not in the haystack")
        for ref in sorted({r for r in named if named.count(r) > 1}):
            problems.append(f"returned the id {ref!r} more than once in hit {n}")
        problem = _score_problem(getattr(hit, "score", None), f"hit {n}")
        if problem:
            problems.append(problem)
    return problems


def is_short(found: Sequence[Any], k: int, available: int) -> bool:
    """Fewer items than asked for (and than the haystack holds): legal, counted, flagged in the report."""
    return len(found) < min(k, available)
