"""A Transformer's input layer: token embeddings plus position information."""

from __future__ import annotations

import math

import keras
from keras import ops

from pe_lib._checks import require_int, require_positive_float
from pe_lib.methods import get_method, method_names


@keras.saving.register_keras_serializable(package="pe_lib")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Embeds token ids and adds a sinusoidal or learned position table.

    The token ids of shape ``(batch, steps)`` go through a
    ``keras.layers.Embedding``; the result, optionally multiplied by
    ``sqrt(embedding_dim)`` as in the original Transformer, goes through a
    :class:`~pe_lib.layers.PositionalEncoding` (``method="sinusoidal"``) or a
    :class:`~pe_lib.layers.LearnedPositionEmbedding` (``method="learned"``):
    the methods of :mod:`pe_lib.methods` that act on the input.
    With ``mask_zero=True`` token id 0 is padding and the layer outputs the
    token embedding's mask. Call one instance on several inputs (an encoder's
    and a decoder's) to share the token table and the position layer.

    Args:
        vocabulary_size: number of token ids, ``0 .. vocabulary_size - 1``.
        max_length: the largest number of steps the layer accepts.
        embedding_dim: size of each token and position vector.
        method: ``"sinusoidal"`` or ``"learned"``.
        mask_zero: treat token id 0 as padding and output a mask.
        scale_embeddings: multiply the token vectors by ``sqrt(embedding_dim)``.
        base: the base ``N`` of the sinusoidal table (ignored when learned).
        embeddings_initializer: initializer of the token table.
        position_initializer: initializer of the learned position table
            (ignored when sinusoidal).
        **kwargs: other arguments for ``keras.layers.Layer``, such as
            ``name`` and ``dtype``.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> from pe_lib.layers import TokenAndPositionEmbedding
    >>> embed = TokenAndPositionEmbedding(10000, 500, 512, mask_zero=True)
    >>> tokens = np.array([[5, 17, 2, 0, 0]])
    >>> outputs = embed(tokens)
    >>> tuple(outputs.shape), keras.ops.convert_to_numpy(embed.compute_mask(tokens)).tolist()
    ((1, 5, 512), [[True, True, True, False, False]])
    """

    def __init__(
        self,
        vocabulary_size: int,
        max_length: int,
        embedding_dim: int,
        method: str = "sinusoidal",
        mask_zero: bool = False,
        scale_embeddings: bool = False,
        base: float = 10000.0,
        embeddings_initializer="uniform",
        position_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=1)
        self.max_length = require_int("max_length", max_length, minimum=1)
        self.embedding_dim = require_int("embedding_dim", embedding_dim, minimum=1)
        entry = get_method(method)
        self.method = entry.name
        if entry.acts_on != "input":
            raise ValueError(
                f"method must be one of {', '.join(map(repr, method_names('input')))} "
                f"(added to the token vectors); got {method!r}"
            )
        self.mask_zero = _require_bool("mask_zero", mask_zero)
        self.scale_embeddings = _require_bool("scale_embeddings", scale_embeddings)
        self.base = require_positive_float("base", base)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.position_initializer = keras.initializers.get(position_initializer)
        self.token_embedding = keras.layers.Embedding(
            self.vocabulary_size, self.embedding_dim, mask_zero=self.mask_zero,
            embeddings_initializer=self.embeddings_initializer,
            dtype=self.dtype_policy, name="token_embedding",
        )
        layer = entry.layer
        if self.method == "sinusoidal":
            self.position_embedding = layer(
                self.max_length, base=self.base, dtype=self.dtype_policy, name="position_encoding"
            )
        else:
            self.position_embedding = layer(
                self.max_length, initializer=self.position_initializer,
                dtype=self.dtype_policy, name="position_embedding",
            )

    def build(self, input_shape) -> None:
        shape = tuple(input_shape)
        if len(shape) != 2:
            raise ValueError(
                f"{type(self).__name__} expects token ids of shape (batch, steps), got shape {shape}"
            )
        self.token_embedding.build(shape)
        self.position_embedding.build((*shape, self.embedding_dim))

    def call(self, inputs):
        vectors = self.token_embedding(inputs)
        if self.scale_embeddings:
            vectors = vectors * ops.cast(math.sqrt(self.embedding_dim), vectors.dtype)
        return self.position_embedding(vectors)

    def compute_mask(self, inputs, mask=None):
        return self.token_embedding.compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape), self.embedding_dim)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "max_length": self.max_length,
                "embedding_dim": self.embedding_dim,
                "method": self.method,
                "mask_zero": self.mask_zero,
                "scale_embeddings": self.scale_embeddings,
                "base": self.base,
                "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
                "position_initializer": keras.initializers.serialize(self.position_initializer),
            }
        )
        return config


def _require_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return value
