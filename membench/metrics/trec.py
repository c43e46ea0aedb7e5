"""trec_eval-style measures for one ranked list against the full qrels of one question.

Conventions (those of trec_eval / ir_measures, so numbers can be checked against either):

- ``ranked`` is the run for one question, best first. Repeated ids are dropped after their first
  occurrence (a run file cannot hold the same document twice).
- ``qrels`` maps item id -> gain. An item is *relevant* when its gain is ``>= rel_threshold``
  (trec_eval's ``-l`` relevance level). Items not in ``qrels`` have gain 0 and are *unjudged*.
- ``P@k``  = relevant in the top k / k (k, not the list length, even when fewer than k were retrieved).
- ``R@k``  = relevant in the top k / number of relevant items in the qrels.
- ``F1@k`` = 2·P·R / (P + R), 0 when both are 0 (not a trec_eval measure; built from the two above).
- ``nDCG@k`` = DCG@k / IDCG@k with graded gains (the raw qrel value, not thresholded), discount
  ``log2(rank + 1)`` for rank 1, 2, ...; the ideal list sorts *all* qrel gains (positive ones) descending.
- ``AP`` = sum of P@rank over the ranks holding a relevant item / number of relevant items in the qrels.
- ``RR`` = 1 / rank of the first relevant item, 0 if none is retrieved.
- ``judged@k`` = share of the top k that has any qrel entry, dividing by k (ir_measures' ``Judged@k``
  divides by the number retrieved when fewer than k were, so the two differ on short runs).

Empty relevant set: trec_eval drops a question that has no qrels at all and gives 0 to one whose qrels
hold no relevant item. Neither is a measurement of retrieval, so here every relevance measure (P, R, F1,
nDCG, AP, RR) is ``NaN`` when no qrel reaches ``rel_threshold``; callers skip NaN rows when averaging and
report how many were skipped. ``judged@k`` does not depend on relevance and is always computed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["measures", "metric_names", "dedupe"]

NAN = float("nan")


def dedupe(ranked: Iterable[str]) -> list[str]:
    """The ranked ids with later repeats removed, order kept."""
    seen: set[str] = set()
    out: list[str] = []
    for item in ranked:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def metric_names(ks: Sequence[int] = (1, 3, 5, 10)) -> list[str]:
    """The keys :func:`measures` returns for these cut-offs, in its order."""
    names: list[str] = []
    for k in ks:
        names += [f"P@{k}", f"R@{k}", f"F1@{k}", f"nDCG@{k}", f"judged@{k}"]
    return names + ["AP", "RR"]


def _dcg(gains: Iterable[float]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1) if g)


def measures(
    ranked: list[str],
    qrels: dict[str, float],
    ks: Sequence[int] = (1, 3, 5, 10),
    rel_threshold: float = 1.0,
) -> dict[str, float]:
    """trec_eval measures for one question; see the module docstring for each definition."""
    for k in ks:
        if int(k) != k or k < 1:
            raise ValueError(f"cut-off k must be a positive integer, got {k!r}")
    run = dedupe(ranked)
    # an unjudged item is never relevant, whatever the threshold
    is_rel = [item in qrels and qrels[item] >= rel_threshold for item in run]
    gains = [float(qrels.get(item, 0.0)) for item in run]
    judged = [item in qrels for item in run]
    n_rel = sum(1 for g in qrels.values() if g >= rel_threshold)
    ideal = sorted((float(g) for g in qrels.values() if g > 0), reverse=True)

    out: dict[str, float] = {}
    for k in ks:
        share_judged = sum(judged[:k]) / k
        if n_rel == 0:
            out.update({f"P@{k}": NAN, f"R@{k}": NAN, f"F1@{k}": NAN, f"nDCG@{k}": NAN,
                        f"judged@{k}": share_judged})
            continue
        hits = sum(is_rel[:k])
        p = hits / k
        r = hits / n_rel
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        idcg = _dcg(ideal[:k])
        ndcg = _dcg(gains[:k]) / idcg if idcg > 0 else 0.0
        out.update({f"P@{k}": p, f"R@{k}": r, f"F1@{k}": f1, f"nDCG@{k}": ndcg, f"judged@{k}": share_judged})

    if n_rel == 0:
        out["AP"] = NAN
        out["RR"] = NAN
        return out
    hits = 0
    precision_sum = 0.0
    first = 0
    for rank, rel in enumerate(is_rel, start=1):
        if rel:
            hits += 1
            precision_sum += hits / rank
            if not first:
                first = rank
    out["AP"] = precision_sum / n_rel
    out["RR"] = 1.0 / first if first else 0.0
    return out
