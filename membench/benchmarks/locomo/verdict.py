"""LoCoMo's verdict without a model: category 5 (adversarial) is correct exactly when upstream's rule says so
(``task_eval/evaluation.py``: the answer says the information is not available / not mentioned)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from membench.benchmarks.locomo.answer_f1 import adversarial_correct


def is_adversarial(question: Mapping[str, Any]) -> bool:
    """A category-5 question, decided by upstream's rule rather than a judge."""
    category = question.get("category")
    return category is not None and not pd.isna(category) and int(category) == 5


def verdict_by_rule(question: Mapping[str, Any], answer: str) -> bool | None:
    """Upstream's verdict for a category-5 question; None for the others (a model judges them)."""
    return adversarial_correct(answer) if is_adversarial(question) else None
