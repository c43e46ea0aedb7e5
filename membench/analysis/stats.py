"""Uncertainty for per-question metric means: bootstrap CIs, a paired randomisation test, Holm's correction.

Every function works on many columns at once (one column = one adapter x metric x question slice): the
resamples are drawn once per sample size and applied to all columns of that size as one matrix product
(multiplicities @ values), so 10,000 resamples over every group of a run take seconds.

Resampling unit: a *question* by default. With ``clusters`` (one label per row, e.g. LoCoMo's
conversation), the bootstrap is two-stage: clusters are drawn with replacement, then every drawn copy of a
cluster draws its own questions with replacement (Davison & Hinkley 1997, sec. 3.8, both stages resampled).
Drawing clusters alone misses the spread within them and, with LoCoMo's 10 conversations, gave a CI
narrower than the question bootstrap; two stages carry both the between-conversation and the
within-conversation spread, so they are never narrower in expectation (and conservative with few clusters).
In the paired test whole clusters are sign-flipped together, because questions about the same conversation
are not independent.

Draws are deterministic for a seed: a column of n values gets exactly the draws of
``numpy.random.default_rng(seed).integers(0, n, size=(rows, n))`` taken in blocks of
``2,000,000 // n`` rows (the layout membench has always used), whatever other columns it is computed with.
With clusters, the first stage is that layout over the k clusters, and the second stage draws from
``numpy.random.default_rng([seed, 1])``; columns with the same valid-question count per cluster share draws.

NaN marks a question a metric does not define; it is dropped before resampling (in the paired test a pair
is dropped when either side is NaN). ``n`` is the count actually used.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["bootstrap_ci", "paired_test", "bootstrap_matrix", "paired_matrix", "holm"]

_BLOCK_ELEMENTS = 2_000_000  # draws generated per block (x 8 bytes)
_COLUMN_CHUNK = 512  # columns whose resampled statistics are held in memory at once


def _block_rows(n: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(n, 1))


def _multiplicities(n: int, n_resamples: int, seed: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """Blocks (start, stop, W): W[r, i] = how often unit i is drawn in resample r (bootstrap with replacement)."""
    rng = np.random.default_rng(seed)
    rows = _block_rows(n)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        flat = (idx + n * np.arange(stop - start)[:, None]).ravel()
        yield start, stop, np.bincount(flat, minlength=(stop - start) * n).reshape(stop - start, n).astype(float)


def _two_stage(sizes: np.ndarray, n_resamples: int, seed: int) -> Iterator[tuple[int, int, tuple]]:
    """Blocks (start, stop, (W, M)) for clusters of ``sizes`` questions (questions numbered cluster by cluster):
    W[r, c] = how often cluster c is drawn (exactly ``_multiplicities(k)``); M[r, i] = how often question i is
    drawn when every drawn copy of its cluster redraws that cluster's questions with replacement."""
    k, n = sizes.size, int(sizes.sum())
    offsets = np.cumsum(sizes) - sizes
    rng = np.random.default_rng([seed, 1])
    step = _block_rows(n)
    for start, stop, w in _multiplicities(k, n_resamples, seed):
        for s in range(0, stop - start, step):
            part = w[s:s + step]
            r = part.shape[0]
            flat = []
            for c in range(k):  # cluster c's questions, drawn sizes[c] times per drawn copy of c
                draws = part[:, c].astype(np.int64) * sizes[c]
                rows = np.repeat(np.arange(r, dtype=np.int64) * n + offsets[c], draws)
                flat.append(rows + rng.integers(0, sizes[c], rows.size))
            m = np.bincount(np.concatenate(flat), minlength=r * n).reshape(r, n).astype(float)
            yield start + s, start + s + r, (part, m)


