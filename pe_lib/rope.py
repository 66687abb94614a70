r"""RoPE, rotary position embedding (Su et al., 2021).

RoPE adds nothing to the tokens. It rotates each query and each key by an
angle proportional to its position, one 2-D rotation per pair of features,
with the angle rates of the sinusoidal encoding, :math:`\theta_i = N^{-2i/d}`:

.. math::

    \begin{pmatrix} x'_a \\ x'_b \end{pmatrix}
    = \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
      \begin{pmatrix} x_a \\ x_b \end{pmatrix}
    \quad\text{at position } m .

Rotations preserve lengths, and :math:`R_m^\top R_n = R_{n - m}`, so the score
of a query at :math:`m` and a key at :math:`n` depends on the offset only:
:math:`(R_m q) \cdot (R_n k) = q \cdot R_{n - m} k`.

Which features form pair :math:`i` is a convention, the *layout*
(:mod:`pe_lib.layouts`):

- ``"half-split"`` (GPT-NeoX, Llama, Hugging Face's ``rotate_half``, keras-hub):
  :math:`(x_i, x_{i + d/2})`, the first half of the vector against the second;
- ``"interleaved"`` (the RoFormer paper, GPT-J): :math:`(x_{2i}, x_{2i + 1})`.

The two give the same scores once the features are permuted
(:func:`pe_lib.layouts.interleaved_to_half_split`), so a checkpoint trained
with one layout must be run with the same one.

The rotation is computed as implementations do, with one angle per feature:
:math:`x \odot \cos T_m + \operatorname{rotate\_half}(x) \odot \sin T_m`
(:func:`feature_angles`, :func:`rotate_half`). Peers' names: ``base`` is
Hugging Face's ``rope_theta`` and keras-hub's ``max_wavelength``.

*Partial rotary* embeddings (GPT-NeoX, GPT-J, Phi) rotate only the first
features of each head and pass the others through untouched:
``rotary_fraction`` here, Hugging Face's ``partial_rotary_factor``, GPT-NeoX's
``rotary_pct``; GPT-J's ``rotary_dim`` is the number itself
(:func:`rotary_depth`). The rates then belong to the rotated depth,
:math:`\theta_i = N^{-2i/r}` for :math:`r` rotated features, as in the peers.
The Keras twin of :func:`apply_rope` is :class:`pe_lib.layers.RotaryEmbedding`.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_choice, require_even, require_fraction, require_int, require_positive_float
from pe_lib.frequencies import angle_rates
# interleaved_to_half_split is re-exported: RoPE's layouts are pe_lib.layouts'.
from pe_lib.layouts import LAYOUTS, interleaved_to_half_split
from pe_lib.similarity import offset_similarity

#: Why an odd depth is refused, for the error messages.
_ODD_DEPTH = "RoPE rotates the features in pairs"


def _as_positions(positions, length: int, batch: int | None = None) -> np.ndarray:
    """``positions`` as int64, ``(length,)`` or ``(batch, length)`` (default ``0 .. length - 1``)."""
    if positions is None:
        return np.arange(length, dtype=np.int64)
    array = np.asarray(positions)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"positions must be integers, got {positions!r} (dtype {array.dtype})")
    allowed = [(length,)] + ([(batch, length)] if batch is not None else [])
    if array.shape not in allowed:
        raise ValueError(
            f"positions must have shape {' or '.join(map(str, allowed))}, one per step; got shape {array.shape}"
        )
    return array.astype(np.int64)


def rotary_depth(depth: int, rotary_fraction: float = 1.0) -> int:
    """How many of ``depth`` features RoPE rotates: ``int(depth * rotary_fraction)``, even.

    The product is rounded down, as Hugging Face's ``partial_rotary_factor``
    is; Phi-2's heads of 80 features with ``0.4`` rotate 32. The head itself
    may have an odd width when only part of it turns, as in Hugging Face's
    GPT-NeoX: 81 features at ``0.5`` rotate 40, 65 at ``0.25`` rotate 16; the
    rotated count must be even.

    >>> rotary_depth(80, 0.4), rotary_depth(64), rotary_depth(81, 0.5), rotary_depth(65, 0.25)
    (32, 64, 40, 16)
    """
    if require_fraction("rotary_fraction", rotary_fraction) == 1.0:
        depth = require_even("depth", depth, reason=_ODD_DEPTH)
    else:
        depth = require_int("depth", depth, minimum=1)
    rotated = int(depth * require_fraction("rotary_fraction", rotary_fraction))
    if rotated < 2 or rotated % 2:
        raise ValueError(
            f"rotary_fraction={rotary_fraction!r} of depth {depth} rotates {rotated} features; "
            "RoPE needs an even number, at least 2"
        )
    return rotated


def _rates(depth: int, base: float, rates) -> np.ndarray:
    if rates is None:
        return angle_rates(depth, base=require_positive_float("base", base))
    rates = np.asarray(rates, dtype=np.float64)
    if rates.shape != (depth // 2,) or not np.all(np.isfinite(rates)):
        raise ValueError(f"rates must be {depth // 2} finite numbers, one per pair; got shape {rates.shape}")
    return rates


def rope_angles(positions, depth: int, *, base: float = 10000.0, rates=None) -> np.ndarray:
    r"""The rotation angles :math:`m\,\theta_i`, in float64.

    Args:
        positions: an integer array of positions :math:`m`, of any shape.
        depth: the feature size :math:`d`, even.
        base: the constant :math:`N` of the rates :math:`\theta_i = N^{-2i/d}`.
        rates: the ``depth // 2`` rates to use instead, e.g. those of a
            context-extension method (:mod:`pe_lib.rope_scaling`).

    Returns:
        A float64 array of shape ``positions.shape + (depth // 2,)``.

    Example:
        >>> rope_angles([0, 1, 2], 4)
        array([[0.  , 0.  ],
               [1.  , 0.01],
               [2.  , 0.02]])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    array = np.asarray(positions)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"positions must be integers, got {positions!r} (dtype {array.dtype})")
    return np.multiply.outer(array.astype(np.float64), _rates(depth, base, rates))


