"""What an attention score is made of when positions are added to the tokens.

With absolute codes the query of step ``i`` is ``(x_i + p_i) W_Q`` and the key
of step ``j`` is ``(x_j + p_j) W_K``, so their dot product splits into four
terms: token-token, token-position, position-token and position-position.
:func:`score_terms` returns the four, :func:`offset_residual` measures how far
a score table is from a function of the offset ``j - i`` alone, and
:func:`rotation_commuting_part` keeps the part of a matrix ``W_Q W_K^T`` that
leaves the position-position term a function of the offset.

>>> terms = score_terms(np.eye(2), np.zeros((2, 2)), np.eye(2), np.eye(2))
>>> terms.token_token
array([[1., 0.],
       [0., 1.]])
>>> float(abs(terms.position_position).max())
0.0
"""

from __future__ import annotations

import dataclasses

import numpy as np

#: The four terms in the order of the expansion, query side first.
TERM_NAMES = ("token_token", "token_position", "position_token", "position_position")


@dataclasses.dataclass(frozen=True)
class ScoreTerms:
    """The four ``(steps, steps)`` terms of the scores ``q_i . k_j`` (float64).

    Attributes:
        token_token: ``x_i W_Q W_K^T x_j^T``.
        token_position: ``x_i W_Q W_K^T p_j^T``: the query's token, the key's position.
        position_token: ``p_i W_Q W_K^T x_j^T``: the query's position, the key's token.
        position_position: ``p_i W_Q W_K^T p_j^T``.
    """

    token_token: np.ndarray
    token_position: np.ndarray
    position_token: np.ndarray
    position_position: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """The full (unscaled) score table, the sum of the four terms."""
        return self.token_token + self.token_position + self.position_token + self.position_position


def _matrix(name: str, value, ndim: int = 2) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must hold finite numbers only")
    return array


def score_terms(tokens, positions, query_kernel, key_kernel) -> ScoreTerms:
    """Split the scores ``(x_i + p_i) W_Q W_K^T (x_j + p_j)^T`` into their four terms.

    Args:
        tokens: token vectors ``x``, shape ``(steps, depth)``.
        positions: position codes ``p``, shape ``(steps, depth)``.
        query_kernel: ``W_Q``, shape ``(depth, head_depth)``.
        key_kernel: ``W_K``, shape ``(depth, head_depth)``.

    Returns:
        A :class:`ScoreTerms` of float64 arrays of shape ``(steps, steps)``;
        row ``i`` is the query step, column ``j`` the key step.

    Example:
        >>> x, p = np.array([[1.0, 0.0]]), np.array([[0.0, 2.0]])
        >>> terms = score_terms(x, p, np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]]))
        >>> terms.token_position, terms.position_token
        (array([[2.]]), array([[2.]]))
    """
    tokens = _matrix("tokens", tokens)
    positions = _matrix("positions", positions)
    query_kernel = _matrix("query_kernel", query_kernel)
    key_kernel = _matrix("key_kernel", key_kernel)
    if positions.shape != tokens.shape:
        raise ValueError(f"positions must have the shape of tokens {tokens.shape}, got {positions.shape}")
    if query_kernel.shape[0] != tokens.shape[1] or key_kernel.shape != query_kernel.shape:
        raise ValueError(
            f"query_kernel and key_kernel must both be (depth={tokens.shape[1]}, head_depth), "
            f"got {query_kernel.shape} and {key_kernel.shape}"
        )
    token_queries, position_queries = tokens @ query_kernel, positions @ query_kernel
    token_keys, position_keys = tokens @ key_kernel, positions @ key_kernel
    return ScoreTerms(
        token_token=token_queries @ token_keys.T,
        token_position=token_queries @ position_keys.T,
        position_token=position_queries @ token_keys.T,
        position_position=position_queries @ position_keys.T,
    )


