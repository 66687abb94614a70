"""Keras layers that give a Transformer its positions.

- :class:`PositionalEncoding`: adds the fixed sinusoidal table; no parameters.
- :class:`LearnedPositionEmbedding`: adds a trained ``(max_length, depth)`` table.
- :class:`TokenAndPositionEmbedding`: token ``Embedding`` followed by either of the two.

All three crop their table to the input's length, keep the Keras mask, are
registered for ``.keras`` saving under the package name ``pe_lib`` (import
``pe_lib.layers`` before ``keras.saving.load_model``), and raise a
``ValueError`` naming the length when an input is longer than ``max_length``.

>>> import numpy as np
>>> from pe_lib.layers import LearnedPositionEmbedding, PositionalEncoding
>>> inputs = np.zeros((1, 8, 4), dtype="float32")
>>> fixed, learned = PositionalEncoding(max_length=8), LearnedPositionEmbedding(max_length=8)
>>> _ = fixed(inputs), learned(inputs)
>>> fixed.count_params(), learned.count_params()
(0, 32)
"""

from pe_lib.layers.learned_position_embedding import LearnedPositionEmbedding
from pe_lib.layers.positional_encoding import PositionalEncoding
from pe_lib.layers.token_and_position_embedding import POSITION_KINDS, TokenAndPositionEmbedding

__all__ = ["POSITION_KINDS", "LearnedPositionEmbedding", "PositionalEncoding", "TokenAndPositionEmbedding"]
