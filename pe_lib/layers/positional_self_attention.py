r"""Causal multi-head self-attention that takes its positions from the registry."""

from __future__ import annotations

import inspect
from typing import NamedTuple

import keras
import numpy as np
from keras import ops

from pe_lib import temperature as temperatures
from pe_lib._checks import require_int, require_positive_float
from pe_lib.layers._masking import concrete, masked_score
from pe_lib.layers.shaw_relative_positions import ShawRelativePositions
from pe_lib.methods import get_method
from pe_lib.rope_scaling import FOLLOW_LENGTH


class _Placement(NamedTuple):
    """Where a block of queries and its keys sit: steps, positions, pads, documents.

    ``past_steps`` keys (a cache) come before the block's own steps; every
    ``(batch, keys)`` field covers them all, the queries being the last
    ``steps`` of them.
    """

    past_steps: object  #: steps held in the cache before this block
    steps: object  #: steps of this block (its queries)
    query_positions: object  #: ``(batch, steps)``, or ``(axes, batch, steps)`` for M-RoPE
    key_positions: object  #: ``(batch, keys)``, or ``(axes, batch, keys)``
    key_mask: object  #: ``(batch, keys)`` int32, 1 for a token, 0 for a pad
    documents: object  #: ``(batch, keys)`` int32, the packed document of each step, or None
    document_starts: object  #: ``(batch, keys)`` int32, the step where each step's document starts, or None
    blocks: object  #: ``(batch, keys)`` int32, the image block of each step (-1 for text)


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

    Options that change the attention itself, as released models do
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
      rotation. Its ``"index"`` says which number of the query it reads:
      ``"position"`` (the default: the position, which restarts in each
      packed document and skips pads) or ``"cache_position"`` (the step in
      the row, pads and earlier documents counted, plus the cached steps:
      ``arange(T) + past_seen_tokens``, as Hugging Face's
      ``Llama4TextAttention`` indexes it). They agree on a row of one
      document without pads;
    - ``chunk_size``: Llama 4's chunked attention (``attention_chunk_size``):
      the steps of a document are cut into chunks of this many, counted from
      its first token, and a query sees the keys of its own chunk only;
    - ``qk_norm``: Llama 4's ``use_qk_norm``: after the rotation, each query
      and key is divided by its root mean square
      (:math:`x / \sqrt{\overline{x^2} + \epsilon}`, ``qk_norm_epsilon``
      :math:`\epsilon`, Hugging Face's ``rms_norm_eps``), no weight; RoPE
      methods only.

    *Padding and packing.* ``attention_mask`` ``(batch, steps)`` marks tokens
    with 1 and pads with 0, on either side of a row: no query sees a pad,
    and a pad's output is 0. Without ``position_ids``, a token's position is
    the number of tokens before it in its row, as Hugging Face's generation
    computes them for left padding (``cumsum(mask) - 1``). ALiBi, T5 and
    Shaw measure the distance from query to key in these positions, so a pad
    between two tokens adds nothing to it, as in transformers' BLOOM, whose
    ALiBi reads ``(cumsum(mask) - 1) * mask``; transformers' T5 counts steps
    instead (pads included), which differs only when a pad sits between two
    tokens, such as a step decoded after a right-padded prompt. ``position_ids``
    give rows of packed documents (see :meth:`call`). ``block_ids``
    ``(batch, steps)`` let the tokens of one image see each other both ways,
    as Gemma 3's do: a query also sees every key of its own block (a number
    0 or more; -1 for text, :func:`pe_lib.position_ids.image_blocks`), the
    window still applying (Hugging Face's ``blockwise_overlay``).

    *Cached decoding.* :meth:`decode` runs a block of new steps against the
    keys and values of the earlier ones and returns the grown cache, a dict
    of tensors (see :meth:`empty_cache`); each step's output equals the same
    row of one pass over the whole sequence. The cache holds keys before
    any rotation, and each call rotates them all with the query's length,
    so that dynamic NTK and LongRoPE's switch at ``original_length`` give
    every key the rates of the current length (Hugging Face's Phi-3
    recomputes its cache at that switch for the same reason). A table of
    positions added before the layer takes each row's next positions from
    :meth:`next_positions`, so a left-padded batch decodes with sinusoidal
    or learned positions too.

    Args:
        heads: number of heads.
        key_dim: size of each head's queries, keys and values; even for RoPE.
        method: a name from :data:`pe_lib.methods.METHODS`, or its entry.
        base: the RoPE base :math:`N` (RoPE family only).
        method_options: more arguments for the method's layer, e.g.
            ``{"scale": 4.0}`` for ``"rope_pi"``, ``{"scale": 4.0,
            "original_length": 16}`` for ``"rope_yarn"``,
            ``{"max_distance": 8}`` for ``"shaw"``,
            ``{"mrope_section": (1, 1, 2)}`` for M-RoPE.
            A scores layer gets ``heads`` from this layer, and T5's buckets are
            causal (``bidirectional=False``) unless said otherwise.
        window: the most keys a query sees (a sliding window), or ``None``.
        sink_tokens: first keys kept visible beside the window.
        sink_logit: whether each head learns a sink logit.
        temperature: ``None`` or ``{"kind": ..., **options}``.
        chunk_size: steps per chunk of chunked attention, or ``None``.
        qk_norm: whether queries and keys are normalised after the rotation.
        qk_norm_epsilon: the :math:`\epsilon` of ``qk_norm``.
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

    Decoding with a cache: a prompt of 5 steps, then one step at a time; each
    step's output is the same row of the pass over all 7 steps:

    >>> rope = PositionalSelfAttention(heads=2, key_dim=4, method="rope")
    >>> x = np.random.default_rng(0).normal(size=(1, 7, 8)).astype("float32")
    >>> full = keras.ops.convert_to_numpy(rope(x))
    >>> out, cache = rope.decode(x[:, :5])
    >>> for step in (5, 6):
    ...     out, cache = rope.decode(x[:, step:step + 1], cache)
    ...     print(step, bool(np.allclose(out, full[:, step:step + 1], atol=1e-5)))
    5 True
    6 True
    >>> tuple(cache["keys"].shape)  # (batch, heads, steps so far, key_dim)
    (1, 2, 7, 4)
    """

    def __init__(self, heads: int, key_dim: int, method: str = "none", base: float = 10000.0,
                 method_options: dict | None = None, *, window: int | None = None, sink_tokens: int = 0,
                 sink_logit: bool = False, temperature: dict | None = None, chunk_size: int | None = None,
                 qk_norm: bool = False, qk_norm_epsilon: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        self.window = None if window is None else require_int("window", window, minimum=1)
        self.sink_tokens = require_int("sink_tokens", sink_tokens, minimum=0)
        if self.sink_tokens and self.window is None:
            raise ValueError(f"sink_tokens={sink_tokens} needs a window (without one every key is visible)")
        if not isinstance(sink_logit, bool):
            raise TypeError(f"sink_logit must be True or False, got {sink_logit!r}")
        self.sink_logit = sink_logit
        self.chunk_size = None if chunk_size is None else require_int("chunk_size", chunk_size, minimum=1)
        if not isinstance(qk_norm, bool):
            raise TypeError(f"qk_norm must be True or False, got {qk_norm!r}")
        self.qk_norm = qk_norm
        self.qk_norm_epsilon = require_positive_float("qk_norm_epsilon", qk_norm_epsilon)
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
        if qk_norm and self.acts_on != "queries and keys":
            raise ValueError(f"qk_norm=True is for RoPE methods (Llama 4 normalises in its RoPE layers only), "
                             f"got method={self.method!r}")
        self.positions = None
        #: How many positions each step has, 1 or the number of M-RoPE's sections.
        self.position_axes = 1
        if entry.acts_on == "queries and keys":
            if self.key_dim % 2:
                raise ValueError(f"key_dim must be even for RoPE (it rotates features in pairs), got {key_dim}")
            self.positions = entry.layer(method=self.method, base=self.base, sequence_axis=2,
                                         name="positions", dtype=self.dtype_policy, **self.method_options)
            if self.positions.mrope_section is not None:
                self.position_axes = len(self.positions.mrope_section)
        elif entry.acts_on == "scores":
            options = dict(self.method_options)
            if "heads" in inspect.signature(entry.layer).parameters:
                options["heads"] = self.heads
            if "bidirectional" in inspect.signature(entry.layer).parameters:
                options.setdefault("bidirectional", False)
            self.positions = entry.layer(name="positions", dtype=self.dtype_policy, **options)
        if self.temperature is not None and self.temperature["index"] == "position" and self.position_axes > 1:
            raise ValueError("a temperature indexed by 'position' needs one position per step; with "
                             f"mrope_section give the temperature index='cache_position', got {temperature!r}")

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

    def _split_heads(self, x):
        x = ops.reshape(x, (ops.shape(x)[0], ops.shape(x)[1], self.heads, self.key_dim))
        return ops.transpose(x, (0, 2, 1, 3))  # (batch, heads, steps, key_dim)

    def scores(self, inputs, position_ids=None, attention_mask=None,
               cache=None, block_ids=None):
        """The ``(batch, heads, steps, keys)`` scores before the softmax.

        A method acts in one of two places: RoPE rotates each head's
        queries and keys; a ``"scores"`` method (ALiBi, T5, Shaw) adds its
        term to every score. ``_mask`` then hides the keys that a query
        may not see. A ``cache`` (:meth:`decode`) puts earlier keys first.
        """
        where = self._place(inputs, position_ids, attention_mask, cache, block_ids)
        return self._scores(inputs, where, cache)

    def _scores(self, inputs, where, cache):
        """:meth:`scores` for a block placed by :meth:`_place`."""
        queries = self._split_heads(self.query(inputs))
        keys = self._with_cache(self._split_heads(self.key(inputs)), cache, "keys")
        if self.acts_on == "queries and keys":  # RoPE
            queries = self._rotate(queries, where.query_positions, where)
            keys = self._rotate(keys, where.key_positions, where)
        if self.qk_norm:  # Llama 4: both normalised after the rotation
            queries, keys = self._normalize(queries), self._normalize(keys)
        if self.temperature is not None:
            queries = self._apply_temperature(queries, where)
        keys_t = ops.transpose(keys, (0, 1, 3, 2))
        scores = ops.matmul(queries, keys_t) / float(np.sqrt(self.key_dim))
        if self.acts_on == "scores":  # ALiBi, T5, Shaw
            term = self._scores_term(inputs, queries, keys, where)
            scores = scores + ops.cast(term, scores.dtype)
        return self._mask(scores, where)

    # --- where the steps are -----------------------------------------------------------

    def _with_cache(self, tensor, cache, name):
        """``tensor`` ``(batch, heads, steps, key_dim)`` after the cached ones of ``name``."""
        if cache is None:
            return tensor
        return ops.concatenate([ops.cast(cache[name], tensor.dtype), tensor], axis=2)

    def _place(self, inputs, position_ids, attention_mask, cache, block_ids=None) -> _Placement:
        """The positions, pads and documents of the block and of the keys before it."""
        batch, steps = ops.shape(inputs)[0], ops.shape(inputs)[1]
        if attention_mask is None:
            mask = ops.ones((batch, steps), dtype="int32")
        else:
            mask = ops.convert_to_tensor(attention_mask)
            if tuple(mask.shape) != tuple(inputs.shape[:2]) and None not in tuple(inputs.shape[:2]):
                raise ValueError(f"{self.name}: attention_mask must have shape (batch, steps) = "
                                 f"{tuple(inputs.shape[:2])}, got shape {tuple(mask.shape)}")
            values = concrete(mask)
            if values is not None and not np.isin(values, (0, 1)).all():
                wrong = values[~np.isin(values, (0, 1))].ravel()[0].item()
                raise ValueError(f"{self.name}: attention_mask must hold 1 (token) and 0 (pad) only, "
                                 f"got {wrong!r} in {values.tolist()!r}")
            mask = ops.cast(mask, "int32")
        past_steps = 0 if cache is None else ops.shape(cache["mask"])[1]
        if position_ids is None:
            counted = ops.cumsum(mask, axis=-1) - 1  # the tokens before each one
            if cache is not None:  # going on from the cache's last token
                counted = counted + self._next_position(cache)[:, None]
            positions = ops.where(mask == 1, counted, 0)
            if self.position_axes > 1:
                positions = ops.broadcast_to(positions[None], (self.position_axes, batch, steps))
        else:
            positions = self._given_positions(position_ids, batch, steps)
        key_mask, key_positions = mask, positions
        if cache is not None:
            key_mask = ops.concatenate([ops.cast(cache["mask"], "int32"), mask], axis=-1)
            key_positions = ops.concatenate([ops.cast(cache["positions"], "int32"), positions], axis=-1)
        documents = starts = None
        if self.position_axes == 1:
            documents, starts = _documents(key_positions, key_mask)
        blocks = -ops.ones((batch, steps), "int32") if block_ids is None else ops.cast(block_ids, "int32")
        if cache is not None:
            blocks = ops.concatenate([ops.cast(cache["blocks"], "int32"), blocks], axis=-1)
        return _Placement(past_steps, steps, positions, key_positions, key_mask, documents, starts, blocks)

    def _check_cache(self, cache, batch=None) -> None:
        """Refuse a ``cache`` that is not this layer's: other names, or shapes of other heads or rows.

        >>> layer = PositionalSelfAttention(heads=2, key_dim=4, name="attention")
        >>> other = PositionalSelfAttention(heads=1, key_dim=4).empty_cache(3)
        >>> layer.decode(np.zeros((3, 1, 8), "float32"), other)
        Traceback (most recent call last):
        ...
        ValueError: attention: cache['keys'] must have shape (batch, heads, steps, key_dim) = (3, 2, 0, 4), got shape (3, 1, 0, 4)
        """
        names = ("keys", "values", "positions", "mask", "blocks")
        if not isinstance(cache, dict) or sorted(cache) != sorted(names):
            got = sorted(cache) if isinstance(cache, dict) else type(cache).__name__
            raise ValueError(f"{self.name}: cache must be a dict of {list(names)} from empty_cache or decode, "
                             f"got {got}")
        steps = tuple(cache["mask"].shape) + (None, None)  # the steps held, and the rows when not given
        batch, past = steps[0] if batch is None else batch, steps[1]
        rows = "(batch, steps)" if self.position_axes == 1 else f"({self.position_axes}, batch, steps)"
        wanted = {"keys": ("(batch, heads, steps, key_dim)", (batch, self.heads, past, self.key_dim)),
                  "values": ("(batch, heads, steps, key_dim)", (batch, self.heads, past, self.key_dim)),
                  "positions": (rows, (batch, past) if self.position_axes == 1 else (self.position_axes, batch, past)),
                  "mask": ("(batch, steps)", (batch, past)), "blocks": ("(batch, steps)", (batch, past))}
        for name, (axes, shape) in wanted.items():
            got = tuple(cache[name].shape)
            known = [(a, b) for a, b in zip(got, shape) if isinstance(a, int) and isinstance(b, int)]
            if len(got) != len(shape) or any(a != b for a, b in known):
                raise ValueError(f"{self.name}: cache[{name!r}] must have shape {axes} = {shape}, got shape {got}")

    def _given_positions(self, position_ids, batch, steps):
        given = ops.convert_to_tensor(position_ids)
        dtype = keras.backend.standardize_dtype(given.dtype)
        if "int" not in dtype:  # a float position would be cut to an integer, silently
            raise ValueError(f"{self.name}: position_ids must be integers, got dtype {dtype}")
        positions = ops.cast(given, "int32")
        wanted = (batch, steps) if self.position_axes == 1 else (self.position_axes, batch, steps)
        if len(positions.shape) == len(wanted) - 1:  # one row of positions for the whole batch
            positions = ops.broadcast_to(ops.expand_dims(positions, -2), wanted)
        if len(positions.shape) != len(wanted):
            names = "(batch, steps)" if self.position_axes == 1 else f"({self.position_axes}, batch, steps)"
            raise ValueError(f"{self.name}: position_ids must have shape {names}, got shape "
                             f"{tuple(positions.shape)}")
        return positions

    def next_positions(self, cache, steps: int = 1):
        """``(batch, steps)``: the positions :meth:`decode` gives the next ``steps`` of each row.

        Each row goes on from its last token (its own count of tokens, pads
        not counted), so a table of positions added before the layer
        (:class:`~pe_lib.layers.PositionalEncoding`,
        :class:`~pe_lib.layers.LearnedPositionEmbedding`) can give each row of a
        left-padded batch its own rows.

        >>> layer = PositionalSelfAttention(heads=1, key_dim=2)
        >>> _, cache = layer.decode(np.zeros((2, 4, 2), "float32"),
        ...                         attention_mask=np.array([[1, 1, 1, 1], [0, 0, 1, 1]]))
        >>> keras.ops.convert_to_numpy(layer.next_positions(cache, steps=2)).tolist()
        [[4, 5], [2, 3]]
        """
        steps = require_int("steps", steps, minimum=1)
        self._check_cache(cache)
        return self._next_position(cache)[:, None] + ops.arange(steps, dtype="int32")[None]

    def _next_position(self, cache):
        """``(batch,)``: the position after the last token of each row of ``cache`` (0 if it has none).

        One axis: the last token's position plus one. M-RoPE: the largest
        position of any axis plus one, Hugging Face's ``cache_position +
        rope_deltas`` for the text after an image.
        """
        positions = ops.cast(cache["positions"], "int32")
        if self.position_axes > 1:
            seen = ops.where(ops.cast(cache["mask"], "int32")[None] == 1, positions, -1)
            seen = ops.pad(seen, ((0, 0), (0, 0), (1, 0)), constant_values=-1)  # -1: a row of no token
            return ops.max(seen, axis=(0, 2)) + 1
        # a first step of -1 for the pad of -1 (the max of a row of none)
        mask = ops.pad(ops.cast(cache["mask"], "int32"), ((0, 0), (1, 0)))
        positions = ops.pad(positions, ((0, 0), (1, 0)), constant_values=-1)
        steps = ops.arange(ops.shape(mask)[1], dtype="int32")
        last = ops.max(ops.where(mask == 1, steps[None], 0), axis=-1)  # 0: no token
        return ops.take_along_axis(positions, last[:, None], axis=-1)[:, 0] + 1

    # --- what the method and the options do ----------------------------------------------

    def _rotate(self, x, positions, where):
        """RoPE on ``x`` ``(batch, heads, steps, key_dim)`` at ``positions``, at the length of all keys."""
        if self.method in FOLLOW_LENGTH:
            length = ops.max(ops.where(where.key_mask == 1, where.key_positions, 0)) + 1
            return self.positions(x, positions=positions, length=length)
        return self.positions(x, positions=positions)

    def _normalize(self, x):
        """``x`` divided by its root mean square over the features (Llama 4's ``Llama4TextL2Norm``)."""
        exact = "float64" if self.compute_dtype == "float64" else "float32"
        values = ops.cast(x, exact)
        mean_square = ops.mean(ops.square(values), axis=-1, keepdims=True)
        return ops.cast(values * ops.rsqrt(mean_square + self.qk_norm_epsilon), x.dtype)

    def _apply_temperature(self, queries, where):
        """Each query times its temperature factor (after any rotation)."""
        factor = self._query_temperature(where)  # (batch, steps)
        return queries * ops.cast(factor, queries.dtype)[:, None, :, None]

    def _query_temperature(self, where):
        """The factor of each query, ``(batch, steps)``, in float32 (float64 under a float64 policy)."""
        exact = "float64" if self.compute_dtype == "float64" else "float32"
        options = self.temperature
        if options["index"] == "cache_position":
            steps = ops.arange(where.steps, dtype="int32") + where.past_steps
            positions = ops.broadcast_to(steps[None], (ops.shape(where.key_mask)[0], where.steps))
        else:
            positions = where.query_positions
        if options["kind"] == "llama4":
            floors = ops.floor_divide(positions + 1, options["floor_scale"])  # exact, in integers
            return 1.0 + options["attn_scale"] * ops.log1p(ops.cast(floors, exact))
        if options["kind"] == "log_length":
            trained = options["trained_length"]
            count = ops.cast(positions + 1, exact)
            return ops.where(positions + 1 > trained, ops.log(count) / float(np.log(trained)),
                             ops.ones_like(count))
        return ops.full(ops.shape(positions), options["factor"], dtype=exact)

    def _mask(self, scores, where):
        """The scores, with those of keys a query may not see replaced.

        Hidden: keys after the query, keys outside the ``window`` (but for
        the first ``sink_tokens``), pads, keys of another packed document
        and, with ``chunk_size``, of another chunk. They hold a large
        negative score that the compute dtype can represent: -1e9, or
        -32752 in float16, whose range ends at 65504.
        """
        keys = ops.shape(where.key_mask)[1]
        key_steps = ops.arange(keys, dtype="int32")
        query_steps = key_steps[keys - where.steps:]
        behind = query_steps[:, None] - key_steps[None, :]  # i - j, in steps
        query_blocks = where.blocks[:, keys - where.steps:, None]
        same_block = ops.logical_and(query_blocks >= 0, ops.equal(query_blocks, where.blocks[:, None, :]))
        visible = ops.logical_or((behind >= 0)[None], same_block)  # (batch, q, k)
        if self.window is not None:
            visible = ops.logical_and(visible, ops.logical_or(
                behind < self.window, key_steps[None, :] < self.sink_tokens)[None])  # later keys: a block's
        visible = ops.logical_and(visible, (where.key_mask == 1)[:, None, :])
        if where.documents is not None:  # packed documents: a key of another document is never seen
            query_documents = where.documents[:, keys - where.steps:]
            same = ops.equal(query_documents[:, :, None], where.documents[:, None, :])
            visible = ops.logical_and(visible, same)
        if self.chunk_size is not None:
            chunks = ops.floor_divide(key_steps[None] - where.document_starts, self.chunk_size)
            same = ops.equal(chunks[:, keys - where.steps:, None], chunks[:, None, :])
            visible = ops.logical_and(visible, same)
        visible = visible[:, None]  # (batch, 1, q, k)
        return ops.where(visible, scores, ops.full_like(scores, masked_score(scores.dtype)))

    def _softmax(self, scores):
        """Softmax over the keys, with each head's sink logit as an extra key when asked for."""
        if not self.sink_logit:
            return ops.softmax(scores, axis=-1)
        sink = ops.cast(self.sinks, scores.dtype)[None, :, None, None]
        sink = ops.broadcast_to(sink, tuple(ops.shape(scores)[:-1]) + (1,))
        return ops.softmax(ops.concatenate([scores, sink], axis=-1), axis=-1)[..., :-1]

    def _scores_term(self, inputs, queries, keys, where):
        r"""What a ``"scores"`` method adds to the scores, ``(batch, heads, q, k)``.

        ALiBi's penalty and T5's bucket scalars depend only on the positions
        of queries and keys, each row's own (a pad is not a step); Shaw's
        term :math:`q_i \cdot w^K_{ij}` needs the projected queries.
        """
        placed = {"query_positions": where.query_positions, "key_positions": where.key_positions}
        if isinstance(self.positions, ShawRelativePositions):
            return self.positions(queries, keys, **placed)  # q_i . w_ij per head, from the projected queries
        return self.positions(inputs, keys[:, 0], **placed)

    # --- the layer ---------------------------------------------------------------------

    def call(self, inputs, position_ids=None, attention_mask=None, cache=None, block_ids=None):
        """Attend over ``inputs`` ``(batch, steps, depth)``.

        ``position_ids`` ``(batch, steps)``, for rows of packed documents
        (:func:`pe_lib.position_ids.packed_position_ids`): each document's
        positions start again at 0, RoPE and the temperature use them, and a
        query sees only the keys of its own document, which starts wherever a
        token's position is not the previous token's plus one (Hugging Face's
        ``find_packed_sequence_indices``; pads are skipped, never a document).
        With M-RoPE (``mrope_section``) they are ``(axes, batch, steps)``,
        e.g. from :func:`pe_lib.position_ids.mrope_position_ids`.

        ``attention_mask`` ``(batch, steps)``: 1 for a token, 0 for a pad.
        ``block_ids`` ``(batch, steps)``: image blocks seen both ways (-1: text).

        With a ``cache`` (:meth:`decode`) the call returns ``(outputs, cache)``.
        """
        where = self._place(inputs, position_ids, attention_mask, cache, block_ids)
        weights = self._softmax(self._scores(inputs, where, cache))
        if attention_mask is not None:  # a pad attends to nothing: its output is 0
            weights = weights * ops.cast(attention_mask, weights.dtype)[:, None, :, None]
        values = self._with_cache(self._split_heads(self.value(inputs)), cache, "values")
        mixed = ops.matmul(weights, ops.cast(values, weights.dtype))
        if hasattr(self.positions, "value_term"):  # Shaw's value vectors
            mixed = mixed + self.positions.value_term(weights, query_positions=where.query_positions,
                                                      key_positions=where.key_positions)
        mixed = ops.reshape(ops.transpose(mixed, (0, 2, 1, 3)), (ops.shape(inputs)[0], ops.shape(inputs)[1], -1))
        outputs = self.output_projection(mixed)
        if cache is None:
            return outputs
        return outputs, self._grown_cache(inputs, position_ids, attention_mask, cache, block_ids)

    def _grown_cache(self, inputs, position_ids, attention_mask, cache, block_ids) -> dict:
        where = self._place(inputs, position_ids, attention_mask, cache, block_ids)
        return {
            "keys": self._with_cache(self._split_heads(self.key(inputs)), cache, "keys"),
            "values": self._with_cache(self._split_heads(self.value(inputs)), cache, "values"),
            "positions": where.key_positions,
            "mask": where.key_mask,
            "blocks": where.blocks,
        }

    def empty_cache(self, batch: int) -> dict:
        """A cache of no steps for ``batch`` rows: what :meth:`decode` starts from.

        ``"keys"`` and ``"values"`` ``(batch, heads, steps, key_dim)`` (keys
        before any rotation) in the compute dtype, ``"positions"`` ``(batch,
        steps)`` (``(axes, batch, steps)`` for M-RoPE), ``"mask"`` and
        ``"blocks"`` ``(batch, steps)``, in int32.

        >>> cache = PositionalSelfAttention(heads=2, key_dim=4).empty_cache(3)
        >>> {name: tuple(value.shape) for name, value in cache.items()}
        {'keys': (3, 2, 0, 4), 'values': (3, 2, 0, 4), 'positions': (3, 0), 'mask': (3, 0), 'blocks': (3, 0)}
        """
        batch = require_int("batch", batch, minimum=1)
        positions = (batch, 0) if self.position_axes == 1 else (self.position_axes, batch, 0)
        return {"keys": ops.zeros((batch, self.heads, 0, self.key_dim), self.compute_dtype),
                "values": ops.zeros((batch, self.heads, 0, self.key_dim), self.compute_dtype),
                "positions": ops.zeros(positions, "int32"), "mask": ops.zeros((batch, 0), "int32"),
                "blocks": ops.zeros((batch, 0), "int32")}

    def decode(self, inputs, cache=None, *, position_ids=None, attention_mask=None, block_ids=None):
        """Attend from new steps ``inputs`` ``(batch, steps, depth)`` to them and to the ``cache``.

        Returns ``(outputs, cache)``: the outputs of the new steps, and the
        cache grown by them. Start with ``cache=None`` (the prompt, padded
        with ``attention_mask`` as :meth:`call` takes it), then give each call
        the cache the last one returned. Positions continue from the last
        token's (one past the largest of any axis for M-RoPE) unless
        ``position_ids`` are given; the temperature's ``"cache_position"``
        counts the cached steps.
        """
        if cache is None:
            cache = self.empty_cache(int(ops.shape(inputs)[0]))
        self._check_cache(cache, ops.shape(inputs)[0])
        return self(inputs, position_ids=position_ids, attention_mask=attention_mask, cache=cache,
                    block_ids=block_ids)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "heads": self.heads, "key_dim": self.key_dim, "method": self.method, "base": self.base,
            "method_options": self.method_options, "window": self.window, "sink_tokens": self.sink_tokens,
            "sink_logit": self.sink_logit, "temperature": self.temperature, "chunk_size": self.chunk_size,
            "qk_norm": self.qk_norm, "qk_norm_epsilon": self.qk_norm_epsilon,
        })
        return config


def _documents(positions, mask):
    """The packed document of each step and the step where it starts, both ``(batch, steps)`` int32.

    A token starts a document if it is its row's first token or its position
    is not the previous token's plus one; pads start none and belong to the
    document before them (0 before the first token).
    """
    steps = ops.shape(mask)[1]
    where = ops.arange(steps, dtype="int32")[None]
    count = ops.cumsum(mask, axis=-1)  # tokens up to each step
    # the steps of the tokens, in order, then the pads
    order = ops.cast(ops.argsort(ops.where(mask == 1, where, steps + where), axis=-1), "int32")
    token_positions = ops.take_along_axis(positions, order, axis=-1)
    # the position of the token before; the first token's is its own, so that it starts a document
    previous = ops.take_along_axis(token_positions, ops.maximum(count - 2, 0), axis=-1)
    starts = ops.logical_and(mask == 1, ops.not_equal(positions, previous + 1))
    starts = ops.cast(starts, "int32")
    documents = ops.cumsum(starts, axis=-1)
    start_order = ops.cast(ops.argsort(ops.where(starts == 1, where, steps + where), axis=-1), "int32")
    start_steps = ops.take_along_axis(start_order, ops.maximum(documents - 1, 0), axis=-1)
    return documents, start_steps
