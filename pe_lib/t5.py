r"""T5's relative-position buckets (Raffel et al., 2020).

T5 adds to each attention score a learned scalar that depends on the offset
:math:`j - i` between key and query, one scalar per *bucket* of offsets and per
head. Small distances get a bucket each; larger ones share buckets whose widths
grow geometrically; everything from ``max_distance`` on shares the last one.

For a distance :math:`n \ge 0` and :math:`B` buckets (per direction), with
:math:`E = B / 2` exact buckets and :math:`D` = ``max_distance``:

.. math::

    \operatorname{bucket}(n) =
    \begin{cases}
      n & n < E, \\
      \min\!\Big(B - 1,\; E + \Big\lfloor \dfrac{\ln(n / E)}{\ln(D / E)}\,(B - E) \Big\rfloor\Big) & n \ge E .
    \end{cases}

*Bidirectional* (encoder) attention splits ``num_buckets`` in two: keys before
the query (and the query itself) use buckets ``0 .. B - 1`` with
:math:`n = i - j`, keys after it use ``B .. 2B - 1`` with :math:`n = j - i`.
*Causal* (decoder) attention uses all ``num_buckets`` for keys at or before the
query, and puts keys after it (which a causal mask hides anyway) in bucket 0.

No logarithm is taken. The floor lands on :math:`k` exactly when
:math:`n \ge E\,(D/E)^{k/(B-E)}`, that is when
:math:`n^{B-E} E^{k} \ge D^{k} E^{B-E}`, a comparison of integers that Python
makes exactly (:func:`bucket_thresholds`). A floating-point logarithm gets the
distances where the formula lands on an integer wrong: with
``num_buckets=20, max_distance=160``, offset :math:`-10` is in bucket 6, since
:math:`\lfloor 5 \ln 2 / \ln 32 \rfloor = 1`, while the float64 quotient is
0.9999999999999999. Names in the peers (Hugging Face's
``_relative_position_bucket``, keras-hub's ``T5`` layers): the same
``bidirectional``, ``num_buckets`` and ``max_distance``; their offset is
``memory_position - query_position``, as here. The Keras layer is
:class:`pe_lib.layers.T5RelativeBias`.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int


def _require_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return bool(value)


def _check_settings(bidirectional, num_buckets, max_distance) -> tuple[bool, int, int]:
    """Checked ``(bidirectional, buckets per direction, max_distance)``."""
    bidirectional = _require_bool("bidirectional", bidirectional)
    num_buckets = require_int("num_buckets", num_buckets, minimum=4 if bidirectional else 2)
    if bidirectional and num_buckets % 2:
        raise ValueError(f"num_buckets must be even when bidirectional (half per direction), got {num_buckets}")
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    max_distance = require_int("max_distance", max_distance, minimum=1)
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance must exceed the {max_exact} exactly bucketed distances, got {max_distance}"
        )
    return bidirectional, per_direction, max_distance


def relative_position_bucket(
    offsets, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    """T5's bucket for each offset ``j - i`` (key position minus query position).

    Args:
        offsets: an integer or an integer array of offsets ``j - i``.
        bidirectional: ``True`` for an encoder (offsets of both signs get
            their own buckets), ``False`` for causal attention.
        num_buckets: the total number of buckets, T5's default 32; even and
            ``>= 4`` when bidirectional, ``>= 2`` otherwise.
        max_distance: the distance from which every offset shares the last
            bucket of its direction; it must exceed the exact range.

    Returns:
        An int64 array of the shape of ``offsets`` with values in
        ``0 .. num_buckets - 1``.

    Example:
        With T5's defaults, offsets up to 7 back get a bucket each, offsets
        after the query use buckets 16 to 31, and 128 or more share the last:

        >>> relative_position_bucket([0, -1, -7, -8, -12, -16, -127, -128, -1000, 1, 1000])
        array([ 0,  1,  7,  8,  9, 10, 15, 15, 15, 17, 31])
        >>> relative_position_bucket([-1, -16, -32, -128, 5], bidirectional=False)
        array([ 1, 16, 21, 31,  0])
    """
    bidirectional, per_direction, max_distance = _check_settings(bidirectional, num_buckets, max_distance)
    offsets = np.asarray(offsets)
    if not np.issubdtype(offsets.dtype, np.integer):
        raise TypeError(f"offsets must be integers, got {offsets.tolist()!r} (dtype {offsets.dtype})")
    offsets = offsets.astype(np.int64)
    if bidirectional:
        first = np.where(offsets > 0, per_direction, 0)
        distance = np.abs(offsets)
    else:
        first = np.zeros_like(offsets)
        distance = np.maximum(-offsets, 0)
    starts = _thresholds(per_direction, max_distance)
    return first + np.searchsorted(starts, distance, side="right") - 1


def _integer_root_ceiling(value: int, degree: int) -> int:
    """The smallest integer ``r >= 0`` with ``r**degree >= value``, by bisection on integers."""
    low, high = 0, 1 << (value.bit_length() // degree + 1)
    while low < high:
        middle = (low + high) // 2
        if middle**degree >= value:
            high = middle
        else:
            low = middle + 1
    return low


def _thresholds(per_direction: int, max_distance: int) -> np.ndarray:
    """Entry ``b``: the smallest distance whose bucket is ``b`` or more (see :func:`bucket_thresholds`)."""
    max_exact = per_direction // 2
    steps = per_direction - max_exact
    starts = list(range(max_exact + 1))  # 0 .. E - 1 exact, then E opens bucket E
    for k in range(1, steps):
        # smallest n with n**steps * E**k >= D**k * E**steps, i.e. n**steps >= D**k * E**(steps - k)
        starts.append(max(_integer_root_ceiling(max_distance**k * max_exact ** (steps - k), steps), max_exact))
    return np.array(starts, dtype=np.int64)


def bucket_thresholds(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Entry ``b`` is the smallest distance whose bucket (in one direction) is ``b`` or more, exactly.

    The bucket of a distance :math:`n` is the number of entries ``<= n``
    minus one. Where every bucket holds a distance, entry ``b`` is the
    smallest distance in bucket ``b``. A bucket that no distance falls in
    holds the same entry as the bucket after it (the smallest distance
    whose bucket is later still), so equal neighbours mark it; with 5
    buckets per direction and ``max_distance=3``, bucket 3 is empty:

    >>> bucket_thresholds(num_buckets=20, max_distance=160)
    array([ 0,  1,  2,  3,  4,  5, 10, 20, 40, 80])
    >>> bucket_thresholds(num_buckets=10, max_distance=3)
    array([0, 1, 2, 3, 3])
    """
    _, per_direction, max_distance = _check_settings(bidirectional, num_buckets, max_distance)
    return _thresholds(per_direction, max_distance)


