"""Bootstrap CIs and the paired sign-flip test."""

import math
import time

import numpy as np
import pytest

from membench.stats import bootstrap_ci, paired_test


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
    assert r["p_value"] == pytest.approx(0.25, abs=0.005)


def test_paired_exact_enumeration_n2_ties():
    # d = [1, 1]: sums 2, 0, 0, -2 -> |mean| >= 1 in 2 of 4 -> exact p = 0.5
    r = paired_test([1.0, 1.0], [0.0, 0.0], n_resamples=100_000, seed=1)
    assert r["p_value"] == pytest.approx(0.5, abs=0.01)


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


def test_speed_10000_by_2000():
    rng = np.random.default_rng(0)
    a, b = rng.random(2000), rng.random(2000)
    paired_test(a[:10], b[:10])  # warm-up
    t = time.perf_counter()
    bootstrap_ci(a, n_resamples=10000)
    t_ci = time.perf_counter() - t
    t = time.perf_counter()
    paired_test(a, b, n_resamples=10000)
    t_pair = time.perf_counter() - t
    assert t_ci < 1.0, t_ci
    assert t_pair < 1.5, t_pair  # sign flips + a bootstrap CI