def feature_angles(pair_angles, layout: str = "half-split") -> np.ndarray:
    """Spread ``(..., depth/2)`` pair angles to one angle per feature, as ``layout`` pairs them.

    >>> feature_angles([[1.0, 2.0]], "interleaved"), feature_angles([[1.0, 2.0]], "half-split")
    (array([[1., 1., 2., 2.]]), array([[1., 2., 1., 2.]]))
    """
    layout = require_choice("layout", layout, LAYOUTS)
    pair_angles = np.asarray(pair_angles, dtype=np.float64)
    if layout == "interleaved":
        return np.repeat(pair_angles, 2, axis=-1)
    return np.concatenate([pair_angles, pair_angles], axis=-1)


def rotate_half(x, layout: str = "half-split") -> np.ndarray:
    """Each feature replaced by its pair partner, the first member of the pair negated.

    For ``"half-split"`` this is Hugging Face's ``rotate_half``:
    ``(a, b) -> (-b, a)`` with ``a`` and ``b`` the two halves.

    >>> rotate_half(np.array([1.0, 2.0, 3.0, 4.0]))
    array([-3., -4.,  1.,  2.])
    >>> rotate_half(np.array([1.0, 2.0, 3.0, 4.0]), "interleaved")
    array([-2.,  1., -4.,  3.])
    """
    layout = require_choice("layout", layout, LAYOUTS)
    values = np.asarray(x)
    partner = np.empty_like(values)
    if layout == "interleaved":
        partner[..., 0::2] = -values[..., 1::2]
        partner[..., 1::2] = values[..., 0::2]
    else:
        half = values.shape[-1] // 2
        partner[..., :half] = -values[..., half:]
        partner[..., half:] = values[..., :half]
    return partner


def _axis(name: str, axis, rank: int) -> int:
    axis = require_int(name, axis)
    if not -rank <= axis < rank:
        raise ValueError(f"{name}={axis} is outside x of rank {rank}")
    return axis % rank


