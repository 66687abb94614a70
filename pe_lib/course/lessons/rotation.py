r"""Moving along the sequence is a rotation: :math:`PE(p + k) = M_k\,PE(p)`.

For the sine-cosine pair with rate :math:`\omega`, the angle-addition formulas give

.. math::

    \begin{pmatrix} \sin (p+k)\omega \\ \cos (p+k)\omega \end{pmatrix}
    = \begin{pmatrix} \cos k\omega & \sin k\omega \\ -\sin k\omega & \cos k\omega \end{pmatrix}
      \begin{pmatrix} \sin p\omega \\ \cos p\omega \end{pmatrix}.

Stacking one such block per pair gives the block-diagonal matrix :math:`M_k`. It
depends on the offset :math:`k` and not on the position :math:`p`. The blocks
follow the interleaved layout (sin, cos, sin, cos, ...) of
:func:`~pe_lib.sinusoidal.sinusoidal_encoding`.

An odd depth ends with a lone sine column. Shifting it needs
:math:`\cos p\omega`, a value that row :math:`p` does not hold, so no matrix
maps :math:`PE(p)` to :math:`PE(p + k)`; both functions here refuse an odd depth.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_even, require_int
from pe_lib.frequencies import angle_rates

#: Why an odd depth is refused, for the error messages.
_ODD_DEPTH = "an odd depth ends with a lone sine column, which no matrix can shift"


def rotation_matrix(offset: int, depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The matrix :math:`M_k` with :math:`PE(p + k) = M_k\,PE(p)` for every position :math:`p`.

    Args:
        offset: the shift :math:`k`, any integer; a negative one moves back.
        depth: the encoding size, even and ``>= 2``.
        base: the constant :math:`N` of the encoding.

    Returns:
        A float64 ``(depth, depth)`` array, block diagonal with one 2x2
        rotation per sine-cosine pair. It is orthogonal, :math:`M_0 = I`, and
        :math:`M_a M_b = M_{a+b}`, so :math:`M_{-k} = M_k^\top`.

    Example:
        For depth 4 the rates are 1 and 1/100:

        >>> rotation_matrix(1, 4).round(4)
        array([[ 0.5403,  0.8415,  0.    ,  0.    ],
               [-0.8415,  0.5403,  0.    ,  0.    ],
               [ 0.    ,  0.    ,  1.    ,  0.01  ],
               [ 0.    ,  0.    , -0.01  ,  1.    ]])
    """
    offset = require_int("offset", offset)
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    angles = offset * angle_rates(depth, base=base)
    sines = np.arange(0, depth, 2)
    cosines = sines + 1
    matrix = np.zeros((depth, depth))
    matrix[sines, sines] = matrix[cosines, cosines] = np.cos(angles)
    matrix[sines, cosines] = np.sin(angles)
    matrix[cosines, sines] = -np.sin(angles)
    return matrix


def rotate_encoding(codes, offset: int, *, base: float = 10000.0) -> np.ndarray:
    r"""Apply :math:`M_k` to every code in ``codes``, one 2x2 rotation per column pair.

    The same result as ``codes @ rotation_matrix(offset, depth).T``, without
    building the matrix: :math:`O(\text{depth})` work per code, not
    :math:`O(\text{depth}^2)`.

    Args:
        codes: an array whose last axis (the depth, even) holds interleaved
            encodings; a single row or a whole table.
        offset: the shift :math:`k`, any integer.
        base: the constant :math:`N` of the encoding.

    Returns:
        The codes of the positions ``offset`` further on, as a float64
        array of the same shape.

    Example:
        >>> from pe_lib import sinusoidal_encoding
        >>> table = sinusoidal_encoding(10, 6, dtype="float64")
        >>> np.allclose(rotate_encoding(table[2], 5), table[7])
        True
        >>> np.allclose(rotate_encoding(table[5:], -5), table[:5])
        True
    """
    codes = np.asarray(codes, dtype=np.float64)
    if codes.ndim == 0:
        raise ValueError(f"codes must have at least one axis (the depth), got shape {codes.shape}")
    if not np.all(np.isfinite(codes)):
        raise ValueError("codes must be finite, got NaN or infinity")
    try:
        depth = require_even("depth", codes.shape[-1], reason=_ODD_DEPTH)
    except ValueError as error:
        raise ValueError(f"codes: the last axis is the depth; {error}") from None
    offset = require_int("offset", offset)
    angles = offset * angle_rates(depth, base=base)
    cos, sin = np.cos(angles), np.sin(angles)
    rotated = np.empty_like(codes)
    rotated[..., 0::2] = cos * codes[..., 0::2] + sin * codes[..., 1::2]
    rotated[..., 1::2] = cos * codes[..., 1::2] - sin * codes[..., 0::2]
    return rotated
