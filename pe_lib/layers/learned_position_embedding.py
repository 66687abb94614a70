"""A learned position table: one trainable vector per position, up to a maximum length."""

from __future__ import annotations

import keras
from keras import ops

from pe_lib._checks import require_int
from pe_lib.layers._length_check import check_positions, check_rows, check_steps
from pe_lib.layers.positional_encoding import check_input_shape


@keras.saving.register_keras_serializable(package="pe_lib")
class LearnedPositionEmbedding(keras.layers.Layer):
    """Adds a trainable ``(max_length, depth)`` table of position vectors to its input.

    Row ``p`` of the table is the vector added at position ``p``. It is a
    weight like any other, trained by backpropagation, so it costs
    ``max_length * depth`` parameters, and a row that no training sequence
    reached stays at its initial value. Each call crops the table to the
    number of steps of its input and adds it to every sequence in the batch;
    ``layer(x, start=t)`` adds rows ``t`` onwards instead, for cached
    decoding one step at a time, and ``layer(x, positions=p)`` adds row
    ``p[b, t]`` to step ``t`` of row ``b``: each row of a left-padded batch at
    its own positions (``cumsum(mask) - 1``, then
    :meth:`PositionalSelfAttention.next_positions
    <pe_lib.layers.PositionalSelfAttention.next_positions>` while decoding).

    The layer passes any Keras mask through unchanged. An input longer than
    ``max_length`` raises ``ValueError`` (or, for a length known only at run
    time inside a compiled TensorFlow function, ``InvalidArgumentError``):
    there is no row to add.

    Args:
        max_length: the number of rows of the table, the largest number of
            steps the layer accepts.
        initializer: how the table starts; any ``keras.initializers`` name
            or object.
        **kwargs: other arguments for ``keras.layers.Layer``, such as
            ``name`` and ``dtype``.

    Example:

    >>> import numpy as np
    >>> from pe_lib.layers import LearnedPositionEmbedding
    >>> layer = LearnedPositionEmbedding(max_length=500)
    >>> outputs = layer(np.zeros((2, 10, 512), dtype="float32"))
    >>> tuple(outputs.shape), layer.count_params()
    ((2, 10, 512), 256000)
    """

    def __init__(self, max_length: int, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.max_length = require_int("max_length", max_length, minimum=1)
        self.initializer = keras.initializers.get(initializer)
        self.supports_masking = True
        self.depth = None
        self.table = None

    def build(self, input_shape) -> None:
        check_input_shape(type(self).__name__, input_shape)
        check_steps(type(self).__name__, input_shape[-2], self.max_length)
        self.depth = int(input_shape[-1])
        self.table = self.add_weight(
            name="table", shape=(self.max_length, self.depth),
            initializer=self.initializer, trainable=True)

    def call(self, inputs, start=0, positions=None):
        check_input_shape(type(self).__name__, inputs.shape, self.depth)
        start = require_int("start", start, minimum=0)
        if positions is not None:
            if start:
                raise ValueError(f"{type(self).__name__}: give start or "
                                 f"positions, not both (got start={start})")
            positions = check_positions(type(self).__name__, positions,
                                        ops.shape(inputs)[-2], self.max_length)
            rows = ops.take(self.table, positions, axis=0)
            return inputs + ops.cast(rows, inputs.dtype)
        steps = check_steps(type(self).__name__, ops.shape(inputs)[-2],
                            self.max_length)
        if start:  # cached decoding: rows start, start + 1, ...
            check_rows(type(self).__name__, start, steps, self.max_length)
        # crop to the input's steps; the batch axis broadcasts
        return inputs + ops.cast(self.table[start:start + steps], inputs.dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {"max_length": self.max_length, "initializer": keras.initializers.serialize(self.initializer)}
        )
        return config
