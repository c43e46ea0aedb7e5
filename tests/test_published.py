"""Published figures beside ours: the cited table, the protocol a run must match (file, unit, metric, k, the
built-in with its defaults), and the gap flag."""

from __future__ import annotations

import pandas as pd
import pytest

from membench.report.paper_figures import PUBLISHED, Published, published_section, source_names

M_FILE = {"kind": "longmemeval", "url": "https://host/datasets/longmemeval_m.json"}
PROC_FILES = {"kind": "procedural", "files": [{"url": "https://h/agentinstruct_trajectories.json"},
                                             {"url": "https://h/query_bank.json"}]}
UPSTREAM_RUN = {"bm25-upstream": {"adapter": "bm25-upstream", "config": {}, "depth": "full"}}
PROC_RUNS = {"state-aware": {"adapter": "state-aware", "config": {"model_path": None}, "depth": "full"}}


def _summary(mean: float, lo: float, hi: float, n: int = 40, dataset: str = "proc", adapter: str = "state-aware",
             metric: str = "upstream/AP") -> pd.DataFrame:
    return pd.DataFrame([{"dataset": dataset, "adapter": adapter, "split": "all", "group_by": "all",
                          "metric": metric, "mean": mean, "ci_lo": lo, "ci_hi": hi, "n": n}])


def _proc(summary: pd.DataFrame) -> str:
    return published_section("proc", "procedural", summary, PROC_FILES, PROC_RUNS)


def _lme(mean: float, lo: float, hi: float, n: int = 470, metric: str = "session/recall_all@5") -> pd.DataFrame:
    return _summary(mean, lo, hi, n, "lme", "bm25-upstream", metric)


def test_every_figure_names_its_source_and_protocol():
    procedural = [f for f in PUBLISHED if f.kind == "procedural"]
    assert {(f.adapter, f.metric, f.value, f.k) for f in procedural} == {
        ("state-aware", "upstream/AP", 0.79, 10), ("state-aware", "upstream/P@1", 0.78, 1),
        ("action-only", "upstream/AP", 0.72, 10), ("action-only", "upstream/P@1", 0.65, 1)}
    assert all("c220f741f7630c1ac00fdb6063fb436a8c2cc2e7" in f.source and f.n == 40 and
               f.file_name == "query_bank.json" for f in procedural)
    longmemeval = [f for f in PUBLISHED if f.kind == "longmemeval"]
    assert {(f.adapter, f.metric, f.value, f.decimals, f.k) for f in longmemeval} == {
        ("bm25-upstream", "session/recall_all@5", 0.634, 3, 5), ("bm25-upstream", "session/ndcg_any@5", 0.516, 3, 5),
        ("bm25-upstream", "session/recall_all@10", 0.710, 3, 10),
        ("bm25-upstream", "session/ndcg_any@10", 0.540, 3, 10)}
    assert all("2410.10813v2" in f.source and "Table 9" in f.source and f.n == 470 and f.file_name == "longmemeval_m"
               for f in longmemeval)
    # LongMemEval_S has no BM25 figure in the paper, and LoCoMo's Table 3 (DRAGON) no protocol a built-in runs
    assert {f.kind for f in PUBLISHED} == {"procedural", "longmemeval"}
    assert all(f.units == "upstream" for f in PUBLISHED)
    assert all(f.metric.endswith(f"@{f.k}") for f in PUBLISHED if f.metric != "upstream/AP")  # AP: over the top 10


def test_gap_outside_the_ci_is_flagged():
    text = _proc(_summary(0.63, 0.55, 0.71))
    assert "| state-aware | upstream/AP | 0.6300 [0.550, 0.710] (n=40) | ~0.79 (n=40) | **gap outside our CI** (-0.160) |" in text
    assert "`state-aware` (default parameters) on `query_bank.json`, units upstream, upstream/AP (k = 10)" in text
    # ~0.79 reads as [0.785, 0.795]: touching a CI that ends at 0.786 is within it
    assert "within our CI" in _proc(_summary(0.70, 0.60, 0.786))
    assert "not comparable: 6 questions here" in _proc(_summary(0.7, 0.6, 0.8, 6))
    assert published_section("proc", "locomo", _summary(0.7, 0.6, 0.8), PROC_FILES, PROC_RUNS) == ""


