"""Published figures beside ours: the cited table and the gap flag."""

from __future__ import annotations

import pandas as pd

from membench.report.published import PUBLISHED, published_section


def _summary(mean: float, lo: float, hi: float, n: int = 40) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": "proc", "adapter": "state-aware", "split": "all", "group_by": "all",
                          "metric": "upstream/AP", "mean": mean, "ci_lo": lo, "ci_hi": hi, "n": n}])


def test_every_figure_names_its_source_and_protocol():
    assert {(f.adapter, f.metric, f.value) for f in PUBLISHED} == {
        ("state-aware", "upstream/AP", 0.79), ("state-aware", "upstream/P@1", 0.78),
        ("action-only", "upstream/AP", 0.72), ("action-only", "upstream/P@1", 0.65)}
    assert all("c220f741f7630c1ac00fdb6063fb436a8c2cc2e7" in f.source and f.n == 40 for f in PUBLISHED)


def test_gap_outside_the_ci_is_flagged():
    text = published_section("proc", "procedural", _summary(0.63, 0.55, 0.71))
    assert "| state-aware | upstream/AP | 0.6300 [0.550, 0.710] (n=40) | ~0.79 (n=40) | **gap outside our CI** (-0.160) |" in text
    # ~0.79 reads as [0.785, 0.795]: touching a CI that ends at 0.786 is within it
    assert "within our CI" in published_section("proc", "procedural", _summary(0.70, 0.60, 0.786))
    assert "not comparable: 6 questions here" in published_section("proc", "procedural", _summary(0.7, 0.6, 0.8, 6))
    assert published_section("proc", "locomo", _summary(0.7, 0.6, 0.8)) == ""
