r"""Why the angle of the encoding must not be formed in float32.

A float32 number carries 24 significant bits, so near :math:`x` consecutive
float32 values are about :math:`x \cdot 2^{-23}` apart. An angle of
:math:`10^6` radians stored in float32 may be off by up to half of that step,
about 0.03 radians, and the sine passes that error on unchanged. The slow
columns have small angles and stay accurate; the fast ones do not.

:func:`float32_angle_encoding` is the straightforward implementation that makes
this mistake, kept here to be measured; :func:`column_errors` measures any
table against a float64 reference, and :func:`float32_angle_errors` measures
the cause, the rounding of the angles, by IEEE arithmetic alone, so that it
gives the same numbers on every processor. :func:`~pe_lib.sinusoidal.sinusoidal_encoding` forms
its angles in float64 and rounds only the final values.

:func:`rounded_angles` forms the angles as released code would in a given
number format, float32, bfloat16 or float16, with :func:`round_to_format` doing
that format's rounding in float64 (no half-precision type needed), and
:func:`angle_errors` measures them. :func:`rounded_rope_scores` carries such
angles through RoPE to the scores of queries and keys.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_choice, require_int, require_positive_float
from pe_lib.frequencies import angle_rates

#: The significant bits (the leading one included) of each number format, the
#: smallest exponent ``e`` of its normal numbers written as ``m * 2**e`` with
#: ``0.5 <= m < 1``, and its largest finite value.
NUMBER_FORMATS = {
    "float32": (24, -125, float(np.finfo(np.float32).max)),
    "bfloat16": (8, -125, float.fromhex("0x1.fep127")),
    "float16": (11, -13, 65504.0),
    # TF32: float32's exponents with 10 fraction bits, as some GPUs run a
    # float32 matrix product
    "tf32": (11, -125, float.fromhex("0x1.ffcp127")),
}


def _direct_encoding(length: int, depth: int, base: float, start: int, angle_dtype) -> np.ndarray:
    """Interleaved table whose angles ``position * rate`` are formed in ``angle_dtype``."""
    length = require_int("length", length, minimum=0)
    depth = require_int("depth", depth, minimum=1)
    start = require_int("start", start, minimum=0)
    base = require_positive_float("base", base)
    positions = np.arange(start, start + length).astype(angle_dtype)
    angles = positions[:, None] * angle_rates(depth, base=base).astype(angle_dtype)
    table = np.empty((length, depth), dtype=angle_dtype)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : depth // 2])
    return table


def float32_angle_encoding(length: int, depth: int, *, base: float = 10000.0, start: int = 0) -> np.ndarray:
    r"""THE WRONG WAY, kept for teaching: the encoding with its angles formed in float32.

    Positions and rates are converted to float32, multiplied in float32, and
    passed to the float32 sine and cosine. The rounding of each angle grows in
    proportion to the angle itself, so the fast columns lose their accuracy at
    large positions: errors near ``position * 2**-24``. Use
    :func:`~pe_lib.sinusoidal.sinusoidal_encoding` instead.

    Args:
        length: number of positions (rows), ``>= 0``.
        depth: encoding size (columns), ``>= 1``; interleaved layout.
        base: the constant :math:`N` of the encoding.
        start: position of the first row.

    Returns:
        A float32 array of shape ``(length, depth)``.

    Example:
        At position one million the third column is off in the second decimal:

        >>> from pe_lib import sinusoidal_encoding
        >>> wrong = float32_angle_encoding(1, 64, start=10**6)
        >>> right = sinusoidal_encoding(1, 64, start=10**6)
        >>> print(f"{wrong[0, 2]:.4f} instead of {right[0, 2]:.4f}")
        0.7429 instead of 0.7281
    """
    return _direct_encoding(length, depth, base, start, np.float32)


def column_errors(table, *, start: int = 0, base: float = 10000.0) -> np.ndarray:
    r"""The largest absolute error in each column of an interleaved encoding table.

    The reference forms each angle as ``position * rate`` in float64 and takes
    its float64 sine or cosine, so its own error is below
    ``position * 2**-52`` (2e-10 at position one million): far below any
    float32 effect.

    Args:
        table: an array of shape ``(positions, depth)``, row ``r`` claiming to
            be the interleaved encoding of position ``start + r``.
        start: position of the first row.
        base: the constant :math:`N` the table was made with.

    Returns:
        The largest error in each column, as a float64 array of length
        ``depth``; ``.max()`` is the error of the table.

    Example:
        >>> from pe_lib import sinusoidal_encoding
        >>> right = column_errors(sinusoidal_encoding(64, 8, start=10**5), start=10**5)
        >>> wrong = column_errors(float32_angle_encoding(64, 8, start=10**5), start=10**5)
        >>> bool(right.max() < 3e-8), bool(wrong.max() > 1e-4)
        (True, True)
    """
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"table must be 2-D (positions, depth), got shape {table.shape}")
    if table.shape[1] == 0:
        raise ValueError(f"table must have at least one column, got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("table must be finite, got NaN or infinity")
    length, depth = table.shape
    reference = _direct_encoding(length, depth, base, start, np.float64)
    return np.abs(table - reference).max(axis=0, initial=0.0)


def float32_angle_errors(length: int, depth: int, *, base: float = 10000.0, start: int = 0) -> np.ndarray:
    r"""How far the float32 angles of :func:`float32_angle_encoding` are from the true ones.

    For each column, the largest :math:`|\widehat{\theta} - p\,\omega|` over the
    rows, where :math:`\widehat{\theta}` is the float32 product of the float32
    position and the float32 rate. Only IEEE multiplication and rounding are
    involved (no sine, whose last bits differ between processors), so the
    result is the same on every machine; the sine error of a column is at most
    this angle error plus the float32 sine's own rounding.

    Args:
        length: number of positions (rows), ``>= 1``.
        depth: encoding size (columns), ``>= 1``; a sine and its cosine share
            one angle, so they get the same value.
        base: the constant :math:`N` of the encoding.
        start: position of the first row, ``< 2**24`` so that every position
            is a float32 integer and only the rate and the product are rounded.

    Returns:
        A float64 array of length ``depth``.

    Example:
        Rate 1 makes the angle of columns 0 and 1 exact; column 2's rate
        cannot be held in float32:

        >>> errors = float32_angle_errors(32, 4, start=10**6)
        >>> errors[:2].tolist(), bool(errors[2] > 1e-4)
        ([0.0, 0.0], True)
    """
    length = require_int("length", length, minimum=1)
    depth = require_int("depth", depth, minimum=1)
    start = require_int("start", start, minimum=0)
    base = require_positive_float("base", base)
    if start + length > 2**24:
        raise ValueError(
            f"start + length must be at most 2**24 (every position a float32 integer), "
            f"got start={start}, length={length}"
        )
    rates = angle_rates(depth, base=base)
    positions = np.arange(start, start + length, dtype=np.float64)[:, None]
    # Split each rate w into w32 = float32(w) and the exact rest w - w32 (at most
    # 29 significant bits). A position (24 bits) times either part is exact in
    # float64, and so is the difference of the two nearby products (Sterbenz):
    # the error comes out correctly rounded, with no round-off of its own.
    rates32 = rates.astype(np.float32)
    rest = rates - rates32.astype(np.float64)
    rounded = (positions.astype(np.float32) * rates32).astype(np.float64)
    errors = np.abs((rounded - positions * rates32.astype(np.float64)) - positions * rest)
    return np.repeat(errors.max(axis=0), 2)[:depth]


def round_to_format(values, number_format: str) -> np.ndarray:
    r"""Round float64 values to the nearest number of ``number_format``, ties to even.

    A format with ``t`` significant bits holds every whole number up to
    :math:`2^t` and then only every second one: 256 is the last of
    bfloat16's run, 2048 of float16's and TF32's. Values past the largest finite number
    become infinite, as a cast does; small ones keep the format's subnormal steps.

    Args:
        values: numbers, any shape.
        number_format: ``"float32"``, ``"bfloat16"``, ``"float16"`` or ``"tf32"``.

    Returns:
        A float64 array of the rounded values.

    Example:
        >>> round_to_format([256, 257, 258], "bfloat16").tolist()
        [256.0, 256.0, 258.0]
        >>> round_to_format([2049, 70000], "float16").tolist()
        [2048.0, inf]
        >>> round_to_format([2049, 70000], "tf32").tolist()
        [2048.0, 70016.0]
    """
    number_format = require_choice("number_format", number_format, tuple(NUMBER_FORMATS))
    bits, lowest, largest = NUMBER_FORMATS[number_format]
    values = np.asarray(values, dtype=np.float64)
    _, exponent = np.frexp(values)
    step = np.ldexp(1.0, np.maximum(exponent, lowest) - bits)
    with np.errstate(invalid="ignore"):  # infinities stay infinite
        rounded = np.rint(values / step) * step  # a power-of-two step: exact
    return np.where(np.abs(rounded) > largest, np.copysign(np.inf, values), rounded)


def rounded_angles(positions, depth: int, number_format: str, *, base: float = 10000.0) -> np.ndarray:
    r"""The angles :math:`p\,\omega_i` formed in ``number_format``, as float64 values.

    The position and the rate are each rounded to the format, and so is their
    product, as ``positions.to(dtype) * rates.to(dtype)`` does.
    ``"float64"`` gives the float64 product, the reference.

    Args:
        positions: whole-number positions, any shape.
        depth: width of the encoding or head; one angle per pair.
        number_format: ``"float64"``, ``"float32"``, ``"bfloat16"``,
            ``"float16"`` or ``"tf32"``.
        base: the constant :math:`N` of the rates.

    Returns:
        A float64 array of shape ``positions.shape + (depth // 2,)``.

    Example:
        In bfloat16, position 257 is position 256:

        >>> rounded_angles([256, 257], 4, "bfloat16")[:, 0].tolist()
        [256.0, 256.0]
    """
    depth = require_int("depth", depth, minimum=2)
    base = require_positive_float("base", base)
    number_format = require_choice("number_format", number_format, ("float64", *NUMBER_FORMATS))
    array = np.asarray(positions)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"positions must be whole numbers, got {positions!r} (dtype {array.dtype})")
    positions = array.astype(np.float64)
    rates = angle_rates(depth, base=base)[: depth // 2]
    if number_format == "float64":
        return np.multiply.outer(positions, rates)
    held = np.multiply.outer(round_to_format(positions, number_format), round_to_format(rates, number_format))
    # Two numbers of at most 24 bits multiply exactly in float64; one rounding remains.
    return round_to_format(held, number_format)


def angle_errors(length: int, depth: int, number_format: str, *, base: float = 10000.0, start: int = 0) -> np.ndarray:
    r"""How far angles formed in ``number_format`` are from the true ones, column by column.

    Like :func:`float32_angle_errors`, for any format of :data:`NUMBER_FORMATS`
    and any position: a position the format cannot hold is rounded too, and
    one past its largest value makes the error infinite. The reference is the
    float64 angle, off by less than :math:`p \cdot 2^{-52}`.

    Args:
        length: number of positions (rows), ``>= 1``.
        depth: encoding size (columns), ``>= 2``; a sine and its cosine share
            one angle, so they get the same value.
        number_format: ``"float32"``, ``"bfloat16"``, ``"float16"`` or ``"tf32"``.
        base: the constant :math:`N` of the encoding.
        start: position of the first row.

    Returns:
        A float64 array of length ``depth``.

    Example:
        From 512 to 1023 bfloat16 holds only every fourth whole number, so
        even the rate-1 angle is off by up to 2; float16 ends at 65504:

        >>> angle_errors(24, 4, "bfloat16", start=1000)[:2].tolist()
        [2.0, 2.0]
        >>> angle_errors(1, 4, "float16", start=70000).tolist()
        [inf, inf, inf, inf]
    """
    length = require_int("length", length, minimum=1)
    start = require_int("start", start, minimum=0)
    number_format = require_choice("number_format", number_format, tuple(NUMBER_FORMATS))
    positions = np.arange(start, start + length)
    formed = rounded_angles(positions, depth, number_format, base=base)
    with np.errstate(invalid="ignore"):
        errors = np.abs(formed - rounded_angles(positions, depth, "float64", base=base))
    return np.repeat(errors.max(axis=0), 2)[:depth]


def rounded_rope_scores(queries, keys, query_positions, key_positions, angle_format: str, *,
                        stored_in: str | None = None, vectors_in: str | None = None,
                        base: float = 10000.0) -> np.ndarray:
    r"""Row by row, the RoPE score :math:`(R_m q) \cdot (R_n k) / \sqrt{d}` with rounded angles.

    The angles are formed in ``angle_format`` (:func:`rounded_angles`); the
    cosines and sines are cast to ``stored_in``, and the queries and keys to
    ``vectors_in``, when given; everything else is float64. Pairs are
    half-split, as Llama's code pairs them.

    Args:
        queries, keys: arrays of shape ``(rows, d)``, ``d`` even.
        query_positions, key_positions: whole-number positions, one a row.
        angle_format: ``"float64"``, ``"float32"``, ``"bfloat16"``,
            ``"float16"`` or ``"tf32"``.
        stored_in, vectors_in: a format of :data:`NUMBER_FORMATS`, or ``None``.
        base: the constant :math:`N` of the rates.

    Returns:
        A float64 array of one score a row.

    Example:
        In bfloat16 the query at 257 turns as if at 256:

        >>> q = k = np.array([[1.0, 0.0]])
        >>> late = rounded_rope_scores(q, k, [257], [0], "bfloat16")
        >>> bool(late == rounded_rope_scores(q, k, [256], [0], "float64"))
        True
    """
    from pe_lib import rope  # here, to keep this lesson's import light

    queries, keys = (np.asarray(x, dtype=np.float64) for x in (queries, keys))
    if queries.ndim != 2 or queries.shape != keys.shape:
        raise ValueError(f"queries and keys must be of one shape (rows, d), got {queries.shape} and {keys.shape}")
    depth = queries.shape[1]
    if vectors_in is not None:
        queries, keys = (round_to_format(x, vectors_in) for x in (queries, keys))
    rotated = []
    for x, positions in ((queries, query_positions), (keys, key_positions)):
        angles = rope.feature_angles(rounded_angles(np.asarray(positions), depth, angle_format, base=base))
        cos, sin = np.cos(angles), np.sin(angles)
        if stored_in is not None:
            cos, sin = round_to_format(cos, stored_in), round_to_format(sin, stored_in)
        rotated.append(x * cos + rope.rotate_half(x) * sin)
    return (rotated[0] * rotated[1]).sum(axis=1) / np.sqrt(depth)
