r"""Shaw et al.'s relative positions as a Keras layer: two learned tables of 2k + 1 vectors."""

from __future__ import annotations

import keras
from keras import ops

from pe_lib._checks import require_int
from pe_lib.layers._bias_shape import block_offsets


@keras.saving.register_keras_serializable(package="pe_lib")
class ShawRelativePositions(keras.layers.Layer):
    r"""Learned vectors per clipped offset, for the keys and for the values.

    Shaw, Uszkoreit and Vaswani (2018) learn two tables of :math:`2k + 1`
    vectors, :math:`w^K_{-k..k}` and :math:`w^V_{-k..k}`, shared by all heads.
    Query :math:`i` and key :math:`j` use row :math:`\operatorname{clip}(j - i, k)`
    of each (:func:`pe_lib.shaw.relative_indices`): the score gains
    :math:`q_i \cdot w^K_{ij}`, and the output of query :math:`i` gains
    :math:`\sum_j \alpha_{ij} w^V_{ij}`. Calling the layer gives the first term,
    divided by :math:`\sqrt{d}` like the content score; :meth:`value_term` the
    second.

    Args:
        max_distance: the clipping distance :math:`k` (16, as in the paper's experiments).
        initializer: initializer of both tables. The two tables start
            different: a random initializer draws the value table with its
            own seed (the given seed plus one, or a fresh one when unseeded).
        **kwargs: other arguments for ``keras.layers.Layer``.

    Example:
        >>> import numpy as np
        >>> from pe_lib.shaw import relative_scores
        >>> q = np.random.default_rng(0).normal(size=(4, 2)).astype("float32")
        >>> layer = ShawRelativePositions(max_distance=1, initializer="random_normal")
        >>> term = keras.ops.convert_to_numpy(layer(q))
        >>> keys_table = keras.ops.convert_to_numpy(layer.key_table)
        >>> bool(np.allclose(term, relative_scores(q, np.zeros_like(q), keys_table), atol=1e-5))
        True

        In a model, on inputs of any length:

        >>> inputs = keras.Input(shape=(None, 8))
        >>> tuple(ShawRelativePositions(max_distance=2)(inputs).shape)
        (None, None, None)
    """

    def __init__(self, max_distance: int = 16, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.max_distance = require_int("max_distance", max_distance, minimum=1)
        self.initializer = keras.initializers.get(initializer)

    def build(self, queries_shape) -> None:
        depth = queries_shape[-1]
        if depth is None:
            raise ValueError(f"{self.name} needs a known depth (last dimension), got shape {tuple(queries_shape)}")
        rows = 2 * self.max_distance + 1
        self.key_table = self.add_weight(shape=(rows, depth), initializer=self.initializer, name="key_table")
        self.value_table = self.add_weight(shape=(rows, depth), initializer=_reseeded(self.initializer),
                                           name="value_table")

    def indices(self, query_length, key_length, query_start=None, key_start=0, query_positions=None,
                key_positions=None):
        """The ``(query_length, key_length)`` table rows: ``clip(j - i, k) + k``.

        ``(batch, query_length, key_length)`` when the positions have a batch axis.
        """
        offsets = ops.clip(block_offsets(query_length, key_length, query_start, key_start, query_positions,
                                         key_positions), -self.max_distance, self.max_distance)
        return offsets + self.max_distance

    def call(self, queries, keys=None, query_start=None, key_start=0, query_positions=None, key_positions=None):
        r"""The key term :math:`q_i \cdot w^K_{ij} / \sqrt{d}` of each query and key.

        Args:
            queries: ``(..., query_length, depth)`` queries.
            keys: ``(..., key_length, depth)`` keys, only their number is used;
                by default the queries.
            query_start: position of the first query; by default
                ``key_length - query_length``.
            key_start: position of the first key, 0 by default.
            query_positions: the position of each query, ``(query_length,)``
                or ``(batch, query_length)``; replaces ``query_start``.
            key_positions: the position of each key, ``(key_length,)`` or
                ``(batch, key_length)``; replaces ``key_start``. With a batch
                axis, the queries are ``(batch, ..., query_length, depth)``.

        Returns:
            The ``(..., query_length, key_length)`` terms
            :math:`q_i \cdot w^K_{ij} / \sqrt{d}`.
        """
        if len(queries.shape) < 2:
            raise ValueError(f"{self.name}: queries must have shape (..., length, depth), got shape {tuple(queries.shape)}")
        query_length = ops.shape(queries)[-2]
        key_length = query_length if keys is None else ops.shape(keys)[-2]
        indices = self.indices(query_length, key_length, query_start, key_start, query_positions, key_positions)
        vectors = ops.take(ops.cast(self.key_table, queries.dtype), indices, axis=0)  # (q, k, d)
        depth = ops.cast(ops.shape(queries)[-1], queries.dtype)
        if len(indices.shape) == 2:
            return ops.einsum("...qd,qkd->...qk", queries, vectors) / ops.sqrt(depth)
        vectors = _under(vectors, len(queries.shape) + 1)  # (batch, ..., q, k, d)
        return ops.sum(ops.expand_dims(queries, -2) * vectors, axis=-1) / ops.sqrt(depth)

    def value_term(self, weights, query_start=None, key_start=0, query_positions=None, key_positions=None):
        r""":math:`\sum_j \alpha_{ij} w^V_{ij}` for attention weights ``(..., query_length, key_length)``.

        ``query_start``, ``key_start``, ``query_positions`` and
        ``key_positions`` place the block as in :meth:`call`.
        """
        query_length, key_length = ops.shape(weights)[-2], ops.shape(weights)[-1]
        indices = self.indices(query_length, key_length, query_start, key_start, query_positions, key_positions)
        vectors = ops.take(ops.cast(self.value_table, weights.dtype), indices, axis=0)
        if len(indices.shape) == 2:
            return ops.einsum("...qk,qkd->...qd", weights, vectors)
        vectors = _under(vectors, len(weights.shape) + 1)  # (batch, ..., q, k, d)
        return ops.sum(ops.expand_dims(weights, -1) * vectors, axis=-2)

    def compute_output_shape(self, queries_shape, keys_shape=None):
        """``(..., query_length, key_length)``; either length may be unknown (None)."""
        return (*queries_shape[:-1], queries_shape[-2] if keys_shape is None else keys_shape[-2])

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"max_distance": self.max_distance,
                       "initializer": keras.initializers.serialize(self.initializer)})
        return config


def _under(vectors, rank):
    """``vectors`` ``(batch, q, k, d)`` with axes after the batch's, up to ``rank`` axes (the heads')."""
    while len(vectors.shape) < rank:
        vectors = ops.expand_dims(vectors, 1)
    return vectors


def _reseeded(initializer):
    """``initializer`` with another seed, so that a second table does not repeat the first.

    A Keras random initializer draws the same values at every call; a
    deterministic one (zeros, ones, a constant) is returned as it is.
    """
    config = initializer.get_config()
    if "seed" not in config:
        return initializer
    seed = config["seed"]
    config["seed"] = seed + 1 if isinstance(seed, int) else None
    return type(initializer).from_config(config)