def apply_rope(
    x,
    positions=None,
    *,
    base: float = 10000.0,
    layout: str = "half-split",
    sequence_axis: int | None = None,
    feature_axis: int = -1,
    rates=None,
    rotary_fraction: float = 1.0,
) -> np.ndarray:
    """Rotate queries or keys by their positions.

    Args:
        x: the queries or keys: a floating-point or integer array with a
            sequence axis and a feature axis, of even size unless only part of
            it is rotated (``rotary_fraction``).
        positions: integer positions, one per step: shape ``(length,)``, or
            ``(batch, length)`` for one row of positions per entry of the
            first axis (per-batch position ids). By default
            ``0, 1, ..., length - 1``.
        base: the constant :math:`N` of the angle rates (``rope_theta``,
            ``max_wavelength``).
        layout: ``"half-split"`` or ``"interleaved"``: which features are
            rotated together.
        sequence_axis: the axis of positions. Left out, ``x`` must be
            ``(length, depth)`` or ``(batch, length, depth)``; a 4-D array is
            refused, because ``(batch, length, heads, depth)`` (keras-hub,
            GPT-J: ``sequence_axis=1``) and ``(batch, heads, length, depth)``
            (``sequence_axis=2``) cannot be told apart.
        feature_axis: the axis of features, the last by default.
        rates: one angle rate per rotated pair, to use instead of ``base``'s,
            e.g. from :mod:`pe_lib.rope_scaling`.
        rotary_fraction: the share of each vector's features that is
            rotated (:func:`rotary_depth`); the others are returned as they
            are. 1 rotates them all.

    Returns:
        The rotated array, of the shape of ``x`` and of its floating-point
        dtype (float16 stays float16; integers give float64). The angles and
        the rotation are computed in float64.

    Example:
        At position 1 the first pair turns by 1 radian, the second by 1/100:

        >>> x = np.array([[1.0, 0.0, 1.0, 0.0]] * 2)
        >>> apply_rope(x, layout="interleaved").round(4)
        array([[1.    , 0.    , 1.    , 0.    ],
               [0.5403, 0.8415, 1.    , 0.01  ]])

        The same vector in the half-split layout has its pairs at (0, 2) and (1, 3):

        >>> apply_rope(x[:, [0, 2, 1, 3]], layout="half-split").round(4)
        array([[1.    , 1.    , 0.    , 0.    ],
               [0.5403, 1.    , 0.8415, 0.01  ]])

        With ``rotary_fraction=0.5`` only the first two features turn, as
        one pair with the rate of a depth of 2:

        >>> apply_rope(x, layout="interleaved", rotary_fraction=0.5).round(4)
        array([[1.    , 0.    , 1.    , 0.    ],
               [0.5403, 0.8415, 1.    , 0.    ]])
    """
    x = np.asarray(x)
    if not (np.issubdtype(x.dtype, np.number) and np.all(np.isfinite(x))):
        raise ValueError("x must hold finite numbers")
    if x.ndim < 2:
        raise ValueError(f"x must have a sequence axis and a feature axis, got shape {x.shape}")
    layout = require_choice("layout", layout, LAYOUTS)
    if sequence_axis is None:
        if x.ndim > 3:
            raise ValueError(
                f"x has shape {x.shape}: say which axis holds the positions, e.g. sequence_axis=1 "
                "for (batch, length, heads, depth) or sequence_axis=2 for (batch, heads, length, depth)"
            )
        sequence_axis = -2
    sequence = _axis("sequence_axis", sequence_axis, x.ndim)
    feature = _axis("feature_axis", feature_axis, x.ndim)
    if sequence == feature:
        raise ValueError(f"sequence_axis and feature_axis must differ, both are axis {sequence}")
    try:
        rotated_depth = rotary_depth(x.shape[feature], rotary_fraction)
    except ValueError as error:
        raise ValueError(f"x: the feature axis has the depth; {error}") from None
    moved = np.moveaxis(x, (sequence, feature), (-2, -1))
    batch = x.shape[0] if x.ndim >= 3 and 0 not in (sequence, feature) else None
    positions = _as_positions(positions, moved.shape[-2], batch)
    angles = feature_angles(rope_angles(positions, rotated_depth, base=base, rates=rates), layout)
    if angles.ndim == 3:  # (batch, length, depth): line the batch up with x's first axis
        angles = angles.reshape(angles.shape[:1] + (1,) * (moved.ndim - 3) + angles.shape[1:])
    values = moved.astype(np.float64)
    turned = values[..., :rotated_depth]
    turned = turned * np.cos(angles) + rotate_half(turned, layout) * np.sin(angles)
    rotated = np.concatenate([turned, values[..., rotated_depth:]], axis=-1)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    return np.moveaxis(rotated, (-2, -1), (sequence, feature)).astype(dtype, copy=False)


