r"""Causal multi-head self-attention that takes its positions from the registry."""

from __future__ import annotations

import inspect

import keras
import numpy as np
from keras import ops

from pe_lib import temperature as temperatures
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

    Three options change the attention itself, as released models do
    (:mod:`pe_lib.layer_schemes` builds them per layer):

    - ``window`` keys at most per query, itself included, and the first
      ``sink_tokens`` keys besides (:func:`pe_lib.sinks.window_mask`;
      Hugging Face's ``sliding_window``, StreamingLLM's sinks);
    - ``sink_logit``: a learned logit per head that joins the softmax and
      takes weight from the keys (:func:`pe_lib.sinks.softmax_with_sink`;
      gpt-oss's ``sinks``), initialised to 0;
    - ``temperature``: a factor on each query by its position,
      ``{"kind": "llama4"}`` and the other kinds of
      :func:`pe_lib.temperature.query_temperature` (Llama 4's
      ``attn_temperature_tuning`` in its NoPE layers), applied after any
      rotation.

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
        window: the most keys a query sees (a sliding window), or ``None``.
        sink_tokens: first keys kept visible beside the window.
        sink_logit: whether each head learns a sink logit.
        temperature: ``None`` or ``{"kind": ..., **options}``.
        **kwargs: other arguments for ``keras.layers.Layer``, such as ``name``.

    Example:

    Four 8 x 8 projections (query, key, value, output), 256 weights:

    >>> layer = PositionalSelfAttention(heads=2, key_dim=4, method="alibi")
    >>> outputs = layer(np.zeros((3, 7, 8), dtype="float32"))
    >>> tuple(outputs.shape), layer.count_params()
    ((3, 7, 8), 256)

    A Llama 4 NoPE layer in a window of 4 keys with gpt-oss's sink logits:

    >>> nope = PositionalSelfAttention(heads=2, key_dim=4, window=4, sink_logit=True,
    ...                                temperature={"kind": "llama4", "floor_scale": 4})
    >>> tuple(nope(np.zeros((1, 9, 8), dtype="float32")).shape), nope.count_params()
    ((1, 9, 8), 258)
    """

    def __init__(self, heads: int, key_dim: int, method: str = "none", base: float = 10000.0,
                 method_options: dict | None = None, *, window: int | None = None, sink_tokens: int = 0,
                 sink_logit: bool = False, temperature: dict | None = None, **kwargs):
        super().__init__(**kwargs)
        self.window = None if window is None else require_int("window", window, minimum=1)
        self.sink_tokens = require_int("sink_tokens", sink_tokens, minimum=0)
        if self.sink_tokens and self.window is None:
            raise ValueError(f"sink_tokens={sink_tokens} needs a window (without one every key is visible)")
        if not isinstance(sink_logit, bool):
            raise TypeError(f"sink_logit must be True or False, got {sink_logit!r}")
        self.sink_logit = sink_logit
        self.temperature = None
        if temperature is not None:
            if not isinstance(temperature, dict) or "kind" not in temperature:
                raise ValueError(f"temperature must be a dict naming its kind, got {temperature!r}")
            options = {name: value for name, value in temperature.items() if name != "kind"}
            self.temperature = {"kind": temperature["kind"],
                                **temperatures.temperature_options(temperature["kind"], options)}
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
        if self.sink_logit:
            self.sinks = self.add_weight(shape=(self.heads,), initializer="zeros", name="sinks")
        if self.acts_on == "scores" and not self.positions.built:
            self.positions.build((None, self.heads, None, self.key_dim))

    def _split_heads(self, x, steps):
        x = ops.reshape(x, (ops.shape(x)[0], steps, self.heads, self.key_dim))
        return ops.transpose(x, (0, 2, 1, 3))  # (batch, heads, steps, key_dim)

    def scores(self, inputs, position_ids=None):
        """The ``(batch, heads, steps, steps)`` scores before the softmax.

        A method acts in one of two places: RoPE rotates each head's
        queries and keys; a ``"scores"`` method (ALiBi, T5, Shaw) adds its
        term to every score. ``_mask`` then hides the keys that a query
        may not see.
        """
        steps = ops.shape(inputs)[1]
        queries = self._split_heads(self.query(inputs), steps)
        keys = self._split_heads(self.key(inputs), steps)
        if self.acts_on == "queries and keys":  # RoPE
            queries = self.positions(queries, positions=position_ids)
            keys = self.positions(keys, positions=position_ids)
        if self.temperature is not None:
            queries = self._apply_temperature(queries, steps, position_ids)
        keys_t = ops.transpose(keys, (0, 1, 3, 2))
        scores = ops.matmul(queries, keys_t) / float(np.sqrt(self.key_dim))
        if self.acts_on == "scores":  # ALiBi, T5, Shaw
            term = self._scores_term(inputs, queries)
            scores = scores + ops.cast(term, scores.dtype)
        return self._mask(scores, steps, position_ids)

    def _apply_temperature(self, queries, steps, position_ids=None):
        """Each query times its temperature factor (after any rotation)."""
        factor = self._query_temperature(steps, position_ids)
        factor = factor if position_ids is None else factor[:, None]  # (batch, 1, steps)
        return queries * ops.cast(factor, queries.dtype)[..., None]

    def _mask(self, scores, steps, position_ids=None):
        """The scores, with those of keys a query may not see replaced.

        Hidden: keys after the query, keys outside the ``window`` (but for
        the first ``sink_tokens``) and, with ``position_ids`` (packed
        documents, see :meth:`call`), keys of other documents. They hold a
        large negative score that the compute dtype can represent: -1e9, or
        -32752 in float16, whose range ends at 65504.
        """
        where = ops.arange(steps)
        behind = where[:, None] - where[None, :]  # i - j
        visible = behind >= 0
        if self.window is not None:
            visible = ops.logical_and(
                visible, ops.logical_or(behind < self.window, where[None, :] < self.sink_tokens))
        if position_ids is not None:  # packed documents: a key of another document is never seen
            steps_between = ops.diff(ops.cast(position_ids, "int32"), axis=-1)
            starts = ops.cast(ops.not_equal(steps_between, 1), "int32")
            documents = ops.concatenate([ops.zeros_like(starts[:, :1]), ops.cumsum(starts, axis=-1)], axis=-1)
            same = ops.equal(documents[:, :, None], documents[:, None, :])[:, None]
            visible = ops.logical_and(visible, same)
        return ops.where(visible, scores, ops.full_like(scores, masked_score(scores.dtype)))

    def _query_temperature(self, steps, position_ids=None):
        """The factor of each query, ``(steps,)`` or ``(batch, steps)``, in float32 (float64 under a float64 policy)."""
        exact = "float64" if self.compute_dtype == "float64" else "float32"
        options = self.temperature
        positions = ops.arange(steps, dtype="int32") if position_ids is None else ops.cast(position_ids, "int32")
        if options["kind"] == "llama4":
            floors = ops.floor_divide(positions + 1, options["floor_scale"])  # exact, in integers
            return 1.0 + options["attn_scale"] * ops.log1p(ops.cast(floors, exact))
        if options["kind"] == "log_length":
            trained = options["trained_length"]
            count = ops.cast(positions + 1, exact)
            return ops.where(positions + 1 > trained, ops.log(count) / float(np.log(trained)),
                             ops.ones_like(count))
        return ops.full(ops.shape(positions), options["factor"], dtype=exact)

    def _softmax(self, scores):
        """Softmax over the keys, with each head's sink logit as an extra key when asked for."""
        if not self.sink_logit:
            return ops.softmax(scores, axis=-1)
        sink = ops.cast(self.sinks, scores.dtype)[None, :, None, None]
        sink = ops.broadcast_to(sink, tuple(ops.shape(scores)[:-1]) + (1,))
        return ops.softmax(ops.concatenate([scores, sink], axis=-1), axis=-1)[..., :-1]

    def _scores_term(self, inputs, queries):
        r"""What a ``"scores"`` method adds to the scores, ``(batch, heads, q, k)``.

        ALiBi's penalty and T5's bucket scalars depend only on the number of
        steps, read from ``inputs``; Shaw's term :math:`q_i \cdot w^K_{ij}`
        needs the projected queries.
        """
        if isinstance(self.positions, ShawRelativePositions):
            return self.positions(queries)  # q_i . w_ij per head, from the projected queries
        return self.positions(inputs)

    def call(self, inputs, position_ids=None):
        """Attend over ``inputs`` ``(batch, steps, depth)``.

        ``position_ids`` ``(batch, steps)``, for rows of packed documents
        (:func:`pe_lib.position_ids.packed_position_ids`): each document's
        positions start again at 0, RoPE and the temperature use them, and a
        query sees only the keys of its own document, which starts wherever a
        position is not the previous one plus one (Hugging Face's
        ``find_packed_sequence_indices``).
        """
        steps = ops.shape(inputs)[1]
        weights = self._softmax(self.scores(inputs, position_ids))
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
            "method_options": self.method_options, "window": self.window, "sink_tokens": self.sink_tokens,
            "sink_logit": self.sink_logit, "temperature": self.temperature,
        })
        return config
