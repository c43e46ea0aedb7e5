"""Attribution: the turns a rewritten memory most likely came from, for results that carry no usable id.

A system that rewrites what it stores (mem0's extracted facts, A-MEM's notes, an MCP server's summaries) returns
text that is in no turn verbatim. Such a result is mapped to the turns of the question's scope by one fixed rule,
lexical and embedding similarity together:

- *coverage* of a set of turns: the share of the result's words (lower-cased letter and digit runs) that occur in
  them, each word weighted by its inverse document frequency over the scope's turns (BM25's idf), so a rare name
  counts and "the" hardly does;
- *cosine*: of the result and the turn, embedded by membench's embedder (all-MiniLM-L6-v2 through the embedding
  cache), which finds a paraphrase that shares few words.

1. each turn scores coverage + `cosine_weight` x cosine, rounded to `DECIMALS` places (so the last-bit differences
   of vector maths between CPUs cannot reorder two turns; only a score within 5e-5 of the threshold can move);
2. the turns scoring at least `threshold` are candidates (the best `candidates` of them, ties to the earlier turn);
   none, and the result is dropped as before;
3. the best candidate is the first source; another candidate is added while it raises the coverage of the sources
   by at least `gain` (it holds words of the result the others lack), the best such each time, up to `max_turns`.

So a paraphrase of one turn maps to it alone, and a fact drawn from two turns maps to both. The defaults (threshold
0.5, cosine weight 0.5, gain 0.2, at most 3 of 6 candidates) were chosen on LoCoMo conv-26 and conv-30's
observations, facts written from the dialogue with the turns they came from, and measured on the other eight
conversations' 2,188 facts: precision 0.698, recall 0.744, 6.4% dropped (`bench/attribution.py`,
`membench.memory.attribution_quality`; bench/RESULTS.md).

`membench.memory.run` applies it to every hit that names no turn but carries its text (an MCP server's result that
matched no id and no stored text, a library result without a usable id), over the question's scope read from the
session logs, when the config's `memory_attribution` is on (the default). Such a hit is its own resolution kind
("attributed", beside "by id" and "by text"), counted in the run's metadata and flagged in the run file, and the score
stage scores the run a second time without it (metrics named `unattributed:<metric>`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

DECIMALS = 4
WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


@dataclass(frozen=True)
class Attribution:
    """The rule's five numbers (module docstring)."""

    threshold: float = 0.5
    cosine_weight: float = 0.5
    gain: float = 0.2
    max_turns: int = 3
    candidates: int = 6

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | bool | None) -> "Attribution | None":
        """From a system's `attribute` parameter: a mapping of the rule's numbers (defaults for the rest), True for
        the defaults, False or None for no attribution."""
        if not params:
            return None
        if params is True:
            return cls()
        known = tuple(cls.__dataclass_fields__)
        unknown = set(params) - set(known)
        if unknown:
            raise ValueError(f"attribute: unknown keys {sorted(unknown)} (known: {', '.join(known)})")
        rule = cls(**dict(params))
        if not (0 < rule.max_turns <= rule.candidates and rule.gain >= 0 and rule.cosine_weight >= 0):
            raise ValueError("attribute: needs 0 < max_turns <= candidates, gain >= 0 and cosine_weight >= 0, "
                             f"got {rule}")
        return rule

    def choose(self, scores: Sequence[float], coverage) -> tuple[int, ...]:
        """Indexes of the sources, best first: `scores[i]` is turn i's score, `coverage(indexes)` the coverage of a
        set of turns."""
        ranked = sorted((i for i, s in enumerate(scores) if round(s, DECIMALS) >= self.threshold),
                        key=lambda i: (-round(scores[i], DECIMALS), i))[: self.candidates]
        if not ranked:
            return ()
        picked, current, rest = [ranked[0]], coverage([ranked[0]]), ranked[1:]
        while rest and len(picked) < self.max_turns:
            best, turn = max(((round(coverage([*picked, i]), DECIMALS), -i) for i in rest))
            if best - current < self.gain - 0.5 * 10 ** -DECIMALS:
                break
            picked.append(-turn)
            rest.remove(-turn)
            current = best
        return tuple(picked)


