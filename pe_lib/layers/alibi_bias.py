r"""ALiBi as a Keras layer: the linear distance bias of each head, block by block."""

from __future__ import annotations

import keras
from keras import ops

from pe_lib._checks import require_choice, require_int
from pe_lib.alibi import FORMS, alibi_slopes
from pe_lib.layers._bias_shape import bias_shape, block_lengths, block_offsets, check_queries, per_row
from pe_lib.layers._masking import masked_score


@keras.saving.register_keras_serializable(package="pe_lib")
class AlibiBias(keras.layers.Layer):
    r"""The bias :math:`-m_h\,(i - j)` to add to the attention scores of each head.

    The keras.ops twin of :func:`pe_lib.alibi.alibi_block`. Called on the
    attention's queries ``(batch, q, depth)`` (and optionally its keys
    ``(batch, k, depth)``), of which only the shapes are read, it returns the
    bias ``(batch, heads, q, k)``, ready to add to the scores of a
    multi-head attention. Without a batch axis, queries ``(q, depth)`` give
    ``(heads, q, k)``, the shape of the NumPy reference. (keras-hub's
    ``AlibiBias`` takes the scores instead and returns them with the bias
    added; returning the bias alone lets a caller choose the block of
    positions, ``query_start`` and ``key_start``, as in cached decoding.)
    The layer has no
    weights and keeps no table: each call builds the bias of the block of
    queries and keys it is asked for, so a long sequence, or one query at a
    time in cached decoding, costs only that block. The distances are formed
    as integers and multiplied by the slopes in float32 (float64 under a
    float64 policy) before one rounding to the compute dtype, so a float16
    bias is the float16 value nearest the product, not a product of float16
    values. The diagonal is +0.0.

    Args:
        heads: number of heads; head ``h`` uses ``alibi_slopes(heads)[h]``.
        form: ``"causal"`` (keys after the query get a large negative bias,
            finite in the compute dtype: -1e9, or -32752 in float16, so that
            a masked row never produces NaN) or ``"symmetric"``
            (:math:`-m_h |i - j|`).
        **kwargs: other arguments for ``keras.layers.Layer``.

    Example:
        In a model, on inputs of any length:

        >>> inputs = keras.Input(shape=(None, 16))
        >>> bias = AlibiBias(heads=4)(inputs)
        >>> tuple(bias.shape)
        (None, 4, None, None)

        Against the NumPy reference, for 3 queries at positions 2, 3, 4
        (the last of 5 keys):

        >>> import numpy as np
        >>> from pe_lib.alibi import alibi_block
        >>> queries, keys = np.zeros((1, 3, 4), "float32"), np.zeros((1, 5, 4), "float32")
        >>> bias = keras.ops.convert_to_numpy(AlibiBias(heads=8)(queries, keys))
        >>> bias.shape
        (1, 8, 3, 5)
        >>> reference = alibi_block([2, 3, 4], np.arange(5), 8)
        >>> bool(np.allclose(bias[0][:, :, :3], reference[:, :, :3]))
        True
    """

    def __init__(self, heads: int, form: str = "causal", **kwargs):
        super().__init__(**kwargs)
        self.heads = require_int("heads", heads, minimum=1)
        self.form = require_choice("form", form, FORMS)
        self._slopes = alibi_slopes(self.heads)
        self.built = True

    def call(self, queries, keys=None, query_start=None, key_start=0, query_positions=None, key_positions=None):
        """The ALiBi bias of a block of queries and keys.

        Args:
            queries: the queries, ``(..., query_length, depth)``; only the shape
                is used.
            keys: the keys, ``(..., key_length, depth)``; by default the queries.
            query_start: position of the first query; by default
                ``key_length - query_length``, the last queries of the keys.
            key_start: position of the first key, 0 by default.
            query_positions: the position of each query, ``(query_length,)``
                or ``(batch, query_length)``; replaces ``query_start``.
            key_positions: the position of each key, ``(key_length,)`` or
                ``(batch, key_length)``; replaces ``key_start``. Rows of
                positions that skip their pads, ``cumsum(mask) - 1``, give
                BLOOM's bias, in which a pad is not a step.

        Returns:
            A ``(..., heads, query_length, key_length)`` tensor in the compute
            dtype, the leading axes those of the queries (or of the
            positions, when they have a batch axis).
        """
        check_queries(self, queries)
        query_length, key_length = block_lengths(queries, keys)
        offsets = block_offsets(query_length, key_length, query_start, key_start, query_positions, key_positions)
        behind = -offsets  # i - j
        if len(behind.shape) == 3:  # a row of positions per batch entry: (batch, 1, q, k)
            behind = ops.expand_dims(behind, 1)
        exact = "float64" if self.compute_dtype == "float64" else "float32"
        slopes = ops.convert_to_tensor(self._slopes, exact)[:, None, None]
        distance = ops.cast(behind, exact)
        # 0.0 - x, not -x: the diagonal is +0.0, as in alibi_block, never -0.0.
        if self.form == "symmetric":
            bias = ops.cast(0.0 - slopes * ops.abs(distance), self.compute_dtype)
        else:
            penalty = 0.0 - slopes * distance
            bias = ops.where(behind < 0, ops.cast(masked_score(self.compute_dtype), exact), penalty)
            bias = ops.cast(bias, self.compute_dtype)
        return per_row(bias, offsets, queries)

    def compute_output_shape(self, queries_shape, keys_shape=None):
        return bias_shape(self.heads, queries_shape, keys_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"heads": self.heads, "form": self.form})
        return config
