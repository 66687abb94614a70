r"""RoPE with several position axes: Qwen2-VL's M-RoPE and 2-D axial RoPE for image patches.

A text token has one position; an image patch has a row and a column, and a
video patch a time as well. Both schemes here give each rotated pair one
*axis* whose position turns it, by sections of consecutive pairs:

- **M-RoPE** (multimodal RoPE, Qwen2-VL): the pairs of a head keep plain
  RoPE's rates :math:`\theta_i = N^{-2i/d}`, and ``mrope_section``
  ``(s_t, s_h, s_w)`` gives the first :math:`s_t` pairs to the time
  position, the next :math:`s_h` to the row and the last :math:`s_w` to the
  column (``[16, 24, 24]`` for a head of 128 features, 64 pairs). A text
  token has the same value on all three axes, so for text M-RoPE is plain
  RoPE.
- **Axial RoPE** (2-D, Qwen2-VL's vision tower): the first half of the pairs
  turns with the row, the second half with the column, and each half has
  the rates of a head of :math:`d/2` features, :math:`N^{-2j/(d/2)}`.

The features are paired in the half-split layout, feature :math:`i` with
:math:`i + d/2`, as in both of Hugging Face's modules.

Names in the peers (Hugging Face transformers): ``rope_parameters
["mrope_section"]`` and ``Qwen2VLRotaryEmbedding`` (M-RoPE, Qwen2-VL and
Qwen2.5-VL), ``Qwen2VLVisionRotaryEmbedding`` with ``rope_type="axial"``;
the positions come from ``Qwen2VLModel.get_rope_index`` (here
:func:`pe_lib.position_ids.mrope_position_ids`) and
``transformers.vision_utils.get_vision_position_ids``
(:func:`pe_lib.position_ids.patch_positions`).

>>> x = np.ones((1, 8))
>>> bool(np.allclose(apply_mrope(x, [[5], [5], [5]], mrope_section=(1, 1, 2)),
...                  rope.apply_rope(x, [5])))
True
"""

from __future__ import annotations

import numpy as np

from pe_lib import rope
from pe_lib._checks import require_int, require_positive_float
from pe_lib.frequencies import angle_rates


def pair_axes(mrope_section, *, interleaved: bool = False) -> np.ndarray:
    r"""The axis that turns each pair: ``mrope_section[k]`` pairs for axis ``k``.

    In sections (Qwen2-VL, Qwen2.5-VL) the pairs of axis 0 come first, then
    those of axis 1, and so on. ``interleaved`` (Qwen3-VL's M-RoPE) deals
    them out in turn instead: with :math:`n` axes, pair :math:`i` belongs to
    axis :math:`k \ge 1` when :math:`i \bmod n = k` and
    :math:`i < n \cdot` ``mrope_section[k]``, and to axis 0 otherwise, so that
    every axis has slow and fast pairs (Hugging Face's
    ``Qwen3VLTextRotaryEmbedding.recomposition_frequencies``).

    >>> pair_axes([1, 2, 2]).tolist()
    [0, 1, 1, 2, 2]
    >>> pair_axes([3, 2, 2], interleaved=True).tolist()
    [0, 1, 2, 0, 1, 2, 0]
    """
    try:
        sections = [require_int("mrope_section", count, minimum=1) for count in mrope_section]
    except TypeError:
        raise TypeError(f"mrope_section must be a sequence of pair counts, got {mrope_section!r}") from None
    if not sections:
        raise ValueError(f"mrope_section must name at least one axis, got {mrope_section!r}")
    if not isinstance(interleaved, bool):
        raise TypeError(f"interleaved must be True or False, got {interleaved!r}")
    if not interleaved:
        return np.repeat(np.arange(len(sections)), sections)
    axes_count, pairs = len(sections), sum(sections)
    axes = np.zeros(pairs, dtype=np.int64)
    for axis, count in enumerate(sections[1:], start=1):
        if axes_count * count > pairs:
            raise ValueError(f"interleaved mrope_section={tuple(sections)}: axis {axis} needs "
                             f"{axes_count} x {count} = {axes_count * count} pairs, the head has {pairs}")
        axes[axis:axes_count * count:axes_count] = axis
    return axes


def section_angles(positions, rates, mrope_section, *, interleaved: bool = False) -> np.ndarray:
    r"""The angle of each pair at each step: :math:`p_{k(i)}\,\theta_i`, with :math:`k(i)` the pair's axis.

    Args:
        positions: integer positions of shape ``(axes, ..., length)``, one row
            per axis of ``mrope_section``.
        rates: one float64 rate per pair, ``sum(mrope_section)`` of them.
        mrope_section: pairs per axis.
        interleaved: the pairs dealt out in turn (:func:`pair_axes`).

    Returns:
        A float64 array ``(..., length, pairs)``.

    >>> section_angles([[1, 2], [10, 20]], [1.0, 0.5], [1, 1]).tolist()
    [[1.0, 5.0], [2.0, 10.0]]
    """
    axes = pair_axes(mrope_section, interleaved=interleaved)
    rates = np.asarray(rates, dtype=np.float64)
    if rates.shape != axes.shape:
        raise ValueError(f"rates must have one value per pair, sum(mrope_section) = {axes.size}; "
                         f"got shape {rates.shape}")
    positions = np.asarray(positions)
    if not np.issubdtype(positions.dtype, np.integer):
        raise TypeError(f"positions must be integers, got dtype {positions.dtype}")
    if positions.ndim < 2 or positions.shape[0] != len(mrope_section):
        raise ValueError(f"positions must have shape (axes, ..., length) with {len(mrope_section)} axes, "
                         f"got shape {positions.shape}")
    chosen = np.moveaxis(positions, 0, -1)[..., axes]  # (..., length, pairs)
    return chosen.astype(np.float64) * rates


