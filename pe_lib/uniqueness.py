"""How far apart the closest two positions' codes are: the test of a unique encoding."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pe_lib._checks import require_int


class PositionPair(NamedTuple):
    """Two positions and the Euclidean distance between their codes."""

    first: int
    second: int
    distance: float


def nearest_pairs(codes, count: int = 1) -> list[PositionPair]:
    """The ``count`` pairs of positions whose codes are closest together.

    Row ``p`` of ``codes`` is the code of position ``p``; a 1-D array is one
    value per position (a single wave). Pairs come back closest first, each
    with ``first < second``; equal distances are ordered by position. The
    search compares every pair, so it costs
    ``O(length**2)`` memory: fine for a few thousand positions.

    >>> one_wave = np.sin(np.arange(50.0))   # rate 1 radian per position
    >>> closest = nearest_pairs(one_wave)[0]
    >>> closest.first, closest.second, round(closest.distance, 4)
    (8, 14, 0.0012)
    """
    codes = np.asarray(codes, dtype=np.float64)
    if codes.ndim == 1:
        codes = codes[:, None]
    if codes.ndim != 2:
        raise ValueError(f"codes must be 1-D or 2-D, got shape {codes.shape}")
    if not np.all(np.isfinite(codes)):
        raise ValueError("codes must be finite, got NaN or infinity")
    positions = codes.shape[0]
    most = positions * (positions - 1) // 2
    count = require_int("count", count, minimum=1)
    if count > most:
        raise ValueError(f"count must be at most {most} for {positions} positions, got {count}")

    squared_norms = np.einsum("ij,ij->i", codes, codes)
    squared = squared_norms[:, None] + squared_norms[None, :] - 2.0 * codes @ codes.T
    squared[np.tril_indices(positions)] = np.inf
    # The Gram-matrix shortcut carries rounding error, so keep every pair that
    # could tie with the count-th closest, then measure each one directly.
    cutoff = np.partition(squared, count - 1, axis=None)[count - 1]
    slack = 1e-9 * max(1.0, float(squared_norms.max()))
    firsts, seconds = np.nonzero(squared <= cutoff + slack)
    distances = np.linalg.norm(codes[firsts] - codes[seconds], axis=1)
    # Distances equal to 12 decimals count as ties, broken by position, so the
    # order does not depend on the last bits of floating-point rounding.
    order = np.lexsort((seconds, firsts, np.round(distances, 12)))[:count]
    return [PositionPair(int(firsts[k]), int(seconds[k]), float(distances[k])) for k in order]
