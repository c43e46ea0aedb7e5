"""LongMemEval's retrieval metrics, reproduced for parity with the upstream scorer.

Upstream: github.com/xiaowu0162/LongMemEval, ``src/retrieval/eval_utils.py`` (the formulas) and
``src/retrieval/run_retrieval.py`` (corpus ids, correct set, k values, which questions are averaged).
What is reproduced here, stated in our own words:

Corpus ids (``run_retrieval.py``, ``process_item_flat_index``)
    *Session corpus*: one document per haystack session, id = the session id. If the id contains the
    substring ``"answer"`` but none of the session's user turns has ``has_answer``, the id is rewritten
    with every ``"answer"`` replaced by ``"noans"``.
    *Turn corpus*: one document per **user** turn, id = ``f"{session_id}_{i + 1}"`` where ``i`` is the
    turn's 0-based position among *all* turns of the session (assistant turns count). Inside a session
    whose id contains ``"answer"``, a user turn without ``has_answer`` gets ``"answer"`` -> ``"noans"``
    in its whole id, so a non-evidence turn of an evidence session is a different document *and*, after
    turn -> session mapping, a different session (``noans_x_1`` is not ``answer_x_1``).
    A missing ``has_answer`` is read as False here (upstream asserts it is present in ``answer`` sessions).

Correct set
    The distinct corpus ids that contain ``"answer"`` (:func:`correct_ids`).

Per-question formulas (``eval_utils.py``), for the top-k list R of a ranking and correct set C
    ``recall_any@k`` = 1 if some c in C is in R; ``recall_all@k`` = 1 if every c in C is in R (so 1 when
    C is empty, while recall_any is 0). ``ndcg_any@k`` uses binary gains and the DCG
    ``g1 + sum_{i=2..k} g_i / log2(i)`` (ranks 1 and 2 both weigh 1); the ideal sorts the gains of the
    *whole corpus* (one per corpus entry, duplicates included) descending and keeps the first k; the
    result is 0 when the ideal DCG is 0.

Turn ranking scored at session level (``evaluate_retrieval_turn2session``)
    Every turn id is mapped to a session id by dropping its last ``_n``. The session-level corpus is the
    turn corpus so mapped (one entry per turn: duplicates kept, which is what the ideal DCG counts), the
    correct set is the distinct mapped correct turns. k is widened: starting at k, it grows by one while
    it is at most the corpus length and the prefix holds fewer than k distinct sessions; the formulas are
    then applied to that prefix. (If the corpus never reaches k sessions the loop stops at
    ``max(k, corpus length + 1)``, i.e. the whole list.) Upstream stores these numbers under ``metrics["session"]``
    of a turn-granularity run; membench names them ``turn2session/...``.

k values ``KS = (1, 3, 5, 10, 30, 50)``. Averaging (``run_retrieval.py`` main) skips questions whose
id contains ``_abs`` and questions with no user turn carrying ``has_answer`` anywhere in the haystack
(:func:`skip_reason`).

``ranked`` must be the ranking over the question's corpus (upstream ranks the whole corpus). A list cut
to its top n gives identical numbers for every k <= n, and for turn2session as long as the widened
prefix fits in it (:func:`turn2session_k` tells how long a prefix was needed).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "KS", "MEASURES", "LEVELS",
    "dcg", "ndcg_any", "evaluate", "evaluate_turn2session", "turn2session_k", "strip_turn_id",
    "correct_ids", "session_corpus_id", "turn_corpus_id", "UpstreamIds", "upstream_corpus_ids",
    "question_rows", "metric_names", "skip_reason",
]

KS: tuple[int, ...] = (1, 3, 5, 10, 30, 50)
MEASURES: tuple[str, ...] = ("recall_any", "recall_all", "ndcg_any")
LEVELS: tuple[str, ...] = ("session", "turn", "turn2session")


# ----------------------------------------------------------------------------------------- formulas

def dcg(gains: Sequence[float], k: int) -> float:
    """Upstream DCG of the first k gains: ``g1 + sum_{i>=2} g_i / log2(i)``."""
    head = list(gains[:k])
    if not head:
        return 0.0
    return float(head[0]) + sum(g / math.log2(i) for i, g in enumerate(head[1:], start=2) if g)


def ndcg_any(ranked: Sequence[str], corpus_ids: Sequence[str], correct: Iterable[str], k: int) -> float:
    """Upstream ndcg_any@k: binary gains, ideal from the whole corpus's gains."""
    correct = set(correct)
    ideal = sorted((1 if c in correct else 0 for c in corpus_ids), reverse=True)
    ideal_dcg = dcg(ideal, k)
    if ideal_dcg == 0:
        return 0.0
    actual = [1 if doc in correct else 0 for doc in ranked[:k]]
    return dcg(actual, k) / ideal_dcg


