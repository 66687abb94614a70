r"""Causal multi-head self-attention that takes its positions from the registry."""

from __future__ import annotations

import inspect

import keras
import numpy as np
from keras import ops

from pe_lib._checks import require_int, require_positive_float
from pe_lib.layers._masking import masked_score
from pe_lib.layers.shaw_relative_positions import ShawRelativePositions
from pe_lib.methods import get_method



@keras.saving.register_keras_serializable(package="pe_lib")
class PositionalSelfAttention(keras.layers.Layer):
    r"""Causal multi-head self-attention with the positions of one method.

    Each head projects its input to queries :math:`q_i`, keys :math:`k_j` and
    values :math:`v_j` of size :math:`d` = ``key_dim`` and scores query
    :math:`i` against key :math:`j \le i`. What the positions do depends on
    where the method acts (:mod:`pe_lib.methods`):

    - ``"queries and keys"`` (``"rope"`` and its variants): :math:`q_i` and
      :math:`k_j` are rotated by :class:`~pe_lib.layers.RotaryEmbedding`;
    - ``"scores"``: the method's layer adds its bias, :math:`-m_h (i - j)` for
      ``"alibi"`` (:class:`~pe_lib.layers.AlibiBias`), a learned scalar per
      bucket for ``"t5"`` (:class:`~pe_lib.layers.T5RelativeBias`),
      :math:`q_i \cdot w^K_{ij}` for ``"shaw"``, whose value vectors are added
      to the output too (:class:`~pe_lib.layers.ShawRelativePositions`);
    - ``"input"`` and ``"none"``: nothing here (an input method is added to
      the tokens before this layer).

    Keys after the query get no weight. Each head's softmax-weighted sum of
    values is concatenated with the others and projected back to the input
    depth. Nothing in the layer depends on a maximum length.

    Args:
        heads: number of heads.
        key_dim: size of each head's queries, keys and values; even for RoPE.
        method: a name from :data:`pe_lib.methods.METHODS`, or its entry.
        base: the RoPE base :math:`N` (RoPE family only).
        method_options: more arguments for the method's layer, e.g.
            ``{"scale": 4.0}`` for ``"rope_pi"``, ``{"scale": 4.0,
            "original_length": 16}`` for ``"rope_yarn"``,
            ``{"max_distance": 8}`` for ``"shaw"``.
            A scores layer gets ``heads`` from this layer, and T5's buckets are
            causal (``bidirectional=False``) unless said otherwise.
        **kwargs: other arguments for ``keras.layers.Layer``, such as ``name``.

    Example:

    Four 8 x 8 projections (query, key, value, output), 256 weights:

    >>> layer = PositionalSelfAttention(heads=2, key_dim=4, method="alibi")
    >>> outputs = layer(np.zeros((3, 7, 8), dtype="float32"))
    >>> tuple(outputs.shape), layer.count_params()
    ((3, 7, 8), 256)
    """

    def __init__(self, heads: int, key_dim: int, method: str = "none", base: float = 10000.0,
                 method_options: dict | None = None, **kwargs):
        super().__init__(**kwargs)
        self.heads = require_int("heads", heads, minimum=1)
        self.key_dim = require_int("key_dim", key_dim, minimum=1)
        entry = get_method(method)
        self.method = entry.name
        self.base = require_positive_float("base", base)
        self.method_options = dict(method_options or {})
        self.acts_on = entry.acts_on
        self.positions = None
        if entry.acts_on == "queries and keys":
            if self.key_dim % 2:
                raise ValueError(f"key_dim must be even for RoPE (it rotates features in pairs), got {key_dim}")
            self.positions = entry.layer(method=self.method, base=self.base, sequence_axis=2,
                                         name="positions", dtype=self.dtype_policy, **self.method_options)
        elif entry.acts_on == "scores":
            options = dict(self.method_options)
            if "heads" in inspect.signature(entry.layer).parameters:
                options["heads"] = self.heads
            if "bidirectional" in inspect.signature(entry.layer).parameters:
                options.setdefault("bidirectional", False)
            self.positions = entry.layer(name="positions", dtype=self.dtype_policy, **options)

    def build(self, input_shape) -> None:
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(f"{self.name} expects inputs of shape (batch, steps, depth), got shape {input_shape}")
        width = self.heads * self.key_dim
        self.query = keras.layers.Dense(width, use_bias=False, name="query", dtype=self.dtype_policy)
        self.key = keras.layers.Dense(width, use_bias=False, name="key", dtype=self.dtype_policy)
        self.value = keras.layers.Dense(width, use_bias=False, name="value", dtype=self.dtype_policy)
        self.output_projection = keras.layers.Dense(input_shape[-1], use_bias=False, name="output",
                                                    dtype=self.dtype_policy)
        for dense in (self.query, self.key, self.value):
            dense.build(input_shape)
        self.output_projection.build((*input_shape[:-1], width))
        if self.acts_on == "scores" and not self.positions.built:
            self.positions.build((None, self.heads, None, self.key_dim))

    def _split_heads(self, x, steps):
        x = ops.reshape(x, (ops.shape(x)[0], steps, self.heads, self.key_dim))
        return ops.transpose(x, (0, 2, 1, 3))  # (batch, heads, steps, key_dim)

    def scores(self, inputs):
        """The ``(batch, heads, steps, steps)`` scores before the softmax.

        Keys after the query hold a large negative score that the compute
        dtype can represent: -1e9, or -32752 in float16, whose range ends at
        65504.
        """
        steps = ops.shape(inputs)[1]
        queries = self._split_heads(self.query(inputs), steps)
        keys = self._split_heads(self.key(inputs), steps)
        if self.acts_on == "queries and keys":
            queries, keys = self.positions(queries), self.positions(keys)
        scores = ops.matmul(queries, ops.transpose(keys, (0, 1, 3, 2))) / float(np.sqrt(self.key_dim))
        if self.acts_on == "scores":
            # a bias layer reads the (batch, steps, depth) inputs: (batch, heads, q, k)
            scores = scores + ops.cast(self._scores_term(inputs, queries), scores.dtype)
        where = ops.arange(steps)
        behind = where[:, None] - where[None, :]  # i - j
        return ops.where(behind >= 0, scores, ops.full_like(scores, masked_score(scores.dtype)))

    def _scores_term(self, inputs, queries):
        """What a ``"scores"`` method adds: a bias from the inputs' shape, or Shaw's key term."""
        if isinstance(self.positions, ShawRelativePositions):
            return self.positions(queries)  # q_i . w_ij per head, from the projected queries
        return self.positions(inputs)

    def call(self, inputs):
        steps = ops.shape(inputs)[1]
        weights = ops.softmax(self.scores(inputs), axis=-1)
        mixed = ops.matmul(weights, self._split_heads(self.value(inputs), steps))
        if hasattr(self.positions, "value_term"):  # Shaw's value vectors
            mixed = mixed + self.positions.value_term(weights)
        mixed = ops.reshape(ops.transpose(mixed, (0, 2, 1, 3)), (ops.shape(inputs)[0], steps, -1))
        return self.output_projection(mixed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "heads": self.heads, "key_dim": self.key_dim, "method": self.method, "base": self.base,
            "method_options": self.method_options,
        })
        return config