def _rotate(x, angles) -> np.ndarray:
    x = np.asarray(x)
    if not (np.issubdtype(x.dtype, np.number) and np.all(np.isfinite(x))):
        raise ValueError("x must hold finite numbers")
    features = rope.feature_angles(angles, "half-split")
    if x.ndim < 2 or features.shape[-2:] != x.shape[-2:]:
        raise ValueError(f"x must have shape (..., length, depth) = (..., {features.shape[-2]}, "
                         f"{features.shape[-1]}) to match the positions, got {x.shape}")
    values = x.astype(np.float64)
    rotated = values * np.cos(features) + rope.rotate_half(values, "half-split") * np.sin(features)
    return rotated.astype(x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64, copy=False)


def apply_mrope(x, positions, *, mrope_section, base: float = 10000.0, interleaved: bool = False) -> np.ndarray:
    """Rotate ``x`` by M-RoPE: plain rates, each section of pairs turned by its axis's position.

    Args:
        x: queries or keys ``(..., length, depth)``, ``depth = 2 * sum(mrope_section)``.
        positions: integer positions ``(axes, length)`` or ``(axes, batch, length)``
            (the batch lined up with ``x``'s first axis), e.g. from
            :func:`pe_lib.position_ids.mrope_position_ids`.
        mrope_section: pairs per axis, e.g. ``(16, 24, 24)`` for time, row
            and column in a head of 128 features.
        base: the constant :math:`N` (``rope_theta``).
        interleaved: Qwen3-VL's order of the pairs (:func:`pair_axes`).

    Returns:
        The rotated array, of ``x``'s shape and floating dtype, computed in float64.

    Example:
        An image patch in row 1, column 2 at time 0 turns its pairs by 0, 1
        and 2 times their rates:

        >>> x = np.tile([1.0, 0.0], (1, 3)).reshape(1, 6)[:, [0, 2, 4, 1, 3, 5]]
        >>> turned = apply_mrope(x, [[0], [1], [2]], mrope_section=(1, 1, 1), base=1.0)
        >>> np.round(turned, 4).tolist()
        [[1.0, 0.5403, -0.4161, 0.0, 0.8415, 0.9093]]
    """
    base = require_positive_float("base", base)
    depth = 2 * int(pair_axes(mrope_section).size)
    angles = section_angles(positions, angle_rates(depth, base=base), mrope_section, interleaved=interleaved)
    if angles.ndim == 3:  # (batch, length, pairs): line the batch up with x's first axis
        angles = angles.reshape(angles.shape[:1] + (1,) * (np.ndim(x) - 3) + angles.shape[1:])
    return _rotate(x, angles)


def axial_rates(depth: int, *, base: float = 10000.0) -> np.ndarray:
    """The rates of 2-D axial RoPE for a head of ``depth`` features: those of ``depth / 2``, for each axis.

    >>> axial_rates(8, base=100.0).round(12).tolist()
    [1.0, 0.1, 1.0, 0.1]
    """
    depth = require_int("depth", depth, minimum=4)
    if depth % 4:
        raise ValueError(f"depth must be a multiple of 4 (two axes of pairs), got {depth}")
    half = angle_rates(depth // 2, base=base)
    return np.concatenate([half, half])


def apply_axial_rope(x, rows, columns, *, base: float = 10000.0) -> np.ndarray:
    """Rotate image patches by 2-D axial RoPE: the first half of the pairs by the row, the rest by the column.

    Args:
        x: queries or keys ``(..., patches, depth)``, ``depth`` a multiple of 4.
        rows, columns: each patch's row and column, integers of shape ``(patches,)``.
        base: the constant :math:`N` (``rope_theta``).

    Returns:
        The rotated array, of ``x``'s shape and floating dtype.

    Example:
        A patch in row 3 turns its first pair by 3, one in column 3 its
        third pair (the first of the column's half) by 3:

        >>> x = np.zeros((2, 8)); x[:, 0] = x[:, 2] = 1.0
        >>> turned = apply_axial_rope(x, [3, 0], [0, 3], base=100.0)
        >>> np.round(turned[:, [0, 4, 2, 6]], 4).tolist()
        [[-0.99, 0.1411, 1.0, 0.0], [1.0, 0.0, -0.99, 0.1411]]
    """
    depth = np.shape(x)[-1]
    rates = axial_rates(depth, base=require_positive_float("base", base))
    rows, columns = np.asarray(rows), np.asarray(columns)
    if rows.shape != columns.shape or rows.ndim != 1:
        raise ValueError(f"rows and columns must be flat and of one length, got shapes {rows.shape} and "
                         f"{columns.shape}")
    return _rotate(x, section_angles(np.stack([rows, columns]), rates, (depth // 4, depth // 4)))
