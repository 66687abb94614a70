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
