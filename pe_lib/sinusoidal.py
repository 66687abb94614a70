r"""The sinusoidal positional encoding of Vaswani et al. (2017).

Row :math:`p` of the table encodes position :math:`p`; column :math:`2i` holds
:math:`\sin(p\,\omega_i)` and column :math:`2i+1` holds :math:`\cos(p\,\omega_i)`,
with :math:`\omega_i` from :func:`~pe_lib.frequencies.angle_rates`.

The table is filled with the rotation the course teaches: for
:math:`p = a + r`, :math:`e^{-i p \omega} = e^{-i a \omega}\,e^{-i r \omega}`.
Both factors come from float64 sines and cosines of small, exactly formed
angles, so one complex multiplication per entry replaces a transcendental
call, and the result rounds correctly to float32 at every position.
"""

from __future__ import annotations

import math

import numpy as np

from pe_lib._checks import require_choice, require_float_dtype, require_int
from pe_lib.frequencies import angle_rates
from pe_lib.layouts import LAYOUTS, interleaved_to_half_split

# Rows filled per block: large enough to amortise Python overhead, small
# enough that one complex128 block stays in cache.
_BLOCK_ROWS = 64


def sinusoidal_encoding(
    length: int,
    depth: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    start: int = 0,
    dtype="float32",
) -> np.ndarray:
    r"""The ``(length, depth)`` table of sinusoidal position encodings.

    Args:
        length: number of positions (rows), ``>= 0``.
        depth: encoding size (columns), ``>= 1``. An odd depth has
            ``ceil(depth/2)`` sine and ``floor(depth/2)`` cosine columns, so
            it ends with a sine column.
        base: the constant :math:`N` in :math:`N^{2i/d}`; ``10000`` in the paper.
        layout: ``"interleaved"`` (sin, cos, sin, cos, ...) as in the paper, or
            ``"half-split"`` (all sines, then all cosines, the layout also
            called "concatenated"; see :mod:`pe_lib.layouts`).
        start: position of the first row; row ``p`` encodes ``start + p``.
        dtype: a floating-point dtype for the result.

    Returns:
        An array of shape ``(length, depth)``. Angles are formed in float64,
        never in the output dtype: a float32 entry is the exact value
        correctly rounded, give or take the float64 error of the angle
        (about ``position * 2**-52``, so 2e-10 at position one million).

    Example:
        >>> sinusoidal_encoding(2, 4).round(4)
        array([[0.    , 1.    , 0.    , 1.    ],
               [0.8415, 0.5403, 0.01  , 1.    ]], dtype=float32)
    """
    length = require_int("length", length, minimum=0)
    depth = require_int("depth", depth, minimum=1)
    start = require_int("start", start, minimum=0)
    layout = require_choice("layout", layout, LAYOUTS)
    dtype = require_float_dtype("dtype", dtype)
    rates = angle_rates(depth, base=base)

    # (sin, cos) of each angle, held as the complex number sin + i cos so that
    # its float64 view is already the interleaved row.
    offsets = np.arange(_BLOCK_ROWS, dtype=np.float64)[:, None] * rates
    within_block = np.sin(offsets) + 1j * np.cos(offsets)
    block_starts = start + np.arange(0, length, _BLOCK_ROWS, dtype=np.float64)
    anchors = block_starts[:, None] * rates
    block_turns = np.cos(anchors) - 1j * np.sin(anchors)

    table = np.empty((length, depth), dtype=dtype)
    product = np.empty_like(within_block)
    interleaved = product.view(np.float64)[:, :depth]
    for block, turn in enumerate(block_turns):
        first = block * _BLOCK_ROWS
        rows = min(_BLOCK_ROWS, length - first)
        np.multiply(turn, within_block, out=product)
        table[first : first + rows] = interleaved[:rows]

    if layout == "half-split":
        table = table[:, interleaved_to_half_split(depth)]
    return table


def sine_and_cosine_counts(depth: int) -> tuple[int, int]:
    """How many sine and cosine columns a depth-``depth`` table has.

    >>> sine_and_cosine_counts(5)
    (3, 2)
    """
    depth = require_int("depth", depth, minimum=1)
    return math.ceil(depth / 2), depth // 2
