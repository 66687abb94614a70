"""Masking: the score a hidden key gets, and the values of a mask, read to be checked."""

from __future__ import annotations

import numpy as np
from keras import backend, ops


def masked_score(dtype) -> float:
    """A score whose softmax weight is 0, finite in ``dtype``.

    -1e9 where the dtype holds it (float32, float64, bfloat16); in float16,
    whose largest finite value is 65504, half of the most negative value, so
    that adding an ordinary score to it cannot overflow to :math:`-\\infty`.
    Keras' own softmax masks float16 scores the same way.

    Example:
        >>> masked_score("float32"), masked_score("float16")
        (-1000000000.0, -32752.0)
    """
    dtype = backend.standardize_dtype(dtype)
    if dtype == "float16":
        return float(np.finfo(np.float16).min) / 2
    return -1e9


def concrete(tensor):
    """The values of ``tensor`` as a NumPy array, or ``None`` while it is symbolic (traced).

    Checks of values (a mask of 0 and 1, positions inside a table) run on
    eager calls; inside a compiled function the values are not known yet.

    >>> concrete(np.array([0, 1])).tolist()
    [0, 1]
    """
    try:
        return np.asarray(ops.convert_to_numpy(tensor))
    except Exception:  # a symbolic tensor or a tracer: no values to check yet
        return None
