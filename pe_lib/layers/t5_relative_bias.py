"""T5's relative-position bias as a Keras layer: one learned scalar per bucket and head."""

from __future__ import annotations

import keras
from keras import ops

from pe_lib._checks import require_int
from pe_lib.layers._bias_shape import bias_shape, block_lengths, block_offsets, check_queries, per_row
from pe_lib.t5 import _check_settings, bucket_thresholds


@keras.saving.register_keras_serializable(package="pe_lib")
class T5RelativeBias(keras.layers.Layer):
    """Adds to each score the learned scalar of its offset's bucket, per head.

    The buckets are those of :func:`pe_lib.t5.relative_position_bucket`,
    computed with integer comparisons against the exact bucket starts
    (:func:`pe_lib.t5.bucket_thresholds`), so the layer and the NumPy
    reference agree at every offset, in settings with empty buckets too (an
    empty bucket repeats the next threshold, and no offset reaches its row). The weight ``embeddings`` has shape
    ``(num_buckets, heads)``, Hugging Face's ``relative_attention_bias``.

    Called on the attention's queries ``(batch, q, depth)`` (and optionally
    its keys ``(batch, k, depth)``), of which only the shapes are read, the
    layer returns the bias ``(batch, heads, q, k)`` to add to the scores;
    queries ``(q, depth)`` without a batch axis give ``(heads, q, k)``.

    Args:
        heads: number of heads.
        bidirectional: ``True`` for an encoder, ``False`` for causal attention.
        num_buckets: total number of buckets (T5: 32).
        max_distance: distance from which offsets share the last bucket (T5: 128).
        embeddings_initializer: initializer of the ``(num_buckets, heads)`` table.
        **kwargs: other arguments for ``keras.layers.Layer``.

    Example:
        In a model, on inputs of any length:

        >>> inputs = keras.Input(shape=(None, 16))
        >>> tuple(T5RelativeBias(heads=2)(inputs).shape)
        (None, 2, None, None)

        Against the NumPy buckets, for a batch of 3 sequences of 5 steps:

        >>> import numpy as np
        >>> from pe_lib.t5 import bucket_matrix
        >>> layer = T5RelativeBias(heads=2, num_buckets=8, max_distance=4,
        ...                        embeddings_initializer="random_normal")
        >>> bias = keras.ops.convert_to_numpy(layer(np.zeros((3, 5, 4), "float32")))
        >>> bias.shape
        (3, 2, 5, 5)
        >>> table = keras.ops.convert_to_numpy(layer.embeddings)
        >>> expected = table[bucket_matrix(5, num_buckets=8, max_distance=4)]
        >>> bool(np.array_equal(bias[2], expected.transpose(2, 0, 1)))
        True
    """

    def __init__(self, heads: int, bidirectional: bool = True, num_buckets: int = 32,
                 max_distance: int = 128, embeddings_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.heads = require_int("heads", heads, minimum=1)
        self.bidirectional, per_direction, self.max_distance = _check_settings(
            bidirectional, num_buckets, max_distance
        )
        self.num_buckets = int(num_buckets)
        self.per_direction = per_direction
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self._starts = bucket_thresholds(
            bidirectional=self.bidirectional, num_buckets=self.num_buckets, max_distance=self.max_distance
        )[1:]
        self.embeddings = self.add_weight(
            shape=(self.num_buckets, self.heads), initializer=self.embeddings_initializer, name="embeddings"
        )
        self.built = True

    def buckets(self, query_length, key_length, query_start=None, key_start=0, query_positions=None,
                key_positions=None):
        """The ``(query_length, key_length)`` int32 buckets of the offsets ``j - i``.

        ``(batch, query_length, key_length)`` when the positions have a batch axis.
        """
        offsets = block_offsets(query_length, key_length, query_start, key_start, query_positions, key_positions)
        if self.bidirectional:
            first = ops.where(offsets > 0, self.per_direction, 0)
            distance = ops.abs(offsets)
        else:
            first = ops.zeros_like(offsets)
            distance = ops.maximum(-offsets, 0)
        starts = ops.convert_to_tensor(self._starts, "int32")
        count = ops.sum(ops.cast(distance[..., None] >= starts, "int32"), axis=-1)
        return ops.cast(first, "int32") + count

    def call(self, queries, keys=None, query_start=None, key_start=0, query_positions=None, key_positions=None):
        """The learned bias of a block of queries and keys, per head.

        Args:
            queries: the queries, ``(..., query_length, depth)``; only the shape
                is used.
            keys: the keys, ``(..., key_length, depth)``; by default the queries.
            query_start: position of the first query; by default
                ``key_length - query_length``.
            key_start: position of the first key, 0 by default.
            query_positions: the position of each query, ``(query_length,)``
                or ``(batch, query_length)``; replaces ``query_start``.
            key_positions: the position of each key, ``(key_length,)`` or
                ``(batch, key_length)``; replaces ``key_start``.

        Returns:
            A ``(..., heads, query_length, key_length)`` tensor in the compute
            dtype, the leading axes those of the queries (or of the
            positions, when they have a batch axis).
        """
        check_queries(self, queries)
        query_length, key_length = block_lengths(queries, keys)
        buckets = self.buckets(query_length, key_length, query_start, key_start, query_positions, key_positions)
        bias = ops.take(ops.cast(self.embeddings, self.compute_dtype), buckets, axis=0)  # (..., q, k, heads)
        return per_row(ops.moveaxis(bias, -1, -3), buckets, queries)

    def compute_output_shape(self, queries_shape, keys_shape=None):
        return bias_shape(self.heads, queries_shape, keys_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "heads": self.heads, "bidirectional": self.bidirectional, "num_buckets": self.num_buckets,
            "max_distance": self.max_distance,
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
        })
        return config
