"""Published figures beside ours: the cited table, the file match and the gap flag."""

from __future__ import annotations

import pandas as pd

from membench.report.published import PUBLISHED, published_section, source_names

M_FILE = {"kind": "longmemeval", "url": "https://host/datasets/longmemeval_m.json"}


def _summary(mean: float, lo: float, hi: float, n: int = 40, dataset: str = "proc", adapter: str = "state-aware",
             metric: str = "upstream/AP") -> pd.DataFrame:
    return pd.DataFrame([{"dataset": dataset, "adapter": adapter, "split": "all", "group_by": "all",
                          "metric": metric, "mean": mean, "ci_lo": lo, "ci_hi": hi, "n": n}])


def _lme(mean: float, lo: float, hi: float, n: int = 470, metric: str = "session/recall_all@5") -> pd.DataFrame:
    return _summary(mean, lo, hi, n, "lme", "bm25-upstream", metric)


def test_every_figure_names_its_source_and_protocol():
    procedural = [f for f in PUBLISHED if f.kind == "procedural"]
    assert {(f.adapter, f.metric, f.value) for f in procedural} == {
        ("state-aware", "upstream/AP", 0.79), ("state-aware", "upstream/P@1", 0.78),
        ("action-only", "upstream/AP", 0.72), ("action-only", "upstream/P@1", 0.65)}
    assert all("c220f741f7630c1ac00fdb6063fb436a8c2cc2e7" in f.source and f.n == 40 for f in procedural)
    longmemeval = [f for f in PUBLISHED if f.kind == "longmemeval"]
    assert {(f.adapter, f.metric, f.value, f.decimals) for f in longmemeval} == {
        ("bm25-upstream", "session/recall_all@5", 0.634, 3), ("bm25-upstream", "session/ndcg_any@5", 0.516, 3),
        ("bm25-upstream", "session/recall_all@10", 0.710, 3), ("bm25-upstream", "session/ndcg_any@10", 0.540, 3)}
    assert all("2410.10813v2" in f.source and "Table 9" in f.source and f.n == 470 and f.file_name == "longmemeval_m"
               for f in longmemeval)
    assert {f.kind for f in PUBLISHED} == {"procedural", "longmemeval"}


def test_gap_outside_the_ci_is_flagged():
    text = published_section("proc", "procedural", _summary(0.63, 0.55, 0.71))
    assert "| state-aware | upstream/AP | 0.6300 [0.550, 0.710] (n=40) | ~0.79 (n=40) | **gap outside our CI** (-0.160) |" in text
    # ~0.79 reads as [0.785, 0.795]: touching a CI that ends at 0.786 is within it
    assert "within our CI" in published_section("proc", "procedural", _summary(0.70, 0.60, 0.786))
    assert "not comparable: 6 questions here" in published_section("proc", "procedural", _summary(0.7, 0.6, 0.8, 6))
    assert published_section("proc", "locomo", _summary(0.7, 0.6, 0.8)) == ""


def test_longmemeval_bm25_session_row_beside_ours():
    # Table 9 prints 0.634 (exact, no "~"): it stands for [0.6335, 0.6345]
    text = published_section("lme", "longmemeval", _lme(0.7, 0.66, 0.74), M_FILE)
    assert ("| bm25-upstream | session/recall_all@5 | 0.7000 [0.660, 0.740] (n=470) | 0.634 (n=470) "
            "| **gap outside our CI** (+0.066) |") in text
    assert "arXiv:2410.10813v2" in text and "Table 9" in text and "LongMemEval_M" in text
    assert "| 0.634 (n=470) | within our CI |" in published_section("lme", "longmemeval", _lme(0.65, 0.634, 0.66),
                                                                      M_FILE)
    # 0.6345 is the top of the printed figure's rounding: a CI starting at 0.6346 misses it
    assert "gap outside our CI** (+0.016)" in published_section("lme", "longmemeval", _lme(0.65, 0.6346, 0.67),
                                                                M_FILE)
    ndcg = published_section("lme", "longmemeval", _lme(0.5, 0.45, 0.55, metric="session/ndcg_any@10"), M_FILE)
    assert "| bm25-upstream | session/ndcg_any@10 | 0.5000 [0.450, 0.550] (n=470) | 0.540 (n=470) | within our CI |" in ndcg
    assert "not comparable: 2 questions here, 470 published" in published_section(
        "lme", "longmemeval", _lme(0.5, 0.0, 1.0, n=2), M_FILE)


def test_longmemeval_figure_needs_the_m_file():
    summary = _lme(0.7, 0.66, 0.74)
    for spec in ({"kind": "longmemeval", "url": "https://host/longmemeval_s_cleaned.json"},
                 {"kind": "longmemeval", "path": "/data/longmemeval_m/longmemeval_oracle.json"}, {}, None):
        assert published_section("lme", "longmemeval", summary, spec) == ""
    assert published_section("lme", "longmemeval", summary, {"path": "/d/longmemeval_m_cleaned.json"}) != ""
    assert source_names({"url": "https://h/a/x.json", "path": "/p/dir/", "files": [{"url": "https://h/y.json"}]}) == [
        "x.json", "dir", "y.json"]
