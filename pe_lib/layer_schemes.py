r"""Per-layer schemes: a model's list of position methods, one per attention layer.

Many released models do not use one position method throughout. Gemma 3
alternates five *local* layers (a sliding window of 1,024 keys, RoPE with base
:math:`10^4`) with one *global* layer (every key, base :math:`10^6` and a
linear factor of 8); Llama 4 leaves every fourth layer without positions
(NoPE) and scales those layers' queries by a temperature that grows with the
position. A scheme here is a tuple of :class:`LayerPositions`, one per layer,
each naming a method of the registry (:mod:`pe_lib.methods`) with its options
and the attention options that go with it: a sliding ``window``, attention
sinks (:mod:`pe_lib.sinks`) and a query ``temperature``
(:mod:`pe_lib.temperature`).

Names in the peers (Hugging Face transformers): Gemma 3's ``layer_types``
(``"sliding_attention"``, ``"full_attention"``, formerly
``sliding_window_pattern``), ``rope_local_base_freq`` and the per-layer-type
rope parameters of transformers 5; Llama 4's ``no_rope_layers`` (1 for a RoPE
layer, 0 for NoPE) from ``no_rope_layer_interval``, and
``attn_temperature_tuning`` with ``floor_scale`` and ``attn_scale``; gpt-oss's
``layer_types`` with ``sliding_window``. keras-hub builds Gemma 3 with a
``sliding_window_size`` and a ``local_rope_scaling_factor``/
``global_rope_scaling_factor`` pair. Llama 4's RoPE layers also attend within
chunks of 8,192 tokens (``attention_chunk_size``, here ``chunk_size``) and
normalise their rotated queries and keys (``use_qk_norm``, here ``qk_norm``).
:mod:`pe_lib.model_config` reads all of these from a configuration.

>>> scheme = gemma3_scheme(12)
>>> [layer.window for layer in scheme[:6]]
[1024, 1024, 1024, 1024, 1024, None]
>>> [layer.method for layer in llama4_scheme(8)]
['rope_llama3', 'rope_llama3', 'rope_llama3', 'none', 'rope_llama3', 'rope_llama3', 'rope_llama3', 'none']

A :class:`LayerScheme` names a pattern that fits a model of any depth, so
that an experiment can train it beside the registry's methods; the named
ones are in :data:`SCHEMES`, and :func:`resolve_positions` turns a name into
a registry entry or a scheme, once, at a model's entry point:

>>> [layer.method for layer in resolve_positions("rope_nope").layers(6)]
['rope', 'rope', 'rope', 'none', 'rope', 'rope']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from pe_lib import rope_scaling, sinks, temperature
from pe_lib._checks import require_int
from pe_lib.methods import METHODS, PositionMethod, get_method
from pe_lib.rope import rotary_depth

#: The options of a RoPE method that are not options of its rates.
_ROTARY_OPTIONS = ("base", "layout", "scale", "original_length", "rotary_fraction", "max_length", "mrope_section")


@dataclasses.dataclass(frozen=True)
class LayerPositions:
    """The positions of one attention layer.

    Attributes:
        method: a registry name (:data:`pe_lib.methods.METHODS`), ``"none"``
            for a NoPE layer.
        options: the method's options, as :class:`pe_lib.layers.RotaryEmbedding`
            (or the method's layer) takes them: ``base``, ``scale``,
            ``original_length``, ``rotary_fraction``, ``layout`` and the
            rates' own options.
        window: a sliding window of keys (:func:`pe_lib.sinks.window_mask`),
            or ``None`` for every earlier key.
        sink_tokens: first keys kept visible beside the window (StreamingLLM).
        sink_logit: whether each head has a learned sink logit (gpt-oss).
        temperature: ``None``, or a temperature of :mod:`pe_lib.temperature`
            as ``{"kind": ..., **options}``.
        chunk_size: ``None``, or attention within chunks of this many
            tokens (Llama 4's ``attention_chunk_size``); RoPE layers only.
        qk_norm: whether queries and keys are L2-normalised after RoPE
            (Llama 4's ``use_qk_norm``); RoPE layers only.
    """

    method: str
    options: Mapping = dataclasses.field(default_factory=dict)
    window: int | None = None
    sink_tokens: int = 0
    sink_logit: bool = False
    temperature: Mapping | None = None
    chunk_size: int | None = None
    qk_norm: bool = False

    def __post_init__(self):
        get_method(self.method)
        if self.chunk_size is not None:
            require_int("chunk_size", self.chunk_size, minimum=1)
        if not isinstance(self.qk_norm, bool):
            raise TypeError(f"qk_norm must be True or False, got {self.qk_norm!r}")
        if (self.chunk_size is not None or self.qk_norm) and not self.uses_rope:
            raise ValueError(f"chunk_size and qk_norm are options of RoPE layers (Llama 4), got "
                             f"chunk_size={self.chunk_size!r}, qk_norm={self.qk_norm!r} for {self.method!r}")
        object.__setattr__(self, "options", dict(self.options))
        sinks.window_mask([0], [0], window=self.window, sink_tokens=self.sink_tokens)  # checks both
        if not isinstance(self.sink_logit, bool):
            raise TypeError(f"sink_logit must be True or False, got {self.sink_logit!r}")
        if self.temperature is not None:
            given = dict(self.temperature)
            if "kind" not in given:
                raise ValueError(f"temperature must name its kind, got {self.temperature!r}")
            temperature.temperature_options(given.pop("kind"), given)
            object.__setattr__(self, "temperature", dict(self.temperature))

    @property
    def uses_rope(self) -> bool:
        """Whether the layer rotates its queries and keys."""
        return get_method(self.method).acts_on == "queries and keys"

    def rates(self, depth: int, *, length: int | None = None) -> np.ndarray | None:
        """The float64 angle rates of a head of ``depth`` features, or ``None`` for a layer without RoPE.

        ``length`` is the current length, for the methods whose rates follow it
        (``"rope_dynamic"``, ``"rope_longrope"``).

        >>> round(float(gemma3_scheme(6)[5].rates(128)[1] / (1e6 ** (-2 / 128) / 8)), 12)
        1.0
        """
        if not self.uses_rope:
            return None
        options = dict(self.options)
        rotated = rotary_depth(depth, options.pop("rotary_fraction", 1.0))
        max_length = options.pop("max_length", None)
        if max_length is not None and "scale" not in options:
            options["scale"] = rope_scaling.scale_from_lengths(max_length, options["original_length"])
        rate_options, _ = rope_scaling.split_options(
            self.method, {name: value for name, value in options.items() if name not in _ROTARY_OPTIONS})
        keep = {name: options[name] for name in ("base", "scale", "original_length") if name in options}
        if self.method in rope_scaling.FOLLOW_LENGTH:
            keep["length"] = length if length is not None else options.get("original_length")
        return rope_scaling.scaled_rates(self.method, rotated, **keep, **rate_options)

    @property
    def attention_factor(self) -> float:
        """What multiplies each rotated query and key (YaRN's and LongRoPE's factor; 1 elsewhere).

        LongRoPE without a ``scale`` takes it as ``max_length / original_length``,
        as Hugging Face does from ``max_position_embeddings``:

        >>> layer = LayerPositions("rope_longrope", {"original_length": 4096, "max_length": 131072})
        >>> round(layer.attention_factor, 6)
        1.190238
        """
        if not self.uses_rope or self.method == "rope":
            return 1.0
        options = dict(self.options)
        scale = options.get("scale")
        if options.get("max_length") is not None and scale is None:
            scale = rope_scaling.scale_from_lengths(options["max_length"], options["original_length"])
        factor_options = {name: options[name] for name in rope_scaling.FACTOR_OPTIONS.get(self.method, ())
                          if name in options}
        return rope_scaling.attention_factor(self.method, 1.0 if scale is None else scale,
                                             original_length=options.get("original_length")
                                             if self.method == "rope_longrope" else None, **factor_options)

    def attention_options(self) -> dict:
        """Keyword arguments for :class:`pe_lib.layers.PositionalSelfAttention` (besides heads and key_dim).

        ``chunk_size`` and ``qk_norm`` are passed only when set (a chunk, or the norm on).
        """
        options = dict(self.options)
        base = options.pop("base", 10000.0)
        attention = {"method": self.method, "base": base, "method_options": options, "window": self.window,
                     "sink_tokens": self.sink_tokens, "sink_logit": self.sink_logit,
                     "temperature": None if self.temperature is None else dict(self.temperature)}
        if self.chunk_size is not None:
            attention["chunk_size"] = self.chunk_size
        if self.qk_norm:
            attention["qk_norm"] = True
        return attention


def repeat_pattern(pattern: Sequence[LayerPositions], num_layers: int) -> tuple[LayerPositions, ...]:
    """``pattern`` repeated over ``num_layers`` layers (the last repeat cut short).

    >>> [layer.method for layer in repeat_pattern([LayerPositions("rope"), LayerPositions("none")], 3)]
    ['rope', 'none', 'rope']
    """
    num_layers = require_int("num_layers", num_layers, minimum=1)
    pattern = tuple(pattern)
    if not pattern or not all(isinstance(layer, LayerPositions) for layer in pattern):
        raise TypeError(f"pattern must be a non-empty sequence of LayerPositions, got {pattern!r}")
    return tuple(pattern[index % len(pattern)] for index in range(num_layers))


def gemma3_scheme(num_layers: int, *, sliding_window: int = 1024, sliding_window_pattern: int = 6,
                  rope_local_base_freq: float = 10000.0, rope_theta: float = 1_000_000.0,
                  factor: float | None = 8.0) -> tuple[LayerPositions, ...]:
    """Gemma 3: every ``sliding_window_pattern``-th layer global, the others local.

    Layer ``i`` is global when ``(i + 1) % sliding_window_pattern == 0``, as
    Hugging Face's ``layer_types``. Local layers: plain RoPE with base
    ``rope_local_base_freq`` in a window of ``sliding_window`` keys. Global
    layers: base ``rope_theta`` with position interpolation by ``factor``
    (``rope_type="linear"``; Gemma 3 1B has none, ``factor=None``).

    >>> [layer.options["base"] for layer in gemma3_scheme(6)]
    [10000.0, 10000.0, 10000.0, 10000.0, 10000.0, 1000000.0]
    """
    pattern_length = require_int("sliding_window_pattern", sliding_window_pattern, minimum=1)
    local = LayerPositions("rope", {"base": float(rope_local_base_freq)}, window=sliding_window)
    if factor is None:
        global_layer = LayerPositions("rope", {"base": float(rope_theta)})
    else:
        global_layer = LayerPositions("rope_pi", {"base": float(rope_theta), "scale": float(factor)})
    return repeat_pattern([local] * (pattern_length - 1) + [global_layer], num_layers)


def llama4_scheme(num_layers: int, *, no_rope_layer_interval: int = 4, rope_theta: float = 500000.0,
                  factor: float = 16.0, low_freq_factor: float = 1.0, high_freq_factor: float = 1.0,
                  original_max_position_embeddings: int = 8192, attn_temperature_tuning: bool = True,
                  floor_scale: int = 8192, attn_scale: float = 0.1) -> tuple[LayerPositions, ...]:
    """Llama 4: RoPE (Llama 3 scaling, interleaved pairs) with every ``no_rope_layer_interval``-th layer NoPE.

    Layer ``i`` has no positions when ``(i + 1) % no_rope_layer_interval == 0``,
    as Hugging Face's default ``no_rope_layers``; with
    ``attn_temperature_tuning`` its queries get the ``"llama4"`` temperature.
    The defaults are Llama 4 Scout's.

    >>> llama4_scheme(4)[3].temperature
    {'kind': 'llama4', 'floor_scale': 8192, 'attn_scale': 0.1}
    """
    interval = require_int("no_rope_layer_interval", no_rope_layer_interval, minimum=1)
    rope = LayerPositions("rope_llama3", {
        "base": float(rope_theta), "scale": float(factor), "original_length": original_max_position_embeddings,
        "low_freq_factor": float(low_freq_factor), "high_freq_factor": float(high_freq_factor),
        "layout": "interleaved"})
    heat = {"kind": "llama4", "floor_scale": floor_scale, "attn_scale": attn_scale} if attn_temperature_tuning else None
    nope = LayerPositions("none", temperature=heat)
    return repeat_pattern([rope] * (interval - 1) + [nope], num_layers)


@dataclasses.dataclass(frozen=True)
class LayerScheme:
    """A named per-layer scheme: a pattern of layers repeated through a model of any depth.

    Attributes:
        name: its key in :data:`SCHEMES`; never a method name of the registry.
        summary: one line saying what it does.
        pattern: the :class:`LayerPositions` of the first layers, repeated
            (:func:`repeat_pattern`); each acts in the attention (on queries
            and keys, on the scores, or not at all), never on the input.
    """

    name: str
    summary: str
    pattern: tuple[LayerPositions, ...]

    def __post_init__(self):
        if not isinstance(self.name, str) or self.name in METHODS:
            raise ValueError(f"name must be a string that names no registry method, got {self.name!r}")
        pattern = repeat_pattern(self.pattern, len(tuple(self.pattern)) or 1)
        for layer in pattern:
            if get_method(layer.method).acts_on == "input":
                raise ValueError(f"a layer's method must act in the attention, got {layer.method!r} "
                                 "(an input method is added once, before the first layer)")
        object.__setattr__(self, "pattern", pattern)

    @property
    def extrapolates(self) -> bool:
        """Whether every layer's method gives positions past the training length."""
        return all(get_method(layer.method).extrapolates for layer in self.pattern)

    def layers(self, num_layers: int) -> tuple[LayerPositions, ...]:
        """The positions of each of ``num_layers`` layers.

        >>> [layer.uses_rope for layer in SCHEMES["rope_nope"].layers(4)]
        [True, True, True, False]
        """
        return repeat_pattern(self.pattern, num_layers)


#: The named per-layer schemes, by name.
SCHEMES: dict[str, LayerScheme] = {scheme.name: scheme for scheme in (
    LayerScheme("rope_nope", "RoPE in three layers of four, no positions in the fourth (Llama 4's pattern)",
                (LayerPositions("rope"),) * 3 + (LayerPositions("none"),)),
)}


def resolve_positions(method: str | PositionMethod | LayerScheme) -> PositionMethod | LayerScheme:
    """The registry entry or the :class:`LayerScheme` that ``method`` names.

    A model's public function calls this once on what the user passed, a
    name, an entry or a scheme, and hands the result inward.

    >>> resolve_positions("alibi").acts_on, resolve_positions("rope_nope").extrapolates
    ('scores', True)
    >>> resolve_positions("nope")
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'sinusoidal', 'learned', 'rope', 'rope_pi', 'rope_ntk', 'rope_dynamic', 'rope_yarn', 'rope_yarn_paper', 'rope_llama3', 'rope_longrope', 'alibi', 't5', 'shaw', 'none' (registry methods) or 'rope_nope' (schemes); got 'nope'
    """
    if isinstance(method, LayerScheme):
        return method
    if isinstance(method, str) and method in SCHEMES:
        return SCHEMES[method]
    try:
        return get_method(method)
    except ValueError:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))} (registry methods) or "
                         f"{', '.join(map(repr, SCHEMES))} (schemes); got {method!r}") from None