def bucket_matrix(
    length: int, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    """The ``(length, length)`` matrix of buckets: entry ``[i, j]`` is the bucket of ``j - i``.

    With 8 buckets, 4 per direction: distances 0 and 1 are exact, 2 and 3
    get a bucket each, and from ``max_distance = 4`` on they share the last:

    >>> bucket_matrix(5, num_buckets=8, max_distance=4)
    array([[0, 5, 6, 7, 7],
           [1, 0, 5, 6, 7],
           [2, 1, 0, 5, 6],
           [3, 2, 1, 0, 5],
           [3, 3, 2, 1, 0]])
    """
    length = require_int("length", length, minimum=1)
    positions = np.arange(length, dtype=np.int64)
    return relative_position_bucket(
        positions[None, :] - positions[:, None],
        bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance,
    )


def bucket_starts(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Entry ``b`` is the smallest distance back from the query (``i - j``) whose bucket is ``b`` or more.

    An empty bucket, one that no distance falls in, gets the entry of the
    next bucket that holds a distance (or of the last bucket): the smallest
    distance past it.

    These are :func:`bucket_thresholds`, read as distances back from the
    query. Where every bucket holds a distance, entry ``b`` is the first
    distance in bucket ``b`` and the differences between neighbours are the
    bucket widths: one for the exact buckets, then growing roughly
    geometrically. A bucket no distance falls in has width zero: it repeats
    the entry of the bucket after it (T5's defaults have none; the second
    example has six, buckets 9 to 14).

    >>> bucket_starts()
    array([ 0,  1,  2,  3,  4,  5,  6,  7,  8, 12, 16, 23, 32, 46, 64, 91])
    >>> bucket_starts(num_buckets=32, max_distance=9)
    array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 9, 9, 9])
    """
    return bucket_thresholds(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
