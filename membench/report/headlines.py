"""How a mean with its CI is written (which metrics a benchmark's tables lead with is its record's `headlines`)."""

from __future__ import annotations

import math


def with_ci(mean: float, lo: float, hi: float) -> str:
    if math.isnan(mean):
        return "n/a"
    if math.isnan(lo):
        return f"{mean:.4f}"
    return f"{mean:.4f} [{lo:.3f}, {hi:.3f}]"