def _signs(n: int, n_resamples: int, seed: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """Blocks (start, stop, S): independent random signs (+1/-1) for each of n units in every resample."""
    rng = np.random.default_rng(seed)
    rows = _block_rows(n)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        yield start, stop, (rng.integers(0, 2, size=(stop - start, n), dtype=np.int8) * 2 - 1).astype(float)


def _every_sign_pattern(n: int) -> np.ndarray:
    """All 2**n sign vectors (+1/-1) over n units, one per row."""
    bits = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1
    return 1.0 - 2.0 * bits


def _resampled(blocks: Callable[[], Iterator[tuple[int, int, Any]]], n_resamples: int,
               stat: Callable[[Any], np.ndarray], width: int) -> np.ndarray:
    out = np.empty((n_resamples, width))
    for start, stop, w in blocks():
        out[start:stop] = stat(w)
    return out


class _Units:
    """Columns reduced to resampling units: per column, the sum and count of its values in each unit.

    Question unit: every valid value is its own unit (sum = value, count = 1). Cluster unit: a unit is a
    cluster holding at least one valid value of the column; the values also come back ordered cluster by
    cluster, for the second bootstrap stage. Columns are grouped by their number of units (question unit) or
    by their count per cluster (cluster unit), and each group is stacked so that one draw serves every column
    of the group.
    """

    def __init__(self, x: np.ndarray, clusters: np.ndarray | None):
        self.valid = ~np.isnan(x)
        self.x = x
        self.clusters = None if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]

    def column(self, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sum per unit, count per unit, the values ordered unit by unit)."""
        keep = self.valid[:, c]
        values = self.x[keep, c]
        if self.clusters is None:
            return values, np.ones_like(values), values
        labels = self.clusters[keep]
        present, inverse = np.unique(labels, return_inverse=True)
        return (np.bincount(inverse, weights=values, minlength=present.size),
                np.bincount(inverse, minlength=present.size).astype(float),
                values[np.argsort(inverse, kind="stable")])

    def groups(self, columns: np.ndarray) -> dict:
        """{key: [(column, sums, counts, ordered values)]}; key = the unit count, or the counts per cluster."""
        out: dict = {}
        for c in columns:
            sums, counts, ordered = self.column(int(c))
            key = sums.size if self.clusters is None else tuple(counts.astype(int))
            out.setdefault(key, []).append((int(c), sums, counts, ordered))
        return out


def _chunks(items: list, size: int = _COLUMN_CHUNK):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _column_means(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    valid = ~np.isnan(x)
    n = valid.sum(axis=0)
    mean = np.array([x[valid[:, c], c].mean() if n[c] else math.nan for c in range(x.shape[1])])
    return mean, n


def _as_matrix(values) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"expected a vector or a (questions x columns) matrix, got shape {x.shape}")
    return x


def _check(n_resamples: int, confidence: float = 0.95) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")


def bootstrap_matrix(values, n_resamples: int = 10000, confidence: float = 0.95, seed: int = 0,
                     clusters=None) -> dict[str, np.ndarray]:
    """Per column of ``values`` (questions x columns, NaN = not defined): ``mean``, percentile-bootstrap
    ``lo``/``hi`` (numpy's linear-interpolated quantiles of the resampled means), ``n`` (values used) and
    ``units`` (resampling units: questions, or clusters when ``clusters`` labels the rows).

    Fewer than 2 units give NaN bounds (one value, or one cluster, cannot show its own spread).
    """
    _check(n_resamples, confidence)
    x = _as_matrix(values)
    mean, n = _column_means(x)
    lo, hi = np.full(x.shape[1], math.nan), np.full(x.shape[1], math.nan)
    units = np.zeros(x.shape[1], dtype=int)
    alpha = 1.0 - confidence
    for key, members in _Units(x, clusters).groups(np.flatnonzero(n > 0)).items():
        size = members[0][1].size
        for c, *_ in members:
            units[c] = size
        if size < 2:
            continue
        for part in _chunks(members):
            cols = [c for c, *_ in part]
            if clusters is None:
                sums = np.column_stack([s for _, s, _, _ in part])
                stat = lambda w: (w @ sums) / size  # noqa: E731
                blocks = lambda: _multiplicities(size, n_resamples, seed)  # noqa: E731
            else:
                ordered = np.column_stack([v for *_, v in part])
                counts = np.column_stack([k for _, _, k, _ in part])
                stat = lambda wm: (wm[1] @ ordered) / (wm[0] @ counts)  # noqa: E731
                blocks = lambda: _two_stage(np.asarray(key), n_resamples, seed)  # noqa: E731
            means = _resampled(blocks, n_resamples, stat, len(cols))
            lo[cols], hi[cols] = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=0)
    return {"mean": mean, "lo": lo, "hi": hi, "n": n, "units": units}


def paired_matrix(a, b, n_resamples: int = 10000, seed: int = 0, clusters=None) -> dict[str, np.ndarray]:
    """Paired comparison per column: system ``a`` vs ``b`` on the same questions (rows).

    Returns arrays ``mean_diff`` (mean of a - b), ``p_value``, 95% bootstrap ``lo``/``hi`` of the mean
    difference, ``n`` (pairs used), ``units`` and ``wins``/``ties``/``losses`` (questions where a > b,
    a == b, a < b).

    ``p_value``: two-sided paired randomisation (sign-flip) test. Under the null each unit's difference is as
    likely to have either sign (a cluster's questions flip together). With u units and 2**u <= n_resamples,
    every sign pattern is enumerated and p is exact: #{patterns with |mean| >= |observed|} / 2**u (LoCoMo's
    10 conversations: 1,024 patterns, so p >= 2/1024). Otherwise ``n_resamples`` random patterns give means
    m_j and ``p = (#{j : |m_j| >= |observed|} + 1) / (n_resamples + 1)`` (never 0). A relative tolerance of
    1e-12 absorbs float round-off. Identical columns give p = 1; n = 0 gives NaN.
    """
    _check(n_resamples)
    xa, xb = _as_matrix(a), _as_matrix(b)
    if xa.shape != xb.shape:
        raise ValueError(f"paired inputs differ in shape: {xa.shape} vs {xb.shape}")
    d = xa - xb  # NaN when either side is NaN
    ci = bootstrap_matrix(d, n_resamples, 0.95, seed, clusters)
    p = np.full(d.shape[1], math.nan)
    by_size: dict[int, list] = {}
    for members in _Units(d, clusters).groups(np.flatnonzero(ci["n"] > 0)).values():
        by_size.setdefault(members[0][1].size, []).extend(members)
    for size, members in by_size.items():
        for part in _chunks(members):
            cols = [c for c, *_ in part]
            sums = np.column_stack([s for _, s, _, _ in part])
            total = ci["n"][cols]
            exact = 2 ** size <= n_resamples
            if exact:  # few units: every sign pattern once, an exact permutation p-value
                null = (_every_sign_pattern(size) @ sums) / total
            else:
                null = _resampled(lambda: _signs(size, n_resamples, seed), n_resamples,
                                  lambda s: (s @ sums) / total, len(cols))
            observed = np.abs(ci["mean"][cols])
            tol = 1e-12 * np.maximum(1.0, np.abs(sums).max(axis=0))
            extreme = np.count_nonzero(np.abs(null) >= observed - tol, axis=0)
            p[cols] = extreme / len(null) if exact else (extreme + 1) / (n_resamples + 1)
    valid = ~np.isnan(d)
    with np.errstate(invalid="ignore"):
        wins, ties, losses = ((valid & (d > 0)).sum(0), (valid & (d == 0)).sum(0), (valid & (d < 0)).sum(0))
    return {"mean_diff": ci["mean"], "p_value": p, "lo": ci["lo"], "hi": ci["hi"], "n": ci["n"],
            "units": ci["units"], "wins": wins, "ties": ties, "losses": losses}


def bootstrap_ci(values, n_resamples: int = 10000, confidence: float = 0.95, seed: int = 0,
                 clusters=None) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of one vector: the sample mean and a percentile-bootstrap CI (see bootstrap_matrix).

    n = 0 gives all NaN; n = 1 (or one cluster) gives the value and NaN bounds.
    """
    r = bootstrap_matrix(np.asarray(values, dtype=float).ravel(), n_resamples, confidence, seed, clusters)
    return (float(r["mean"][0]), float(r["lo"][0]), float(r["hi"][0]))


def paired_test(a, b, n_resamples: int = 10000, seed: int = 0, clusters=None) -> dict[str, float]:
    """One paired comparison (see paired_matrix): ``mean_diff``, ``p_value``, ``lo``, ``hi``, ``n``,
    ``wins``, ``ties``, ``losses``."""
    a_arr, b_arr = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a_arr.shape != b_arr.shape:
        raise ValueError(f"paired vectors differ in length: {a_arr.size} vs {b_arr.size}")
    r = paired_matrix(a_arr, b_arr, n_resamples, seed, clusters)
    out = {k: float(r[k][0]) for k in ("mean_diff", "p_value", "lo", "hi")}
    out.update({k: int(r[k][0]) for k in ("n", "wins", "ties", "losses")})
    return out


def holm(p_values) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values for one family (NaN entries are not tests and stay NaN).

    With the m valid p-values sorted p(1) <= ... <= p(m): adj(i) = max over j <= i of min(1, (m - j + 1) p(j)).
    Rejecting where adj <= alpha controls the family-wise error rate at alpha.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, math.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        order = ok[np.argsort(p[ok], kind="stable")]
        m = order.size
        scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(scaled)
    return out
