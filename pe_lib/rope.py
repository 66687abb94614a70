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

Which features form pair :math:`i` is a convention, the *layout*:

- ``"half-split"`` (GPT-NeoX, Llama): :math:`(x_i, x_{i + d/2})`, the first
  half of the vector against the second;
- ``"interleaved"`` (the RoFormer paper, GPT-J): :math:`(x_{2i}, x_{2i + 1})`.

The two give the same scores once the features are permuted
(:func:`layout_permutation`), so a checkpoint trained with one layout must be
run with the same one.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_choice, require_even, require_int, require_positive_float
from pe_lib.frequencies import angle_rates
from pe_lib.course.similarity import offset_similarity

#: Which features are rotated together, ``(x_i, x_{i + d/2})`` or ``(x_{2i}, x_{2i+1})``.
LAYOUTS = ("half-split", "interleaved")

#: Why an odd depth is refused, for the error messages.
_ODD_DEPTH = "RoPE rotates the features in pairs"


def _as_positions(positions, length: int) -> np.ndarray:
    """``positions`` as an int64 array of ``length`` entries (default ``0 .. length - 1``)."""
    if positions is None:
        return np.arange(length, dtype=np.int64)
    array = np.asarray(positions)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"positions must be integers, got {positions!r} (dtype {array.dtype})")
    if array.shape != (length,):
        raise ValueError(f"positions must have shape ({length},), one per row of x; got shape {array.shape}")
    return array.astype(np.int64)


def rope_angles(positions, depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The rotation angles :math:`m\,\theta_i`, in float64.

    Args:
        positions: a 1-D integer array of positions :math:`m`.
        depth: the feature size :math:`d`, even.
        base: the constant :math:`N` of the rates :math:`\theta_i = N^{-2i/d}`.

    Returns:
        A float64 array of shape ``(len(positions), depth // 2)``.

    Example:
        >>> rope_angles([0, 1, 2], 4)
        array([[0.  , 0.  ],
               [1.  , 0.01],
               [2.  , 0.02]])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    base = require_positive_float("base", base)
    positions = np.asarray(positions)
    if positions.ndim != 1:
        raise ValueError(f"positions must be 1-D, got shape {positions.shape}")
    positions = _as_positions(positions, len(positions))
    return np.multiply.outer(positions.astype(np.float64), angle_rates(depth, base=base))


def apply_rope(x, positions=None, *, base: float = 10000.0, layout: str = "half-split") -> np.ndarray:
    """Rotate queries or keys by their positions.

    Args:
        x: an array of shape ``(..., length, depth)``: row ``p`` along the
            second-to-last axis is the vector at ``positions[p]``; the depth
            is even.
        positions: a 1-D integer array of ``length`` positions; by default
            ``0, 1, ..., length - 1``.
        base: the constant :math:`N` of the angle rates.
        layout: ``"half-split"`` or ``"interleaved"``: which features are
            rotated together.

    Returns:
        The rotated array, of the shape of ``x``; float32 if ``x`` is float32,
        float64 otherwise. The angles are formed in float64.

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
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., length, depth), got shape {x.shape}")
    if not (np.issubdtype(x.dtype, np.number) and np.all(np.isfinite(x))):
        raise ValueError("x must hold finite numbers")
    layout = require_choice("layout", layout, LAYOUTS)
    try:
        depth = require_even("depth", x.shape[-1], reason=_ODD_DEPTH)
    except ValueError as error:
        raise ValueError(f"x: the last axis is the depth; {error}") from None
    angles = rope_angles(_as_positions(positions, x.shape[-2]), depth, base=base)
    cos, sin = np.cos(angles), np.sin(angles)
    values = x.astype(np.float64)
    if layout == "half-split":
        first, second = values[..., : depth // 2], values[..., depth // 2 :]
    else:
        first, second = values[..., 0::2], values[..., 1::2]
    rotated = np.empty_like(values)
    new_first, new_second = first * cos - second * sin, first * sin + second * cos
    if layout == "half-split":
        rotated[..., : depth // 2], rotated[..., depth // 2 :] = new_first, new_second
    else:
        rotated[..., 0::2], rotated[..., 1::2] = new_first, new_second
    return rotated.astype(np.float32) if x.dtype == np.float32 else rotated


def layout_permutation(depth: int) -> np.ndarray:
    """The feature order that turns the interleaved layout into the half-split one.

    For any ``x``, ``apply_rope(x[..., perm], layout="half-split")`` equals
    ``apply_rope(x, layout="interleaved")[..., perm]``: the even features
    first, then the odd ones.

    >>> layout_permutation(6)
    array([0, 2, 4, 1, 3, 5])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    return np.concatenate([np.arange(0, depth, 2), np.arange(1, depth, 2)])


def offset_score(offsets, depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The score of a query with itself ``k`` positions away, divided by its squared length.

    For a vector :math:`q` whose feature pairs all have the same length (the
    all-ones vector, for example), :math:`(R_m q) \cdot (R_{m+k} q) / \lVert q \rVert^2
    = \frac{2}{d} \sum_i \cos k\theta_i`: 1 at :math:`k = 0`, and smaller as the
    pairs drift out of phase. It is the dot product of two sinusoidal
    encodings :math:`k` apart, :func:`pe_lib.course.similarity.offset_similarity`,
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
