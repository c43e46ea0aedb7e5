"""aggregate: every column resampled together equals one column at a time; Holm per family; clusters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from membench.analysis.aggregate import Resampling, aggregate
from membench.analysis.stats import bootstrap_ci, holm, paired_test


def _scores(values: dict[str, list[float]], qtypes: list[str]) -> pd.DataFrame:
    rows = [{"question_id": f"q{i}", "metric": m, "value": v, "split": ("tune", "holdout")[i % 2],
             "question_type": qtypes[i], "tier": None, "skip": None}
            for m, vs in values.items() for i, v in enumerate(vs)]
    return pd.DataFrame(rows).astype({"tier": "string", "skip": "string"})


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    qtypes = ["x", "y"] * 10
    out = []
    for adapter, shift in (("base", 0.0), ("a", 0.3), ("b", 0.0)):
        values = {m: list(np.clip(rng.random(20) + shift, 0, 1)) for m in ("m1", "m2", "m3")}
        path = tmp_path / f"{adapter}.parquet"
        _scores(values, qtypes).to_parquet(path)
        out.append(("d", adapter, path))
    return out


def test_summary_and_tests_equal_one_column_at_a_time(files):
    summary, sig = aggregate(files, "base", resamples=2000, seed=3, headlines={"d": ["m1", "m2"]})
    frames = {a: pd.read_parquet(p) for _, a, p in files}
    row = summary[(summary.adapter == "a") & (summary.metric == "m2") & (summary.group == "y")].iloc[0]
    values = frames["a"][(frames["a"].metric == "m2") & (frames["a"].question_type == "y")].value
    assert (row["mean"], row.ci_lo, row.ci_hi) == pytest.approx(bootstrap_ci(values, 2000, seed=3), abs=1e-12)
    assert row.n == 10 and row.unit == "question"
    test = sig[(sig.adapter == "b") & (sig.metric == "m3") & (sig.split == "holdout")].iloc[0]
    pick = lambda a: frames[a][(frames[a].metric == "m3") & (frames[a].split == "holdout")].sort_values(  # noqa: E731
        "question_id").value.to_numpy()  # paired tests go in question-id order
    one = paired_test(pick("b"), pick("base"), 2000, seed=3)
    assert test.p_value == one["p_value"] and (test.wins, test.ties, test.losses) == (one["wins"], 0, one["losses"])
    # families: per split, adapters x headline metrics (2 x 2 = 4 tests), and adapters x the rest (2 x 1)
    fam = sig[sig.split == "all"].groupby("family").family_size.first().to_dict()
    assert fam == {"d/all/headline": 4, "d/all/other": 2}
    head = sig[sig.family == "d/all/headline"]
    assert head.p_holm.to_numpy() == pytest.approx(holm(head.p_value.to_numpy()))
    assert (head.p_holm >= head.p_value).all()


def test_cluster_unit_is_recorded_and_widens(files):
    clusters = pd.Series({f"q{i}": f"c{i // 5}" for i in range(20)})  # 4 clusters of 5 questions
    by_q, _ = aggregate(files, "base", resamples=2000, seed=0)
    by_c, sig = aggregate(files, "base", resamples=2000, seed=0,
                          resampling={"d": Resampling("conversation", clusters)})
    assert set(by_c.unit) == {"conversation"} and set(sig.unit) == {"conversation"}
    assert by_c["mean"].tolist() == by_q["mean"].tolist()  # the unit changes the CIs, never the means


def test_unknown_cluster_is_a_clear_error(files):
    with pytest.raises(ValueError, match="no conversation known"):
        aggregate(files, "base", resamples=100, resampling={"d": Resampling("conversation", pd.Series({"q0": "c"}))})


def test_a_question_skipped_by_every_metric_is_left_out_of_every_slice(files, tmp_path):
    """LongMemEval's abstention questions are skipped by every retrieval metric, so they are absent from the
    counted rows; with Arrow-backed strings (as the score Parquet files are read) they must not turn a split
    or group mask into NA."""
    extra = []
    for _, adapter, path in files:
        frame = pd.read_parquet(path)
        skipped = pd.DataFrame([{"question_id": "q20_abs", "metric": m, "value": np.nan, "split": "holdout",
                                 "question_type": "x", "tier": None, "skip": "abstention"} for m in ("m1", "m2", "m3")])
        both = pd.concat([frame, skipped.astype(frame.dtypes.to_dict())], ignore_index=True)
        both = both.astype({c: "string[pyarrow]" for c in ("question_id", "metric", "split", "question_type",
                                                            "tier", "skip")})
        both.to_parquet(tmp_path / f"{adapter}-abs.parquet")
        extra.append(("d", adapter, tmp_path / f"{adapter}-abs.parquet"))
    summary, _ = aggregate(extra, "base", resamples=200, seed=0)
    whole, _ = aggregate(files, "base", resamples=200, seed=0)
    cols = ["adapter", "metric", "split", "group_by", "group", "mean", "ci_lo", "ci_hi", "n"]
    assert summary[cols].reset_index(drop=True).equals(whole[cols].reset_index(drop=True))
    row = summary[(summary.adapter == "a") & (summary.metric == "m1") & (summary.split == "holdout")
                  & (summary.group_by == "all")].iloc[0]
    assert (row.n, row.n_skipped) == (10, 1)

