"""Uncertainty for per-question metric means: bootstrap CIs and a paired randomisation test.

Both functions resample *questions* (the unit of the benchmark), are deterministic for a given seed
(``numpy.random.default_rng(seed)``), and work in fixed-size blocks of resamples so that memory stays
small: 10,000 resamples x 2,000 questions take a fraction of a second.

NaN values mark questions a metric does not define (e.g. no relevant item); they are dropped before
resampling (in :func:`paired_test`, a pair is dropped when either side is NaN). The returned ``n`` is
the count actually used.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bootstrap_ci", "paired_test", "bootstrap_means", "signflip_means"]

_BLOCK_ELEMENTS = 2_000_000  # indices generated per block (x 8 bytes)


def _clean(values) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    return arr[~np.isnan(arr)]


def _block_rows(n: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(n, 1))


def _in_blocks(n_resamples: int, n: int, draw) -> np.ndarray:
    """Fill `n_resamples` statistics block by block (memory stays bounded); `draw(rows)` gives one block."""
    out = np.empty(n_resamples, dtype=float)
    rows = _block_rows(n)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        out[start:stop] = draw(stop - start)
    return out


def bootstrap_means(values: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement, same size) of ``values``."""
    n = values.size
    return _in_blocks(n_resamples, n, lambda rows: values[rng.integers(0, n, size=(rows, n))].mean(axis=1))


def signflip_means(diffs: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``diffs`` under ``n_resamples`` independent random sign flips of every entry."""
    n = diffs.size

    def draw(rows: int) -> np.ndarray:
        signs = rng.integers(0, 2, size=(rows, n), dtype=np.int8) * 2 - 1
        return (signs @ diffs) / n

    return _in_blocks(n_resamples, n, draw)


def bootstrap_ci(
    values, n_resamples: int = 10000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the sample mean and a percentile-bootstrap CI over questions.

    The bounds are the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (numpy's default
    linear interpolation) of the resampled means. n = 0 gives all NaN; n = 1 gives the value and NaN bounds.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    arr = _clean(values)
    if arr.size == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(arr.mean())
    if arr.size == 1:
        return (mean, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = bootstrap_means(arr, n_resamples, rng)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (mean, float(lo), float(hi))


def paired_test(a, b, n_resamples: int = 10000, seed: int = 0) -> dict[str, float]:
    """Paired comparison of two systems on the same questions (``a[i]`` and ``b[i]`` for question i).

    Returns ``mean_diff`` (mean of a - b), ``p_value`` and the 95% percentile-bootstrap CI ``lo``/``hi``
    of the mean difference, plus ``n`` (pairs used).

    ``p_value``: two-sided paired randomisation (sign-flip) test. Under the null each difference is as
    likely to have either sign; ``n_resamples`` random sign patterns give means m_j, and
    ``p = (#{j : |m_j| >= |observed|} + 1) / (n_resamples + 1)`` (the +1 counts the observed pattern, so
    p is never 0). A tiny relative tolerance absorbs float round-off in the comparison. Identical
    vectors give p = 1. n = 0 gives NaN everywhere; n = 1 gives p = 1 and NaN CI bounds.
    """
    a_arr = np.asarray(a, dtype=float).ravel()
    b_arr = np.asarray(b, dtype=float).ravel()
    if a_arr.shape != b_arr.shape:
        raise ValueError(f"paired vectors differ in length: {a_arr.size} vs {b_arr.size}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    keep = ~(np.isnan(a_arr) | np.isnan(b_arr))
    d = a_arr[keep] - b_arr[keep]
    n = int(d.size)
    if n == 0:
        return {"mean_diff": math.nan, "p_value": math.nan, "lo": math.nan, "hi": math.nan, "n": 0}
    observed = float(d.mean())
    rng = np.random.default_rng(seed)
    null = signflip_means(d, n_resamples, rng)
    tol = 1e-12 * max(1.0, float(np.abs(d).max()))
    count = int(np.count_nonzero(np.abs(null) >= abs(observed) - tol))
    p_value = (count + 1) / (n_resamples + 1)
    _, lo, hi = bootstrap_ci(d, n_resamples=n_resamples, confidence=0.95, seed=seed)
    return {"mean_diff": observed, "p_value": p_value, "lo": lo, "hi": hi, "n": n}
