r"""How alike the rows of a position table are: neighbours against rows far apart.

Learned or fixed looks inside a trained learned table: the rows that training
reached come out more alike next to each other than far apart, a little of the
shape the sinusoidal table has by construction. :func:`near_and_far_similarity`
measures it, on the chapter's run and on each recorded seed
(:mod:`pe_lib.course.order.seeds`); :func:`chance_gap` says how far apart the two
means come by chance, for rows drawn at random.
"""

from __future__ import annotations

import numpy as np


def near_and_far_similarity(table, rows: int, far: int) -> tuple[float, float]:
    """The mean cosine similarity of the first ``rows`` rows of ``table``, one
    step apart and ``far`` or more steps apart.

    >>> table = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    >>> near, distant = near_and_far_similarity(table, rows=3, far=2)
    >>> round(near, 4), round(distant, 4)
    (0.7071, 0.0)
    """
    table = np.asarray(table, dtype="float64")
    if table.ndim != 2:
        raise ValueError(f"table must be a matrix, one row per position; got shape {table.shape}")
    if not 2 <= rows <= len(table):
        raise ValueError(f"rows must be from 2 to the table's {len(table)} rows; got rows={rows}")
    _check_far(rows, far)
    unit = table[:rows] / np.linalg.norm(table[:rows], axis=1, keepdims=True)
    similarity = unit @ unit.T
    offsets = np.abs(np.subtract.outer(np.arange(rows), np.arange(rows)))
    return float(similarity[offsets == 1].mean()), float(similarity[offsets >= far].mean())


def chance_gap(width: int, rows: int, far: int) -> float:
    r"""How wide the gap between the two means of :func:`near_and_far_similarity`
    grows by chance: three standard deviations of it for rows drawn at random,
    with ``width`` entries each.

    The cosine of two independent random directions has mean 0 and variance
    about ``1/width``, and the cosines of distinct pairs of rows are
    uncorrelated. So a mean over ``k`` pairs has variance ``1/(width * k)``, and
    the gap between the means over the ``rows - 1`` neighbouring pairs and over
    the pairs ``far`` or more apart has the sum of the two.

    >>> round(chance_gap(32, rows=12, far=6), 3)
    0.197
    """
    if width < 1:
        raise ValueError(f"width must be at least 1; got width={width}")
    _check_far(rows, far)
    near_pairs = rows - 1
    far_pairs = sum(rows - offset for offset in range(far, rows))
    return 3 * float(np.sqrt(1 / (width * near_pairs) + 1 / (width * far_pairs)))


def _check_far(rows: int, far: int) -> None:
    if not 1 < far < rows:
        raise ValueError(f"far must be more than 1 and less than rows={rows}; got far={far}")