def test_longmemeval_bm25_session_row_beside_ours():
    # Table 9 prints 0.634 (exact, no "~"): it stands for [0.6335, 0.6345]
    text = published_section("lme", "longmemeval", _lme(0.7, 0.66, 0.74), M_FILE, UPSTREAM_RUN)
    assert ("| bm25-upstream | session/recall_all@5 | 0.7000 [0.660, 0.740] (n=470) | 0.634 (n=470) "
            "| **gap outside our CI** (+0.066) |") in text
    assert "arXiv:2410.10813v2" in text and "Table 9" in text and "LongMemEval_M" in text
    assert "| 0.634 (n=470) | within our CI |" in published_section(
        "lme", "longmemeval", _lme(0.65, 0.634, 0.66), M_FILE, UPSTREAM_RUN)
    # 0.6345 is the top of the printed figure's rounding: a CI starting at 0.6346 misses it
    assert "gap outside our CI** (+0.016)" in published_section(
        "lme", "longmemeval", _lme(0.65, 0.6346, 0.67), M_FILE, UPSTREAM_RUN)
    ndcg = published_section("lme", "longmemeval", _lme(0.5, 0.45, 0.55, metric="session/ndcg_any@10"), M_FILE,
                             UPSTREAM_RUN)
    assert "| bm25-upstream | session/ndcg_any@10 | 0.5000 [0.450, 0.550] (n=470) | 0.540 (n=470) | within our CI |" in ndcg
    assert "not comparable: 2 questions here, 470 published" in published_section(
        "lme", "longmemeval", _lme(0.5, 0.0, 1.0, n=2), M_FILE, UPSTREAM_RUN)


def test_longmemeval_figure_needs_the_m_file(tmp_path):
    summary = _lme(0.7, 0.66, 0.74)
    for spec in ({"kind": "longmemeval", "url": "https://host/longmemeval_s_cleaned.json"},
                 {"kind": "longmemeval", "path": "/data/longmemeval_m/longmemeval_oracle.json"}, {}):
        assert published_section("lme", "longmemeval", summary, spec, UPSTREAM_RUN) == ""
    assert published_section("lme", "longmemeval", summary, {"path": "/d/longmemeval_m_cleaned.json"},
                             UPSTREAM_RUN) != ""
    # a `path:` folder is matched by the files in it, not by its own name
    (tmp_path / "lme").mkdir()
    (tmp_path / "lme" / "longmemeval_s_cleaned.json").write_text("[]")
    assert published_section("lme", "longmemeval", summary, {"path": str(tmp_path / "lme")}, UPSTREAM_RUN) == ""
    (tmp_path / "lme" / "longmemeval_s_cleaned.json").rename(tmp_path / "lme" / "longmemeval_m_cleaned.json")
    assert published_section("lme", "longmemeval", summary, {"path": str(tmp_path / "lme")}, UPSTREAM_RUN) != ""
    assert source_names({"url": "https://h/a/x.json", "path": "/p/dir/", "files": [{"url": "https://h/y.json"}]}) == [
        "x.json", "dir", "y.json"]


@pytest.mark.parametrize("run, shown", [
    ({"adapter": "bm25-upstream", "config": {}, "depth": "full"}, True),
    ({"adapter": "bm25", "config": {"k1": 1.5, "b": 0.75, "epsilon": 0.25}, "depth": "full"}, False),  # other system
    ({"adapter": "bm25-upstream", "config": {"k1": 2.0}, "depth": "full"}, False),  # not its default parameters
])
def test_figure_follows_the_built_in_behind_the_run_not_its_name(run, shown):
    """A run is matched by the built-in it runs and its parameters: here every run is *called* bm25-upstream."""
    text = published_section("lme", "longmemeval", _lme(0.7, 0.66, 0.74), M_FILE, {"bm25-upstream": run})
    assert (text != "") is shown


def test_unit_and_depth_must_match(monkeypatch):
    """A figure taken at k over one retrieval unit is shown only for a run indexed in that unit and ranked k deep
    (a LoCoMo-like figure made here: LoCoMo's own paper figures have no protocol a built-in runs)."""
    figure = Published("locomo", "bm25", "evidence_recall@25", 0.5, 2, "a source", "a protocol", "all", 1986, 25,
                       "locomo10.json")
    spec = {"kind": "locomo", "url": "https://h/locomo10.json", "units": "upstream"}
    meta = {"adapter": "bm25", "config": {"k1": 1.5, "b": 0.75, "epsilon": 0.25}, "depth": 50}
    summary = _summary(0.5, 0.45, 0.55, 1986, "locomo", "bm25", "evidence_recall@25")
    monkeypatch.setattr("membench.report.paper_figures.PUBLISHED", (figure,))
    assert "| bm25 | evidence_recall@25 |" in published_section("locomo", "locomo", summary, spec, {"bm25": meta})
    assert published_section("locomo", "locomo", summary, {**spec, "units": "plain"}, {"bm25": meta}) == ""
    assert published_section("locomo", "locomo", summary, spec, {"bm25": {**meta, "depth": 10}}) == ""
    assert published_section("locomo", "locomo", summary, {**spec, "url": "https://h/other.json"}, {"bm25": meta}) == ""