@dataclass(frozen=True)
class ScopeTurns:
    """The turns a result may be attributed to, prepared once per scope: refs, word sets, document frequencies and
    (when the rule uses the cosine) embeddings."""

    refs: tuple[str, ...]
    held: tuple[frozenset[str], ...]
    postings: dict[str, np.ndarray]  # word -> the indexes of the turns that hold it (its length: the word's df)
    vectors: Any  # (n, d) float64 rows, or None

    @classmethod
    def of(cls, turns: Sequence[tuple[str, str]], cache: Any, rule: Attribution) -> "ScopeTurns":
        held = tuple(frozenset(words(t)) for _, t in turns)
        postings: dict[str, list[int]] = {}
        for i, h in enumerate(held):
            for w in h:
                postings.setdefault(w, []).append(i)
        vectors = None
        if rule.cosine_weight and turns:
            vectors = np.asarray(cache.encode([t for _, t in turns]), dtype=np.float64)
        return cls(tuple(r for r, _ in turns), held, {w: np.asarray(i) for w, i in postings.items()}, vectors)


def attribute_in(text: str, scope: ScopeTurns, cache: Any, rule: Attribution) -> tuple[str, ...]:
    """The refs of `scope` that `text` is attributed to under `rule` (module docstring)."""
    asked = words(text)
    if not asked or not scope.refs:
        return ()
    n, empty = len(scope.refs), np.zeros(0, dtype=int)
    weight = {w: math.log(1 + (n - len(scope.postings.get(w, empty)) + 0.5) / (len(scope.postings.get(w, empty)) + 0.5))
              for w in sorted(asked)}
    total = sum(weight.values())

    def coverage(indexes: Sequence[int]) -> float:
        return sum(v for w, v in weight.items() if any(w in scope.held[i] for i in indexes)) / total

    single = np.zeros(n)  # coverage of each turn alone, from the postings
    for w, v in weight.items():
        single[scope.postings.get(w, empty)] += v
    scores = single / total
    if scope.vectors is not None:
        scores = scores + rule.cosine_weight * (scope.vectors @ np.asarray(cache.encode([text]), dtype=np.float64)[0])
    return tuple(scope.refs[i] for i in rule.choose(scores.tolist(), coverage))


def attribute(text: str, turns: Sequence[tuple[str, str]], cache: Any, rule: Attribution) -> tuple[str, ...]:
    """The refs of `turns` ((ref, text) in log order: the scope's turns) that `text` is attributed to under `rule`;
    `cache` is an embedding cache (`membench.embedding.cache.EmbeddingCache`)."""
    return attribute_in(text, ScopeTurns.of(turns, cache, rule), cache, rule)


class ScopeAttribution:
    """`attribute` over a question's scope: the turns of its sessions, read once per session from the logs (the
    gold-free files every memory system reads)."""

    def __init__(self, rule: Attribution, cache: Any):
        self.rule, self.cache = rule, cache
        self._turns: dict[Path, list[tuple[str, str]]] = {}
        self._scope_key: tuple | None = None
        self._scope: ScopeTurns | None = None

    def _session(self, key: str, directory: Path) -> list[tuple[str, str]]:
        from membench.memory.protocol import SessionLog
        from membench.memory.systems.library import session_turns

        path = Path(directory) / key / "events.jsonl"
        if path not in self._turns:
            self._turns[path] = session_turns(SessionLog(key, path, None))
        return self._turns[path]

    def __call__(self, texts: Sequence[str], sessions: Sequence[str], directory: Path) -> list[tuple[str, ...]]:
        """The refs each of `texts` (one search's results) is attributed to; their embeddings in one batch."""
        key = (tuple(sessions), Path(directory))
        if key != self._scope_key:  # a run searches one haystack's questions after another
            turns = [t for session in sessions for t in self._session(session, directory)]
            self._scope_key, self._scope = key, ScopeTurns.of(turns, self.cache, self.rule)
        if self.rule.cosine_weight and texts:
            self.cache.encode(list(texts))
        return [attribute_in(text, self._scope, self.cache, self.rule) for text in texts]
