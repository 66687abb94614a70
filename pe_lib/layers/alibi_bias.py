r"""ALiBi as a Keras layer: the linear distance bias of each head, block by block."""

from __future__ import annotations

import keras
from keras import ops

from pe_lib._checks import require_choice, require_int
from pe_lib.alibi import FORMS, alibi_slopes


@keras.saving.register_keras_serializable(package="pe_lib")
class AlibiBias(keras.layers.Layer):
    r"""The bias :math:`-m_h\,(i - j)` to add to the attention scores of each head.

    The keras.ops twin of :func:`pe_lib.alibi.alibi_block`. The layer has no
    weights and keeps no table: each call builds the bias of the block of
    queries and keys it is asked for, so a long sequence, or one query at a
    time in cached decoding, costs only that block. The distances are formed
    as integers; in float32 they are exact below :math:`2^{24}`.

    Args:
        heads: number of heads; head ``h`` uses ``alibi_slopes(heads)[h]``.
        form: ``"causal"`` (keys after the query get a large negative bias,
            ``-1e9``, rather than :math:`-\infty`, so that a masked row never
            produces NaN) or ``"symmetric"`` (:math:`-m_h |i - j|`).
        **kwargs: other arguments for ``keras.layers.Layer``.

    Example:
        >>> import numpy as np
        >>> from pe_lib.alibi import alibi_block
        >>> queries, keys = np.zeros((3, 4), "float32"), np.zeros((5, 4), "float32")
        >>> bias = AlibiBias(heads=8)(queries, keys)
        >>> reference = alibi_block([2, 3, 4], np.arange(5), 8)
        >>> bool(np.allclose(keras.ops.convert_to_numpy(bias)[:, :, :3], reference[:, :, :3]))
        True
    """

    def __init__(self, heads: int, form: str = "causal", **kwargs):
        super().__init__(**kwargs)
        self.heads = require_int("heads", heads, minimum=1)
        self.form = require_choice("form", form, FORMS)
        self._slopes = alibi_slopes(self.heads)
        self.built = True

    def call(self, queries, keys=None, query_start=None, key_start=0):
        """The ALiBi bias of a block of queries and keys.

        Args:
            queries: the queries, ``(..., query_length, depth)``; only the shape
                is used.
            keys: the keys, ``(..., key_length, depth)``; by default the queries.
            query_start: position of the first query; by default
                ``key_length - query_length``, the last queries of the keys.
            key_start: position of the first key, 0 by default.

        Returns:
            A ``(heads, query_length, key_length)`` tensor in the compute dtype.
        """
        if len(queries.shape) < 2:
            raise ValueError(f"{self.name}: queries must have shape (..., length, depth), got shape {tuple(queries.shape)}")
        query_length = ops.shape(queries)[-2]
        key_length = query_length if keys is None else ops.shape(keys)[-2]
        if query_start is None:
            query_start = key_length - query_length
        queries = ops.arange(query_length, dtype="int32") + query_start
        keys = ops.arange(key_length, dtype="int32") + key_start
        behind = ops.cast(queries[:, None] - keys[None, :], self.compute_dtype)  # i - j
        slopes = ops.cast(ops.convert_to_tensor(self._slopes), self.compute_dtype)[:, None, None]
        if self.form == "symmetric":
            return -slopes * ops.abs(behind)
        bias = -slopes * behind
        return ops.where(behind < 0, ops.cast(-1e9, self.compute_dtype), bias)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"heads": self.heads, "form": self.form})
        return config
