r"""Common mistakes made executable: RoPE with its cosine table laid out for the wrong pairing.

Implementations of rotary position embedding (:mod:`pe_lib.rope`) rarely
rotate pair by pair. They precompute a cosine and a sine table with one angle
per *feature*, and write

.. math::

    \operatorname{rope}(x, m) = x \odot \cos(T_m) + \operatorname{partner}(x) \odot \sin(T_m),

where :math:`\operatorname{partner}` replaces each feature by the other member
of its pair (the first member negated). For the ``"interleaved"`` layout the
table is :math:`T_m = m(\theta_0, \theta_0, \theta_1, \theta_1, \dots)`; for
the ``"half-split"`` layout it is
:math:`T_m = m(\theta_0, \dots, \theta_{d/2-1}, \theta_0, \dots, \theta_{d/2-1})`.

This is how :func:`pe_lib.rope.apply_rope` itself computes it, with
:func:`pe_lib.rope.feature_angles` and :func:`pe_lib.rope.rotate_half`.
If the table follows one layout and the pairing the other, the two members of
a pair turn by different angles. The map is then no longer a rotation: lengths
change, and scores depend on where the query and key are, not only on how far
apart. :func:`apply_rope_with_tables` builds both the right and the mixed-up
version, and :func:`rope_scores` compares the scores they give.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_choice, require_even, require_int
from pe_lib.layouts import LAYOUTS
from pe_lib.rope import feature_angles, rope_angles, rotate_half


def apply_rope_with_tables(
    x,
    positions=None,
    *,
    layout: str = "half-split",
    table_layout: str | None = None,
    base: float = 10000.0,
) -> np.ndarray:
    r"""RoPE computed from per-feature cosine and sine tables, as implementations do.

    Args:
        x: queries or keys, an array of shape ``(..., length, depth)`` with an
            even depth; row ``p`` is the vector at ``positions[p]``.
        positions: a 1-D integer array of ``length`` positions; by default
            ``0, 1, ..., length - 1``.
        layout: the pairing, ``"half-split"`` (features ``i`` and
            ``i + depth/2``) or ``"interleaved"`` (``2i`` and ``2i + 1``).
        table_layout: the layout the cosine and sine tables were built for;
            ``layout`` when left out, which gives
            :func:`pe_lib.rope.apply_rope` exactly. The other layout
            reproduces the mix-up.
        base: the constant :math:`N` of the angle rates.

    Returns:
        A float64 array of the shape of ``x``.

    Example:
        Matching tables give RoPE; mixed-up tables give scores that change
        when the query and the key move together:

        >>> q, k = np.random.default_rng(0).normal(size=(2, 1, 8))
        >>> def score(m, n, table_layout):
        ...     rotate = lambda v, p: apply_rope_with_tables(v, [p], layout="interleaved", table_layout=table_layout)
        ...     return float(np.sum(rotate(q, m) * rotate(k, n)))
        >>> bool(np.isclose(score(3, 5, "interleaved"), score(103, 105, "interleaved")))
        True
        >>> bool(np.isclose(score(3, 5, "half-split"), score(103, 105, "half-split")))
        False
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., length, depth), got shape {x.shape}")
    if not (np.issubdtype(x.dtype, np.number) and np.all(np.isfinite(x))):
        raise ValueError("x must hold finite numbers")
    try:
        depth = require_even("depth", x.shape[-1], reason="RoPE rotates the features in pairs")
    except ValueError as error:
        raise ValueError(f"x: the last axis is the depth; {error}") from None
    layout = require_choice("layout", layout, LAYOUTS)
    table_layout = layout if table_layout is None else require_choice("table_layout", table_layout, LAYOUTS)
    length = x.shape[-2]
    if positions is None:
        positions = np.arange(length)
    elif np.shape(positions) != (length,):
        raise ValueError(f"positions must have shape ({length},), one per row of x; got shape {np.shape(positions)}")

    # pe_lib.rope.apply_rope is this line with table_layout == layout.
    angles = feature_angles(rope_angles(positions, depth, base=base), table_layout)
    values = x.astype(np.float64)
    return values * np.cos(angles) + rotate_half(values, layout) * np.sin(angles)


def rope_scores(
    query,
    key,
    query_position: int,
    key_positions,
    *,
    layout: str = "half-split",
    table_layout: str | None = None,
    base: float = 10000.0,
) -> np.ndarray:
    r"""The scores :math:`\operatorname{rope}(q, m) \cdot \operatorname{rope}(k, n)` for many key positions :math:`n`.

    Args:
        query: the query vector :math:`q`, of even depth.
        key: the key vector :math:`k`, of the same depth.
        query_position: the position :math:`m` of the query.
        key_positions: a 1-D integer array of key positions :math:`n`.
        layout, table_layout, base: as for :func:`apply_rope_with_tables`.

    Returns:
        A float64 array with one score per key position.

    Example:
        With depth 2 the score of a query and key both equal to (1, 0) is
        :math:`\cos(n - m)`:

        >>> rope_scores([1.0, 0.0], [1.0, 0.0], 5, [5, 6, 4]).round(4)
        array([1.    , 0.5403, 0.5403])
    """
    query = np.asarray(query, dtype=np.float64)
    key = np.asarray(key, dtype=np.float64)
    if query.ndim != 1 or key.shape != query.shape:
        raise ValueError(
            f"query and key must be 1-D vectors of the same depth, got shapes {query.shape} and {key.shape}"
        )
    query_position = require_int("query_position", query_position)
    key_positions = np.asarray(key_positions)
    if not np.issubdtype(key_positions.dtype, np.integer):
        raise TypeError(f"key_positions must be integers, got {key_positions.tolist()!r} (dtype {key_positions.dtype})")
    if key_positions.ndim != 1:
        raise ValueError(f"key_positions must be 1-D, got shape {key_positions.shape}")
    options = {"layout": layout, "table_layout": table_layout, "base": base}
    rotated_query = apply_rope_with_tables(query[None], [query_position], **options)[0]
    keys = np.broadcast_to(key, (len(key_positions), len(key)))
    return apply_rope_with_tables(keys, key_positions, **options) @ rotated_query