def _check_k(k: int) -> None:
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _check_in_corpus(ranked: Sequence[str], corpus_ids: Sequence[str]) -> None:
    known = set(corpus_ids)
    unknown = [r for r in ranked if r not in known]
    if unknown:
        raise ValueError(f"{len(unknown)} ranked id(s) are not in the corpus, e.g. {unknown[0]!r}")


def evaluate(ranked: list[str], corpus_ids: list[str], correct: set[str], k: int) -> tuple[float, float, float]:
    """``(recall_any@k, recall_all@k, ndcg_any@k)`` for one question, as upstream ``evaluate_retrieval``."""
    _check_k(k)
    _check_in_corpus(ranked, corpus_ids)
    correct = set(correct)
    recalled = set(ranked[:k])
    recall_any = float(any(c in recalled for c in correct))
    recall_all = float(all(c in recalled for c in correct))
    return recall_any, recall_all, ndcg_any(ranked, corpus_ids, correct, k)


def strip_turn_id(turn_id: str) -> str:
    """Session id of a turn id: everything before the last ``_`` (``answer_x_1_3`` -> ``answer_x_1``)."""
    return "_".join(turn_id.split("_")[:-1])


def turn2session_k(ranked_sessions: Sequence[str], n_corpus: int, k: int) -> int:
    """The widened k: grow from k while ``k <= n_corpus`` and the prefix has fewer than k distinct sessions."""
    _check_k(k)
    eff = k
    distinct = set(ranked_sessions[:eff])
    while eff <= n_corpus and len(distinct) < k:
        eff += 1
        if eff <= len(ranked_sessions):
            distinct.add(ranked_sessions[eff - 1])
    return eff


def evaluate_turn2session(
    ranked_turn_ids: list[str], corpus_turn_ids: list[str], correct_turn_ids: set[str], k: int
) -> tuple[float, float, float]:
    """A turn ranking scored at session level, as upstream ``evaluate_retrieval_turn2session``."""
    _check_k(k)
    _check_in_corpus(ranked_turn_ids, corpus_turn_ids)
    ranked = [strip_turn_id(t) for t in ranked_turn_ids]
    corpus = [strip_turn_id(t) for t in corpus_turn_ids]
    correct = {strip_turn_id(t) for t in correct_turn_ids}
    eff = turn2session_k(ranked, len(corpus), k)
    return evaluate(ranked, corpus, correct, eff)


# ----------------------------------------------------------------------------------------- corpus ids

def correct_ids(corpus_ids: Iterable[str]) -> set[str]:
    """Upstream's correct documents: the corpus ids containing ``"answer"``."""
    return {c for c in corpus_ids if "answer" in c}


def session_corpus_id(session_id: str, user_has_answer: Iterable[bool | None]) -> str:
    """Upstream session-corpus id: ``answer`` -> ``noans`` when no user turn of an ``answer`` session has the flag."""
    if "answer" in session_id and not any(bool(h) for h in user_has_answer):
        return session_id.replace("answer", "noans")
    return session_id


def turn_corpus_id(session_id: str, turn_index: int, has_answer: bool | None) -> str:
    """Upstream turn-corpus id of a *user* turn at 0-based position ``turn_index`` among all its session's turns."""
    tid = f"{session_id}_{turn_index + 1}"
    if "answer" in session_id and not has_answer:
        tid = tid.replace("answer", "noans")
    return tid


@dataclass
class UpstreamIds:
    """Upstream-style corpus ids of one question's haystack.

    ``session_ids`` / ``turn_ids`` are the two corpora in haystack order (what upstream calls
    ``corpus_ids``). ``session_of`` maps the original session id to its session-corpus id and
    ``turn_of`` maps ``(session_id, turn_index)`` of each user turn to its turn-corpus id, so a ranking
    over opaque ids can be translated.
    """

    session_ids: list[str] = field(default_factory=list)
    turn_ids: list[str] = field(default_factory=list)
    session_of: dict[str, str] = field(default_factory=dict)
    turn_of: dict[tuple[str, int], str] = field(default_factory=dict)


