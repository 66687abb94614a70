"""Keras layers that give a Transformer its positions, one layer per file.

Added to the token vectors (methods that act on the input):

- :class:`PositionalEncoding`: the fixed sinusoidal table; no parameters.
- :class:`LearnedPositionEmbedding`: a trained ``(max_length, depth)`` table.
- :class:`TokenAndPositionEmbedding`: token ``Embedding`` followed by either.

Inside attention:

- :class:`RotaryEmbedding`: RoPE and its context-extension variants, on queries and keys.
- :class:`AlibiBias`: ALiBi's linear bias on the scores.
- :class:`T5RelativeBias`: T5's learned bias per bucket of offsets.
- :class:`ShawRelativePositions`: Shaw et al.'s learned key and value vectors per offset.
- :class:`PositionalSelfAttention`: causal self-attention with any method of
  :mod:`pe_lib.methods`.

Each layer is the Keras 3 twin (``keras.ops`` only, any backend) of a NumPy
reference at the package root; all are registered for ``.keras`` saving under
the package name ``pe_lib`` (import ``pe_lib.layers`` before
``keras.saving.load_model``). The tables crop to the input's length, keep the
Keras mask, and raise a ``ValueError`` naming the length when an input is
longer than ``max_length``.

>>> import numpy as np
>>> from pe_lib.layers import LearnedPositionEmbedding, PositionalEncoding
>>> inputs = np.zeros((1, 8, 4), dtype="float32")
>>> fixed, learned = PositionalEncoding(max_length=8), LearnedPositionEmbedding(max_length=8)
>>> _ = fixed(inputs), learned(inputs)
>>> fixed.count_params(), learned.count_params()
(0, 32)
"""

from pe_lib.layers.alibi_bias import AlibiBias
from pe_lib.layers.learned_position_embedding import LearnedPositionEmbedding
from pe_lib.layers.positional_encoding import PositionalEncoding
from pe_lib.layers.positional_self_attention import PositionalSelfAttention
from pe_lib.layers.rotary_embedding import RotaryEmbedding
from pe_lib.layers.shaw_relative_positions import ShawRelativePositions
from pe_lib.layers.t5_relative_bias import T5RelativeBias
from pe_lib.layers.token_and_position_embedding import TokenAndPositionEmbedding

__all__ = [
    "AlibiBias",
    "LearnedPositionEmbedding",
    "PositionalEncoding",
    "PositionalSelfAttention",
    "RotaryEmbedding",
    "ShawRelativePositions",
    "T5RelativeBias",
    "TokenAndPositionEmbedding",
]