def exact_angle_cos_sin(multiples, rates) -> tuple[np.ndarray, np.ndarray]:
    r"""Cosine and sine of :math:`n\,\theta` for integers :math:`n < 2^{32}`, the product unrounded.

    ``np.cos(n * rate)`` first rounds the angle :math:`n\theta` to float64,
    an error of up to :math:`n\theta\,2^{-53}` radians (2.4e-7 at
    :math:`n = 2^{31}`, :math:`\theta = 1`). Here each rate is split into
    three parts, two of 21 significant bits and the rest, so that :math:`n`
    times either of the first two is exact and :math:`n` times the third is
    below :math:`2^{-10}`; the three angles are added by the angle-addition
    formulas. The result is within a few float64 steps of the true cosine and
    sine of :math:`n\theta` for the float64 rate :math:`\theta`.

    Args:
        multiples: integers :math:`n`, ``0 <= n < 2**32``, of any shape.
        rates: float64 rates :math:`\theta`, 1-D.

    Returns:
        Two float64 arrays of shape ``multiples.shape + rates.shape``.

    >>> cos, sin = exact_angle_cos_sin([0, 1], [1.0])
    >>> cos.round(4).tolist(), sin.round(4).tolist()
    ([[1.0], [0.5403]], [[0.0], [0.8415]])
    """
    multiples = np.asarray(multiples)
    if not np.issubdtype(multiples.dtype, np.integer) or np.any(multiples < 0) or np.any(multiples >= 2**32):
        raise ValueError(f"multiples must be integers in [0, 2**32), got {multiples!r}")
    rates = np.asarray(rates, dtype=np.float64)
    count = multiples.astype(np.float64)
    cos, sin = np.ones(count.shape + rates.shape), np.zeros(count.shape + rates.shape)
    rest = rates
    for part in range(3):
        if part < 2:  # Veltkamp's split: the high part keeps 53 - 32 = 21 bits
            split = rest * (2.0**32 + 1.0)
            high = split - (split - rest)
        else:
            high = rest
        rest = rest - high
        angle = np.multiply.outer(count, high)  # exact for the first two parts
        cos_part, sin_part = np.cos(angle), np.sin(angle)
        cos, sin = cos * cos_part - sin * sin_part, sin * cos_part + cos * sin_part
    return cos, sin


def rotation_tables(rates, *, digits: int = 4, digit_bits: int = 8) -> list[tuple[np.ndarray, np.ndarray]]:
    r"""Cosine and sine tables that rotate by any position without forming its angle.

    A position :math:`m < 2^{32}` is written in base 256, :math:`m = \sum_k
    c_k 256^k`; table ``k`` holds :math:`\cos` and :math:`\sin` of
    :math:`c\,256^k\,\theta_i` for every digit :math:`c`, in float64 and
    to within a few float64 steps (:func:`exact_angle_cos_sin`). A layer
    converts them to the dtype it computes in and composes the rotations of
    the digits of :math:`m` by angle addition
    (:class:`pe_lib.layers.RotaryEmbedding`).

    Returns:
        ``digits`` pairs of float64 arrays of shape ``(256, len(rates))``.

    >>> tables = rotation_tables([1.0, 0.01])
    >>> len(tables), tables[0][0].shape, tables[0][0].dtype
    (4, (256, 2), dtype('float64'))
    """
    rates = np.asarray(rates, dtype=np.float64)
    radix = 2**digit_bits
    if radix**digits > 2**32:
        raise ValueError(f"digits={digits} of {digit_bits} bits reach past 2**32")
    return [exact_angle_cos_sin(np.arange(radix, dtype=np.int64) * radix**level, rates) for level in range(digits)]


def offset_score(offsets, depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The score of a query with itself ``k`` positions away, divided by its squared length.

    For a vector :math:`q` whose feature pairs all have the same length (the
    all-ones vector, for example), :math:`(R_m q) \cdot (R_{m+k} q) / \lVert q \rVert^2
    = \frac{2}{d} \sum_i \cos k\theta_i`: 1 at :math:`k = 0`, and smaller as the
    pairs drift out of phase. It is the dot product of two sinusoidal
    encodings :math:`k` apart, :func:`pe_lib.similarity.offset_similarity`,
    divided by :math:`d/2`.

    Args:
        offsets: one offset or an array of them.
        depth: the feature size, even.
        base: the constant :math:`N` of the angle rates.

    Returns:
        A float64 array of the shape of ``offsets``.

    Example:
        >>> offset_score([0, 1, 100], 4).round(4)
        array([1.    , 0.7701, 0.7013])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    return offset_similarity(offsets, depth, base=base) / (depth / 2)
