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


def block_offsets(query_length, key_length, query_start=None, key_start=0):
    """The ``(query_length, key_length)`` int32 offsets ``j - i`` of key ``j`` from query ``i``.

    The queries start at ``query_start``, by default ``key_length - query_length``
    (the last queries of the keys, as in cached decoding); the keys at ``key_start``.
    """
    if query_start is None:
        query_start = key_length - query_length
    queries = ops.arange(query_length, dtype="int32") + query_start
    keys = ops.arange(key_length, dtype="int32") + key_start
    return keys[None, :] - queries[:, None]


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
