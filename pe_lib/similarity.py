r"""The dot product of two encodings depends only on how far apart they are.

For an even depth :math:`D`, each sine-cosine pair contributes
:math:`\sin p\omega \sin q\omega + \cos p\omega \cos q\omega = \cos (p - q)\omega`, so

.. math::

    PE(p) \cdot PE(q) = \sum_i \cos\big((p - q)\,\omega_i\big),
    \qquad
    \lVert PE(p) - PE(q) \rVert^2 = 4 \sum_i \sin^2\!\big((p - q)\,\omega_i / 2\big).

Both are functions of the offset :math:`k = p - q` alone. An odd depth adds
the lone sine product :math:`\sin p\omega \sin q\omega`, which depends on
:math:`p + q` as well, so the functions here refuse an odd depth.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_even, require_int
from pe_lib.frequencies import angle_rates

#: Why an odd depth is refused, for the error messages.
_ODD_DEPTH = "with an odd depth the lone sine column makes the result depend on p + q too"


def _as_offsets(offsets) -> np.ndarray:
    """``offsets`` as a float64 array of finite numbers, or an error naming it."""
    array = np.asarray(offsets)
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise TypeError(f"offsets must be integers or real numbers, got {offsets!r}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"offsets must be finite, got {offsets!r}")
    return array.astype(np.float64)


def _offset_angles(offsets, depth: int, base: float) -> np.ndarray:
    """Angles :math:`k\\omega_i`, with a last axis of one angle per sine-cosine pair."""
    offsets = _as_offsets(offsets)
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    return np.multiply.outer(offsets, angle_rates(depth, base=base))


def offset_similarity(offsets, depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The dot product :math:`PE(p) \cdot PE(p + k) = \sum_i \cos k\omega_i` for each offset :math:`k`.

    Args:
        offsets: one offset :math:`k` or an array of them (integers, or real
            numbers for a smooth curve).
        depth: the encoding size :math:`D`, even.
        base: the constant :math:`N` of the encoding.

    Returns:
        A float64 array of the shape of ``offsets``. It is even in :math:`k`
        and largest, :math:`D/2`, at :math:`k = 0`.

    Example:
        For depth 4 the rates are 1 and 1/100, so the value is
        :math:`\cos k + \cos(k/100)`:

        >>> offset_similarity([0, 1, -1], 4).round(4)
        array([2.    , 1.5403, 1.5403])
    """
    return np.cos(_offset_angles(offsets, depth, base)).sum(axis=-1)


def offset_distance(offsets, depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The distance :math:`\lVert PE(p + k) - PE(p) \rVert` for each offset :math:`k`.

    Computed as :math:`2\sqrt{\sum_i \sin^2(k\omega_i/2)}`, which equals
    :math:`\sqrt{D - 2\,S(k)}` with :math:`S` from :func:`offset_similarity`
    but loses no digits to cancellation when :math:`S(k)` is close to :math:`D/2`.

    Args:
        offsets: one offset :math:`k` or an array of them.
        depth: the encoding size :math:`D`, even.
        base: the constant :math:`N` of the encoding.

    Returns:
        A float64 array of the shape of ``offsets``, zero only at :math:`k = 0`
        for whole-number offsets.

    Example:
        With depth 2 the code is a point on the unit circle, so the distance
        is the chord :math:`2|\sin(k/2)|`:

        >>> offset_distance([0, 1, 2], 2).round(4)
        array([0.    , 0.9589, 1.6829])
    """
    half_angles = _offset_angles(offsets, depth, base) / 2
    return 2.0 * np.sqrt((np.sin(half_angles) ** 2).sum(axis=-1))


def first_closer_offset(depth: int, *, base: float = 10000.0, last: int = 10**6) -> int | None:
    r"""The first offset :math:`k \ge 2` whose code lies closer to position 0's than the neighbour's.

    Scans :math:`k = 2, \dots,` ``last`` with :func:`offset_distance`, in
    blocks, and returns ``None`` when no offset up to ``last`` comes closer
    than :math:`k = 1`.

    Args:
        depth: the encoding size :math:`D`, even.
        base: the constant :math:`N` of the encoding.
        last: the largest offset searched, at least 2.

    Example:
        At depth 4 offset 6, nearly a turn of pair 0, comes closer than the
        neighbour; at depth 64 none does within the first 10,000:

        >>> first_closer_offset(4)
        6
        >>> first_closer_offset(64, last=10_000) is None
        True
    """
    last = require_int("last", last, minimum=2)
    neighbour = offset_distance(1, depth, base=base)
    block = 250_000
    for begin in range(2, last + 1, block):
        offsets = np.arange(begin, min(begin + block, last + 1))
        closer = offset_distance(offsets, depth, base=base) < neighbour
        if closer.any():
            return int(offsets[np.argmax(closer)])
    return None
