"""Bootstrap CIs and the paired sign-flip test."""

import math

import numpy as np
import pytest

from membench.analysis.stats import bootstrap_ci, bootstrap_matrix, holm, paired_matrix, paired_test


def test_bootstrap_ci_contains_mean_and_is_deterministic():
    values = np.random.default_rng(7).random(300)
    mean, lo, hi = bootstrap_ci(values, seed=3)
    assert mean == pytest.approx(values.mean())
    assert lo < mean < hi
    assert bootstrap_ci(values, seed=3) == (mean, lo, hi)
    assert bootstrap_ci(values, seed=4) != (mean, lo, hi)
    # a wider confidence gives a wider interval
    _, lo99, hi99 = bootstrap_ci(values, confidence=0.99, seed=3)
    assert lo99 <= lo and hi99 >= hi


def test_bootstrap_ci_two_values_by_hand():
    # resampling [0, 1] twice: mean 0 w.p. 1/4, 0.5 w.p. 1/2, 1 w.p. 1/4 -> 2.5% / 97.5% quantiles are 0 and 1
    mean, lo, hi = bootstrap_ci([0.0, 1.0], n_resamples=20000, seed=0)
    assert (mean, lo, hi) == (0.5, 0.0, 1.0)


def test_bootstrap_ci_small_and_nan():
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    mean, lo, hi = bootstrap_ci([0.25])
    assert mean == 0.25 and math.isnan(lo) and math.isnan(hi)
    # NaN entries are dropped
    assert bootstrap_ci([1.0, float("nan"), 1.0]) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], confidence=1.0)


def test_paired_identical_vectors_p_is_one():
    a = np.random.default_rng(1).random(200)
    r = paired_test(a, a.copy())
    assert r["mean_diff"] == 0.0
    assert r["p_value"] == 1.0
    assert r["lo"] == 0.0 and r["hi"] == 0.0


def test_paired_strong_shift():
    rng = np.random.default_rng(2)
    b = rng.random(200)
    a = b + 0.2 + rng.normal(0, 0.05, 200)
    r = paired_test(a, b, n_resamples=10000, seed=0)
    assert r["p_value"] < 0.01
    assert r["p_value"] == pytest.approx(1 / 10001)  # no sign pattern reaches the observed mean
    assert r["lo"] < r["mean_diff"] < r["hi"]
    assert r["lo"] > 0.15
    assert paired_test(a, b, seed=0) == r
    assert paired_test(b, a, seed=0)["p_value"] == r["p_value"]


def test_paired_exact_enumeration_n3():
    # d = [1, 2, 3]: the 8 sign patterns give sums 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 in 2 of 8 -> exact p = 0.25
    r = paired_test([1, 2, 3], [0, 0, 0], n_resamples=200_000, seed=5)
    assert r["mean_diff"] == 2.0
    assert r["p_value"] == 0.25  # 8 patterns <= 200,000 resamples: enumerated, exact
    assert paired_test([1, 2, 3], [0, 0, 0], n_resamples=7, seed=5)["p_value"] in {k / 8 for k in range(1, 9)}


def test_paired_exact_enumeration_n2_ties():
    # d = [1, 1]: sums 2, 0, 0, -2 -> |mean| >= 1 in 2 of 4 -> exact p = 0.5
    r = paired_test([1.0, 1.0], [0.0, 0.0], n_resamples=100_000, seed=1)
    assert r["p_value"] == 0.5


def test_paired_p_value_granularity():
    # p = (count + 1) / (n_resamples + 1): with 9 resamples p is a multiple of 0.1
    r = paired_test([0.3, 0.1, 0.2, 0.5], [0.1, 0.2, 0.0, 0.1], n_resamples=9, seed=0)
    assert round(r["p_value"] * 10, 9) == round(r["p_value"] * 10)
    assert 0.1 <= r["p_value"] <= 1.0


def test_paired_small_n_and_nan():
    r0 = paired_test([], [])
    assert r0["n"] == 0 and all(math.isnan(r0[k]) for k in ("mean_diff", "p_value", "lo", "hi"))
    r1 = paired_test([0.7], [0.2])
    assert r1["n"] == 1 and r1["mean_diff"] == pytest.approx(0.5) and r1["p_value"] == 1.0
    assert math.isnan(r1["lo"]) and math.isnan(r1["hi"])
    # a pair with a NaN side is dropped
    r = paired_test([1.0, float("nan"), 0.5], [0.0, 0.3, 0.5])
    assert r["n"] == 2 and r["mean_diff"] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        paired_test([1.0], [1.0, 2.0])


