"""Validity rule 2: oracle-ish question metadata reaches only adapters that declare it, and the report
marks those adapters."""

from __future__ import annotations

import pandas as pd

from membench.benchmarks.registry import benchmark
from membench.adapters.base import Adapter
from membench.report.results import results_section
from membench.stages.rank import rank_dataset


class Recorder(Adapter):
    """Scores every document 0 and remembers the metadata each query arrived with."""

    name = "recorder"

    def __init__(self, **params):
        super().__init__(**params)
        self.seen = []

    def score(self, query, documents):
        self.seen.append(dict(query.metadata))
        return [0.0] * len(documents)


class CategoryReader(Recorder):
    name = "category-reader"
    uses_metadata = ("category",)


def test_metadata_reaches_only_declaring_adapters(ingested):
    plain, declared = Recorder(), CategoryReader()
    rank_dataset(benchmark("locomo"), ingested["locomo"], plain, depth=3)
    rank_dataset(benchmark("locomo"), ingested["locomo"], declared, depth=3)
    assert plain.seen and all(m == {} for m in plain.seen)
    assert len(declared.seen) == 1986
    assert pd.Series([m["category"] for m in declared.seen]).value_counts().to_dict() == {
        4: 841, 5: 446, 2: 321, 1: 282, 3: 96}


def test_report_marks_adapters_that_read_metadata():
    rows = [{"dataset": "d", "adapter": a, "split": "all", "group_by": "all", "group": "all",
             "metric": "evidence_recall@10", "mean": 0.5, "ci_lo": 0.4, "ci_hi": 0.6, "n": 10, "n_skipped": 0}
            for a in ("bm25", "category-reader")]
    sig = pd.DataFrame(columns=["dataset", "adapter", "baseline", "split", "metric", "mean_diff", "ci_lo",
                                "ci_hi", "p_value", "n"])
    metas = {"bm25": {"uses_metadata": []}, "category-reader": {"uses_metadata": ["category"]}}
    text = results_section("d", benchmark("locomo"), pd.DataFrame(rows), sig, metas, "bm25")
    assert "| category-reader † |" in text and "| bm25 |" in text
    assert "† reads oracle-ish question metadata (category-reader: category)" in text