def residual_share(values, groups) -> float:
    """How much of the spread of ``values`` the ``groups`` leave unexplained.

    Each value is replaced by the mean of its group; the result is the root
    mean square of what is left, divided by the standard deviation of all the
    values. It is 0 when the values are a function of the group, and 1 when
    every group has the same mean.

    Args:
        values: real numbers, any shape.
        groups: integer group labels, the same shape as ``values``.

    Example:
        >>> residual_share([1.0, 1.0, 3.0, 3.0], [0, 0, 1, 1])
        0.0
        >>> residual_share([1.0, 3.0, 1.0, 3.0], [0, 0, 1, 1])
        1.0
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    groups = np.asarray(groups).ravel()
    if values.shape != groups.shape:
        raise ValueError(f"groups must have one label per value, got {groups.size} labels for {values.size} values")
    if not np.issubdtype(groups.dtype, np.integer):
        raise TypeError(f"groups must be integer labels, got dtype {groups.dtype}")
    spread = np.sum((values - values.mean()) ** 2)
    if values.size < 2 or spread == 0.0:
        raise ValueError("values must vary for their spread to be shared out")
    labels, index = np.unique(groups, return_inverse=True)
    means = np.bincount(index, weights=values, minlength=labels.size) / np.bincount(index, minlength=labels.size)
    return float(np.sqrt(np.sum((values - means[index]) ** 2) / spread))


def offset_residual(scores) -> float:
    """:func:`residual_share` of a score table grouped by the offset ``j - i``.

    Args:
        scores: an array ``(..., steps, steps)``: query ``i`` along the rows,
            key ``j`` along the columns; leading axes (sequences, heads) are
            pooled.

    Returns:
        0 for a table that depends on ``j - i`` only; near 1 for one in
        which the offset explains nothing.

    Example:
        >>> offsets = np.subtract.outer(np.arange(4), np.arange(4))
        >>> offset_residual(np.cos(offsets))
        0.0
        >>> round(offset_residual(np.add.outer(np.arange(4.0), np.arange(4.0))), 4)
        1.0
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim < 2 or scores.shape[-1] != scores.shape[-2]:
        raise ValueError(f"scores must end with two equal axes (steps, steps), got shape {scores.shape}")
    steps = scores.shape[-1]
    offsets = np.subtract.outer(np.arange(steps), np.arange(steps)).T  # [i, j] = j - i
    return residual_share(scores, np.broadcast_to(offsets, scores.shape))


def rotation_commuting_part(matrix) -> np.ndarray:
    """The part of ``matrix`` that keeps ``p_i A p_j^T`` a function of ``j - i``.

    For interleaved sinusoidal codes (a sine and a cosine column per
    frequency) the position-position term depends on the offset alone when
    ``A`` is block diagonal with one ``2 x 2`` block per frequency, each of
    the form ``a I + b J`` with ``J = [[0, 1], [-1, 0]]``: the blocks that
    commute with every rotation. This keeps that part of each diagonal
    block, the orthogonal projection onto such matrices, and zeroes the rest.

    Args:
        matrix: a square array with an even number of rows.

    Example:
        >>> rotation_commuting_part(np.array([[1.0, 2.0], [4.0, 3.0]]))
        array([[ 2., -1.],
               [ 1.,  2.]])
    """
    matrix = _matrix("matrix", matrix)
    if matrix.shape[0] != matrix.shape[1] or matrix.shape[0] % 2:
        raise ValueError(f"matrix must be square with an even number of rows, got shape {matrix.shape}")
    part = np.zeros_like(matrix)
    for start in range(0, matrix.shape[0], 2):
        (a, b), (c, d) = matrix[start : start + 2, start : start + 2]
        mean_diagonal, mean_turn = (a + d) / 2, (b - c) / 2
        part[start : start + 2, start : start + 2] = [[mean_diagonal, mean_turn], [-mean_turn, mean_diagonal]]
    return part


def rotation_share(matrix) -> float:
    """The percent of the squared norm of ``matrix`` in its ``a I + b J`` blocks.

    The part :func:`rotation_commuting_part` keeps, measured against the
    whole: 100 for a matrix that scores by offset alone, near ``100 / D``
    for a ``D x D`` one of independent entries.

    Example:
        >>> round(rotation_share(np.array([[1.0, 2.0], [4.0, 3.0]])), 2)
        33.33
    """
    matrix = _matrix("matrix", matrix)
    total = np.sum(matrix**2)
    if total == 0:
        raise ValueError("matrix must not be all zeros: it has no norm to share")
    return float(100 * np.sum(rotation_commuting_part(matrix) ** 2) / total)
