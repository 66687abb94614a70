r"""Relative position representations (Shaw, Uszkoreit and Vaswani, 2018).

Instead of adding a vector to each token, the model learns one vector per
*offset* between a query at position :math:`i` and a key at position :math:`j`.
Offsets further than :math:`k` apart share the vector of offset :math:`\pm k`:

.. math::

    a_{ij} = w_{\operatorname{clip}(j - i,\,k)}, \qquad
    \operatorname{clip}(x, k) = \max(-k, \min(k, x)),

so a table of :math:`2k + 1` learned vectors :math:`w_{-k}, \dots, w_k` serves
sequences of any length. The attention score of query :math:`i` and key
:math:`j` becomes :math:`q_i \cdot (k_j + a_{ij}) / \sqrt{d}`.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int


def clipped_offsets(length: int, max_distance: int) -> np.ndarray:
    r"""The ``(length, length)`` matrix of clipped offsets :math:`\operatorname{clip}(j - i, k)`.

    Args:
        length: number of positions, ``>= 1``.
        max_distance: the clipping distance :math:`k`, ``>= 1``.

    Returns:
        An int64 array whose entry ``[i, j]`` is ``j - i`` clipped to
        ``[-max_distance, max_distance]``: row ``i`` belongs to the query at
        position ``i``, column ``j`` to the key at position ``j``.

    Example:
        >>> clipped_offsets(5, 2)
        array([[ 0,  1,  2,  2,  2],
               [-1,  0,  1,  2,  2],
               [-2, -1,  0,  1,  2],
               [-2, -2, -1,  0,  1],
               [-2, -2, -2, -1,  0]])
    """
    length = require_int("length", length, minimum=1)
    max_distance = require_int("max_distance", max_distance, minimum=1)
    positions = np.arange(length, dtype=np.int64)
    return np.clip(positions[None, :] - positions[:, None], -max_distance, max_distance)


def relative_indices(length: int, max_distance: int) -> np.ndarray:
    """Row of the ``(2k + 1)``-row table used by each query-key pair: the clipped offset plus ``k``.

    Index 0 holds :math:`w_{-k}`, index ``k`` holds :math:`w_0` and index ``2k``
    holds :math:`w_k`.

    >>> relative_indices(4, 1)
    array([[1, 2, 2, 2],
           [0, 1, 2, 2],
           [0, 0, 1, 2],
           [0, 0, 0, 1]])
    """
    max_distance = require_int("max_distance", max_distance, minimum=1)
    return clipped_offsets(length, max_distance) + max_distance


def _as_table(table) -> tuple[np.ndarray, int]:
    """``table`` as a float64 ``(2k + 1, depth)`` array and its ``k``, or an error naming it."""
    table = np.asarray(table)
    if table.ndim != 2 or table.shape[0] % 2 == 0 or table.shape[1] == 0:
        raise ValueError(
            f"table must have shape (2 * max_distance + 1, depth) with depth >= 1, got shape {table.shape}"
        )
    if not (np.issubdtype(table.dtype, np.number) and np.all(np.isfinite(table))):
        raise ValueError("table must hold finite numbers")
    return table.astype(np.float64), table.shape[0] // 2


def relative_vectors(table, length: int) -> np.ndarray:
    r"""The vectors :math:`a_{ij}`, looked up in a table of :math:`2k + 1` rows.

    Args:
        table: a ``(2k + 1, depth)`` array; row ``r`` is :math:`w_{r - k}`.
        length: number of positions, ``>= 1``.

    Returns:
        A float64 array of shape ``(length, length, depth)``.

    Example:
        >>> table = np.array([[-1.0], [0.0], [1.0]])   # w_-1, w_0, w_1
        >>> relative_vectors(table, 3)[..., 0]
        array([[ 0.,  1.,  1.],
               [-1.,  0.,  1.],
               [-1., -1.,  0.]])
    """
    table, max_distance = _as_table(table)
    if max_distance < 1:
        raise ValueError(f"table must have at least 3 rows (max_distance >= 1), got shape {table.shape}")
    return table[relative_indices(length, max_distance)]


def relative_scores(queries, keys, table) -> np.ndarray:
    r"""Attention scores :math:`e_{ij} = q_i \cdot (k_j + a_{ij}) / \sqrt{d}` with Shaw's key vectors.

    Args:
        queries: a ``(length, depth)`` array, one query per position.
        keys: a ``(length, depth)`` array, one key per position.
        table: a ``(2k + 1, depth)`` array of relative key vectors.

    Returns:
        A float64 ``(length, length)`` array; row ``i`` holds the scores of
        query ``i``, before any softmax.

    Example:
        With zero keys only the relative vectors speak, so every row is the
        same function of the offset ``j - i``:

        >>> queries, keys = np.ones((4, 2)), np.zeros((4, 2))
        >>> table = np.array([[-1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
        >>> (relative_scores(queries, keys, table) * np.sqrt(2)).round(6)
        array([[ 0.,  1.,  1.,  1.],
               [-1.,  0.,  1.,  1.],
               [-1., -1.,  0.,  1.],
               [-1., -1., -1.,  0.]])
    """
    queries = np.asarray(queries, dtype=np.float64)
    keys = np.asarray(keys, dtype=np.float64)
    table, _ = _as_table(table)
    if queries.ndim != 2 or queries.shape != keys.shape or queries.shape[1] != table.shape[1]:
        raise ValueError(
            "queries and keys must both have shape (length, depth) with the depth of table; "
            f"got {queries.shape}, {keys.shape} and table {table.shape}"
        )
    vectors = relative_vectors(table, queries.shape[0])
    content = queries @ keys.T
    position = np.einsum("id,ijd->ij", queries, vectors)
    return (content + position) / np.sqrt(queries.shape[1])
