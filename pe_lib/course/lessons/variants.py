r"""Variants of the sinusoidal formula, and the checks that tell them apart.

The paper's encoding gives the sine in column :math:`2i` and the cosine in
column :math:`2i+1` *the same* angle :math:`p / N^{2i/d}`. A common rewrite
gives every column its own exponent instead:

.. math::

    \text{PE}(t, k) = \begin{cases}
        \sin\left(t / N^{k/d}\right) & k \text{ even},\\
        \cos\left(t / N^{k/d}\right) & k \text{ odd},
    \end{cases}
    \qquad k = 1, \dots, d, \quad t = 1, \dots, L.

Then no sine shares its angle with a cosine, and the properties that rest on
:math:`\sin^2 + \cos^2 = 1` are lost. :func:`pair_squared_radii` and
:func:`fit_shift_map` measure two of them on any table.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pe_lib._checks import require_float_dtype, require_int, require_positive_float


def per_column_exponent_encoding(
    length: int,
    depth: int,
    *,
    base: float = 10000.0,
    first_position: int = 1,
    first_column: int = 1,
    dtype="float32",
) -> np.ndarray:
    r"""The ``(length, depth)`` table of the "each column its own exponent" variant.

    Column ``c`` has index :math:`k = \text{first\_column} + c` and holds
    :math:`\sin(t / N^{k/d})` for even :math:`k`, :math:`\cos(t / N^{k/d})`
    for odd :math:`k`; row ``r`` encodes position
    :math:`t = \text{first\_position} + r`.

    Args:
        length: number of positions (rows), ``>= 0``.
        depth: encoding size :math:`d` (columns), ``>= 1``.
        base: the constant :math:`N`.
        first_position: the position :math:`t` of the first row; ``1`` as in
            the formula above, ``0`` as in the paper.
        first_column: the index :math:`k` of the first column; ``1`` as in the
            formula above (so the first column is a cosine and the last
            exponent is exactly 1).
        dtype: a floating-point dtype for the result.

    Returns:
        An array of shape ``(length, depth)``, computed from float64 angles.

    Example:
        With base 16 and depth 4 the angles are t/2, t/4, t/8 and t/16:
        cos, sin, cos, sin.

        >>> per_column_exponent_encoding(2, 4, base=16.0).round(4)
        array([[0.8776, 0.2474, 0.9922, 0.0625],
               [0.5403, 0.4794, 0.9689, 0.1247]], dtype=float32)
    """
    length = require_int("length", length, minimum=0)
    depth = require_int("depth", depth, minimum=1)
    base = require_positive_float("base", base)
    first_position = require_int("first_position", first_position, minimum=0)
    first_column = require_int("first_column", first_column, minimum=0)
    dtype = require_float_dtype("dtype", dtype)

    k = first_column + np.arange(depth)
    t = first_position + np.arange(length, dtype=np.float64)
    angles = t[:, None] * base ** (-k / depth)
    table = np.where(k % 2 == 0, np.sin(angles), np.cos(angles))
    return table.astype(dtype)


def _as_table(table) -> np.ndarray:
    """``table`` as a finite 2-D float64 array, or an error naming it."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"table must be 2-D (positions, columns), got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("table must be finite, got NaN or infinity")
    return table


def pair_squared_radii(table) -> np.ndarray:
    r"""Squared length of each column pair: ``table[:, 2j]**2 + table[:, 2j+1]**2``.

    For the paper's encoding every pair is a sine and a cosine of one angle, so
    every entry is 1. An odd last column has no partner and is left out.

    Args:
        table: an array of shape ``(positions, columns)`` with at least 2 columns.

    Returns:
        An array of shape ``(positions, columns // 2)``, in float64.

    Example:
        >>> pair_squared_radii([[0.6, 0.8, 1.0, 1.0, 0.5]])
        array([[1., 2.]])
    """
    table = _as_table(table)
    if table.shape[1] < 2:
        raise ValueError(f"table must have at least 2 columns to form a pair, got {table.shape[1]}")
    pairs = table.shape[1] // 2
    return table[:, 0 : 2 * pairs : 2] ** 2 + table[:, 1 : 2 * pairs : 2] ** 2


class ShiftFit(NamedTuple):
    """The least-squares linear map from row ``t`` to row ``t + shift`` and its errors."""

    matrix: np.ndarray
    rms_error: float
    max_error: float


def fit_shift_map(table, shift: int) -> ShiftFit:
    r"""Fit one matrix :math:`M` with ``table[t] @ M ≈ table[t + shift]`` for every ``t``.

    If shifting the position by ``shift`` is a fixed linear map of the code,
    as it is for the paper's encoding (a rotation of each sine-cosine pair),
    the errors are at the level of the table's rounding. If it is not, no
    matrix can make them small. The fit is done in float64.

    Args:
        table: an array of shape ``(positions, columns)``; row ``t`` is the
            code of the ``t``-th position.
        shift: how many positions to move, ``>= 1``. There must be more
            pairs of rows (``positions - shift``) than columns, or a matrix
            could fit them exactly whatever the table.

    Returns:
        A :class:`ShiftFit`: the ``(columns, columns)`` matrix, and the
        root-mean-square and largest absolute error of the fitted rows.

    Example:
        >>> angles = np.arange(20.0) * 0.3
        >>> circle = np.column_stack([np.sin(angles), np.cos(angles)])
        >>> fit = fit_shift_map(circle, 1)
        >>> fit.matrix.round(4)       # a rotation by 0.3 radians
        array([[ 0.9553, -0.2955],
               [ 0.2955,  0.9553]])
        >>> fit.max_error < 1e-12
        True
    """
    table = _as_table(table)
    shift = require_int("shift", shift, minimum=1)
    positions, columns = table.shape
    if positions - shift <= columns:
        raise ValueError(
            f"shift must leave more pairs of rows than columns ({columns}): "
            f"{positions} positions and shift {shift} leave {max(positions - shift, 0)}"
        )
    inputs, targets = table[:-shift], table[shift:]
    matrix, *_ = np.linalg.lstsq(inputs, targets, rcond=None)
    errors = inputs @ matrix - targets
    return ShiftFit(matrix, float(np.sqrt(np.mean(errors**2))), float(np.abs(errors).max()))
