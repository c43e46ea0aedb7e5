"""Cosine scores that are the same bits on every machine, given the same vectors.

Why: `matrix @ vector` runs numpy's BLAS, which picks its kernel by CPU (OpenBLAS's DYNAMIC_ARCH) and may split a
sum across threads, so the same vectors could score differently in their last bits elsewhere, and a near-tie flip.
Here each product of two float32 numbers is exact in float64 (24 + 24 significant bits fit in 53), and the products
are added dimension by dimension, first to last, each step one correctly rounded IEEE addition per document: no
kernel, SIMD width or thread count can change the order, so a score depends on the two vectors alone.
"""

from __future__ import annotations

import numpy as np


def as_columns(vectors: np.ndarray) -> np.ndarray:
    """Document vectors (one row each) in the layout `cosine_scores` reads: float64, one row per dimension."""
    return np.ascontiguousarray(np.asarray(vectors, dtype=np.float64).T)


def cosine_scores(columns: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """The float64 dot product of every document in `columns` (from `as_columns`) with `vector`: with unit
    vectors, their cosines. Sums run over the dimensions in order (a loop of whole-row additions, which is also
    three times faster than one accumulate over the documents' rows)."""
    if columns.shape[0] == 0 or columns.shape[1] == 0:
        return np.zeros(columns.shape[1] if columns.ndim == 2 else 0)
    products = columns * np.asarray(vector, dtype=np.float64)[:, None]
    total = products[0].copy()
    for row in products[1:]:
        total += row
    return total