def test_holm_on_a_hand_computed_vector():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = holm([0.01, float("nan"), 0.04])  # NaN is not a test: m = 2
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)
    assert holm([0.5, 0.6]).tolist() == [1.0, 1.0]  # capped at 1, then monotone
    assert holm([]).size == 0


def test_cluster_bootstrap_widens_when_a_cluster_is_one_value():
    # two clusters of four identical questions: resampling 2 clusters gives 0, .5, 1 w.p. 1/4, 1/2, 1/4
    values = [0.0] * 4 + [1.0] * 4
    clusters = ["a"] * 4 + ["b"] * 4
    assert bootstrap_ci(values, n_resamples=20000, seed=0, clusters=clusters) == (0.5, 0.0, 1.0)
    _, lo, hi = bootstrap_ci(values, n_resamples=20000, seed=0)
    assert 0.0 < lo < 0.5 < hi < 1.0  # 8 independent questions: narrower
    mean, lo, hi = bootstrap_ci([0.3] * 5, clusters=["a"] * 5)  # one cluster shows no spread
    assert mean == pytest.approx(0.3) and math.isnan(lo) and math.isnan(hi)


def test_two_stage_keeps_the_spread_within_clusters():
    # both clusters hold {0, 1}: every cluster mean is .5, so drawing clusters alone would give [.5, .5];
    # the second stage redraws each cluster's two questions (sum 0, 1, 2 w.p. 1/4, 1/2, 1/4), so the mean of a
    # resample of two cluster copies is (s1 + s2) / 4 with s1 + s2 = 0..4 w.p. 1/16, 4/16, 6/16, 4/16, 1/16
    mean, lo, hi = bootstrap_ci([0.0, 1.0, 0.0, 1.0], n_resamples=20000, seed=0, clusters=["a", "a", "b", "b"])
    assert (mean, lo, hi) == (0.5, 0.0, 1.0)  # 1/16 in each tail is more than the 2.5% cut
    r = bootstrap_matrix(np.array([[0.0], [1.0], [0.0], [1.0]]), n_resamples=20000, seed=0,
                         clusters=["a", "a", "b", "b"])
    assert r["units"].tolist() == [2]


def test_singleton_clusters_equal_the_question_bootstrap():
    values = np.random.default_rng(3).random(50)
    per_question = bootstrap_ci(values, seed=2)
    assert bootstrap_ci(values, seed=2, clusters=np.arange(50)) == pytest.approx(per_question, abs=1e-12)


def test_cluster_paired_test_flips_whole_clusters():
    # cluster sums of the differences are 1, 2, 3: |sum| >= 6 in 2 of the 8 cluster sign patterns -> p = 0.25,
    # while 5 independent questions would give 2 of 32 = 0.0625
    a, b = [0.5, 0.5, 1.0, 1.0, 3.0], [0.0] * 5
    r = paired_test(a, b, n_resamples=200_000, seed=5, clusters=["x", "x", "y", "y", "z"])
    assert r["mean_diff"] == pytest.approx(1.2) and r["p_value"] == 0.25
    assert paired_test(a, b, n_resamples=200_000, seed=5)["p_value"] == 0.0625
    # 3 clusters but only 4 resamples: random patterns, p = (count + 1) / 5
    assert paired_test(a, b, n_resamples=4, seed=5, clusters=["x", "x", "y", "y", "z"])["p_value"] in {0.2, 0.4, 0.6, 0.8, 1.0}


def test_win_tie_loss_counts():
    r = paired_test([1.0, 0.5, 0.2, float("nan"), 0.0], [0.0, 0.5, 0.9, 1.0, 0.0])
    assert (r["wins"], r["ties"], r["losses"], r["n"]) == (1, 2, 1, 4)


def test_matrix_columns_equal_one_vector_at_a_time():
    rng = np.random.default_rng(4)
    a, b = rng.random((60, 3)), rng.random((60, 3))
    a[:10, 1] = np.nan  # a column with fewer values gets its own draws
    boot, paired = bootstrap_matrix(a, seed=1), paired_matrix(a, b, seed=1)
    for c in range(3):
        assert bootstrap_ci(a[:, c], seed=1) == pytest.approx((boot["mean"][c], boot["lo"][c], boot["hi"][c]), abs=1e-12)
        one = paired_test(a[:, c], b[:, c], seed=1)
        assert one["p_value"] == paired["p_value"][c] and one["n"] == paired["n"][c]
        assert one["lo"] == pytest.approx(paired["lo"][c], abs=1e-12)
