"""Answer-mode QA metrics: LoCoMo's token F1 as upstream computes it (the score rows are in
:mod:`membench.scoring.qa`).

LoCoMo (snap-research/locomo, ``task_eval/evaluation.py``):

- ``normalize_answer(s)``: remove every ``,``; lower-case; drop every character in
  ``string.punctuation``; replace the words ``a``, ``an``, ``the`` *and* ``and`` (``\\b`` word boundaries)
  by a space; collapse whitespace.
- ``f1_score(prediction, ground_truth)``: tokens = the normalised text split on whitespace, each stemmed
  with NLTK's ``PorterStemmer`` (default mode); common = multiset intersection; 0 when nothing is
  shared; else ``2PR/(P+R)`` with ``P = common/len(pred)``, ``R = common/len(gold)``.
- ``f1(prediction, ground_truth)`` (multi-answer, used for category 1 / multi-hop): split both on ``,``
  (stripped), and average over the gold parts the best ``f1_score`` against any predicted part.
- ``eval_question_answering``: the gold is ``str(answer)``; category 3 keeps only the part before the
  first ``;``; categories 2, 3, 4 use ``f1_score``, category 1 uses ``f1``; category 5 (adversarial) scores
  1 when the prediction contains ``"no information available"`` or ``"not mentioned"`` (lower-cased), else 0.

Note that the ``,`` split of the multi-answer ``f1`` happens on the raw strings, before normalisation
removes commas. Upstream's ``f1`` raises on an empty prediction part list only if the prediction is
empty after splitting -- ``"".split(",")`` is ``[""]``, so an empty prediction scores 0, as here.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from typing import Any

from membench.benchmarks.locomo.porter import porter_stemmer

__all__ = ["normalize_answer", "f1_score", "f1_multi", "locomo_score", "adversarial_correct",
           "ADVERSARIAL_PHRASES"]

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
ADVERSARIAL_PHRASES = ("no information available", "not mentioned")


@lru_cache(maxsize=1)
def _stemmer():
    return porter_stemmer()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def normalize_answer(s: Any) -> str:
    """Upstream LoCoMo normalisation (see the module docstring)."""
    s = str(s).replace(",", "")
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def f1_score(prediction: Any, ground_truth: Any) -> float:
    """Upstream LoCoMo token F1 with Porter stemming."""
    pred = [_stem(w) for w in normalize_answer(prediction).split()]
    gold = [_stem(w) for w in normalize_answer(ground_truth).split()]
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction: Any, ground_truth: Any) -> float:
    """Upstream multi-answer F1 (category 1): mean over gold parts of the best F1 against a predicted part."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(ground_truth).split(",")]
    return float(sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds))


def adversarial_correct(prediction: Any) -> bool:
    """Upstream category-5 rule: the prediction says the information is not available / not mentioned."""
    text = str(prediction).lower()
    return any(p in text for p in ADVERSARIAL_PHRASES)


def locomo_score(category: int, prediction: Any, answer: Any) -> float:
    """The per-question score upstream's ``eval_question_answering`` puts in its F1 list."""
    category = int(category)
    if category == 5:
        return 1.0 if adversarial_correct(prediction) else 0.0
    gold = str(answer)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category in (2, 3, 4):
        return f1_score(prediction, gold)
    if category == 1:
        return f1_multi(prediction, gold)
    raise ValueError(f"LoCoMo category must be 1-5, got {category}")
