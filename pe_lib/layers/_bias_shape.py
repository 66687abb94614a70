"""The shape contract shared by the layers that return a bias per head."""

from __future__ import annotations

from keras import ops


def check_queries(layer, queries) -> None:
    """Refuse queries without a ``(length, depth)`` pair of last axes."""
    if len(queries.shape) < 2:
        raise ValueError(
            f"{layer.name}: queries must have shape (batch, length, depth), "
            f"got shape {tuple(queries.shape)}"
        )


def block_lengths(queries, keys):
    """The numbers of queries and of keys (the keys default to the queries)."""
    query_length = ops.shape(queries)[-2]
    return query_length, query_length if keys is None else ops.shape(keys)[-2]


def block_offsets(query_length, key_length, query_start=None, key_start=0, query_positions=None,
                  key_positions=None):
    """The int32 offsets ``j - i`` of key ``j`` from query ``i``, ``(query_length, key_length)``.

    The queries start at ``query_start``, by default ``key_length - query_length``
    (the last queries of the keys, as in cached decoding); the keys at ``key_start``.
    ``query_positions`` ``(query_length,)`` or ``(batch, query_length)`` replace
    ``query_start`` with the position of each query, ``key_positions`` ``key_start``
    with that of each key (a row of positions that skips its pads); with a batch of
    either, the offsets are ``(batch, query_length, key_length)``.

    >>> import numpy as np
    >>> ops.convert_to_numpy(block_offsets(2, 3)).tolist()
    [[-1, 0, 1], [-2, -1, 0]]

    A row of three steps whose first is a pad (position 0) and a query at position 2:

    >>> ops.convert_to_numpy(block_offsets(1, 3, query_positions=np.array([[2]]),
    ...                                    key_positions=np.array([[0, 0, 1]]))).tolist()
    [[[-2, -2, -1]]]
    """
    if query_positions is None:
        if query_start is None:
            query_start = key_length - query_length
        queries = ops.arange(query_length, dtype="int32") + query_start
    else:
        queries = _positions("query_positions", query_positions, query_length)
    if key_positions is None:
        keys = ops.arange(key_length, dtype="int32") + key_start
    else:
        keys = _positions("key_positions", key_positions, key_length)
    return ops.expand_dims(keys, -2) - ops.expand_dims(queries, -1)


def _positions(name, positions, length):
    """``positions`` as int32 ``(length,)`` or ``(batch, length)``, or an error naming ``name``."""
    positions = ops.convert_to_tensor(positions)
    shape = tuple(positions.shape)
    if len(shape) not in (1, 2) or (isinstance(length, int) and shape[-1] not in (None, length)):
        raise ValueError(f"{name} must have shape ({length},) or (batch, {length}), got shape {shape}")
    return ops.cast(positions, "int32")


def per_row(bias, offsets, queries):
    """``bias`` ``(heads, q, k)``, or ``(batch, heads, q, k)`` when ``offsets`` have a batch axis.

    Offsets without one give the same bias for every row: it is repeated over
    the batch axes of the queries (:func:`over_batch`).
    """
    if len(offsets.shape) == 2:
        return over_batch(bias, queries)
    return bias


def over_batch(bias, queries):
    """The ``(heads, q, k)`` bias repeated over the batch axes of the queries."""
    batch = tuple(ops.shape(queries)[:-2])
    if not batch:
        return bias
    return ops.broadcast_to(bias, batch + tuple(ops.shape(bias)))


def bias_shape(heads: int, queries_shape, keys_shape=None) -> tuple:
    """``(*batch, heads, q, k)`` for queries ``(*batch, q, depth)``."""
    keys = queries_shape[-2] if keys_shape is None else keys_shape[-2]
    return (*queries_shape[:-2], heads, queries_shape[-2], keys)