def upstream_corpus_ids(turns: Iterable[tuple[str, int, str, bool | None]],
                        upstream_name: Callable[[str], str] = str) -> UpstreamIds:
    """Build both upstream corpora from ``(session_id, turn_index, role, has_answer)`` rows.

    ``upstream_name`` gives the id upstream uses for a session: a haystack that lists one session twice holds
    two sessions here (two ``session_id``s, see :mod:`membench.benchmarks.longmemeval.parse`) but two corpus entries
    under one id upstream, which is what recall, the ideal DCG and the distinct-session count of turn2session see.

    ``turn_index`` is the 0-based position among all turns of the session; ``role`` is ``"user"`` or
    ``"assistant"``; ``has_answer`` may be None when the turn has no flag (read as False). Sessions keep
    the order of their first row and turns are sorted by index inside a session. A session must have at
    least one row (upstream also lists sessions without turns; give such a session's ids yourself).
    """
    order: list[str] = []
    rows: dict[str, list[tuple[int, str, bool | None]]] = {}
    for session_id, turn_index, role, has_answer in turns:
        if session_id not in rows:
            order.append(session_id)
            rows[session_id] = []
        rows[session_id].append((int(turn_index), role, has_answer))
    out = UpstreamIds()
    for sid in order:
        session_rows = sorted(rows[sid], key=lambda r: r[0])
        indices = [r[0] for r in session_rows]
        if len(set(indices)) != len(indices):
            raise ValueError(f"session {sid!r} has a repeated turn_index")
        user_rows = [r for r in session_rows if r[1] == "user"]
        name = upstream_name(sid)
        scid = session_corpus_id(name, (r[2] for r in user_rows))
        out.session_ids.append(scid)
        out.session_of[sid] = scid
        for index, _role, has_answer in user_rows:
            tcid = turn_corpus_id(name, index, has_answer)
            out.turn_ids.append(tcid)
            out.turn_of[(sid, index)] = tcid
    return out


def skip_reason(question_id: str, any_user_has_answer: bool) -> str | None:
    """Why upstream leaves a question out of its averages: ``"abstention"``, ``"no_target"`` or None.

    ``any_user_has_answer``: whether any user turn anywhere in the question's haystack has ``has_answer``.
    """
    if "_abs" in question_id:
        return "abstention"
    if not any_user_has_answer:
        return "no_target"
    return None


# ----------------------------------------------------------------------------------------- rows

def metric_names(levels: Sequence[str] = LEVELS, ks: Sequence[int] = KS) -> list[str]:
    """``<level>/<measure>@<k>`` names in :func:`question_rows` order."""
    return [f"{level}/{m}@{k}" for level in levels for k in ks for m in MEASURES]


def question_rows(
    *,
    session_ranked: list[str] | None = None,
    session_corpus_ids: list[str] | None = None,
    turn_ranked: list[str] | None = None,
    turn_corpus_ids: list[str] | None = None,
    ks: Sequence[int] = KS,
    session_correct: set[str] | None = None,
    turn_correct: set[str] | None = None,
) -> dict[str, float]:
    """Every LongMemEval metric of one question, keyed ``session/...``, ``turn/...``, ``turn2session/...``.

    Give a session ranking with its session corpus, a turn ranking with its turn corpus, or both (ids in
    upstream form, see :func:`upstream_corpus_ids`). The correct sets default to the upstream rule
    (:func:`correct_ids`). A turn ranking yields both ``turn/`` and ``turn2session/`` keys.
    """
    out: dict[str, float] = {}
    if (session_ranked is None) != (session_corpus_ids is None):
        raise ValueError("session_ranked and session_corpus_ids go together")
    if (turn_ranked is None) != (turn_corpus_ids is None):
        raise ValueError("turn_ranked and turn_corpus_ids go together")
    if session_ranked is not None:
        correct = correct_ids(session_corpus_ids) if session_correct is None else set(session_correct)
        for k in ks:
            values = evaluate(session_ranked, session_corpus_ids, correct, k)
            out.update({f"session/{m}@{k}": v for m, v in zip(MEASURES, values)})
    if turn_ranked is not None:
        correct = correct_ids(turn_corpus_ids) if turn_correct is None else set(turn_correct)
        for k in ks:
            values = evaluate(turn_ranked, turn_corpus_ids, correct, k)
            out.update({f"turn/{m}@{k}": v for m, v in zip(MEASURES, values)})
        for k in ks:
            values = evaluate_turn2session(turn_ranked, turn_corpus_ids, correct, k)
            out.update({f"turn2session/{m}@{k}": v for m, v in zip(MEASURES, values)})
    return out
