"""The registry of position methods: one name, one NumPy reference, one Keras layer each.

Every experiment, chapter and assignment names a method by its key in
:data:`METHODS` and looks it up with :func:`get_method`. Each entry says where
the method acts:

- ``"input"``: a vector added to each token vector (sinusoidal, learned);
- ``"queries and keys"``: queries and keys rotated by their positions (RoPE
  and its context-extension variants);
- ``"scores"``: a bias added to the attention scores (ALiBi, T5, Shaw);
- ``"none"``: no positions at all.

Names in the peers (Hugging Face transformers, keras-hub):

- ``sinusoidal``: keras-hub ``SinePositionEncoding``; Hugging Face's
  ``create_sinusoidal_embeddings`` (DistilBERT; the interleaved layout,
  sines in the even columns).
- ``learned``: keras-hub ``PositionEmbedding``; Hugging Face's
  ``position_embeddings`` (BERT, GPT-2).
- ``rope``: keras-hub ``RotaryEmbedding`` (``max_wavelength``); Hugging Face's
  ``rope_theta`` and ``rotate_half``. Its option ``rotary_fraction``, which
  rotates only the first features of each head, is Hugging Face's
  ``partial_rotary_factor`` (Phi, GPT-NeoX's ``rotary_pct``; GPT-J's
  ``rotary_dim`` counts the features), and every RoPE variant takes it.
- ``rope_pi``: Hugging Face ``rope_scaling={"rope_type": "linear"}``;
  keras-hub ``scaling_factor``.
- ``rope_ntk``: NTK-aware scaling with a fixed scale; no peer ships it
  static (it is ``rope_dynamic`` frozen at one length).
- ``rope_dynamic``: Hugging Face ``rope_type="dynamic"`` (``factor``,
  ``max_position_embeddings``): the scale follows the current length.
- ``rope_yarn``: YaRN as its authors' code ships it; Hugging Face
  ``rope_type="yarn"`` (``beta_fast``, ``beta_slow``, ``truncate``,
  ``attention_factor``, ``mscale``, ``mscale_all_dim``); keras-hub
  ``rope_type="yarn"`` (0.32), whose ``truncate`` also defaults to True and
  whose True and False agree with these.
- ``rope_yarn_paper``: YaRN as the paper's equation reads, a ramp linear in
  the turns; no peer ships it.
- ``rope_llama3``: Hugging Face ``rope_type="llama3"`` (``factor``,
  ``low_freq_factor``, ``high_freq_factor``,
  ``original_max_position_embeddings``).
- ``rope_longrope``: Hugging Face ``rope_type="longrope"`` (formerly
  ``"su"``; Phi-3's 128k variants, Phi-3.5, Phi-4-mini) with ``short_factor``,
  ``long_factor``, ``attention_factor``; keras-hub's
  ``Phi3SuScaledRotaryEmbedding`` (its Phi-3 model).
- ``alibi``: Hugging Face's ``build_alibi_tensor`` (BLOOM, MPT).
- ``t5``: Hugging Face ``T5Attention._relative_position_bucket`` and
  ``relative_attention_bias``; keras-hub ``T5`` layers.
- ``shaw``: the ``position_embedding_type="relative_key"`` of Hugging
  Face's BERT in transformers 4 (keys only), removed in transformers 5;
  Shaw et al. learn tables for keys and values.
- ``none``: no positions (NoPE); in a causal model the mask itself carries
  order. Llama 4's ``no_rope_layers`` entries of 0.

Options of the attention that go with the positions, by name in
:data:`ATTENTION_OPTIONS` (each an option of
:class:`pe_lib.layers.PositionalSelfAttention` or of the rotary layer, and a
field of :class:`pe_lib.layer_schemes.LayerPositions`):

- ``layer_scheme``: a method per layer (Gemma 3's ``layer_types`` with
  ``rope_local_base_freq``, Llama 4's ``no_rope_layers``).
- ``temperature``: a factor on the queries by position (Llama 4's
  ``attn_temperature_tuning``, ``floor_scale``, ``attn_scale``; Qwen's
  ``use_logn_attn``).
- ``window`` and ``sink_tokens``: a sliding window (``sliding_window``) and
  StreamingLLM's first tokens kept beside it.
- ``sink_logit``: a learned sink logit per head (gpt-oss's ``sinks``).
- ``rotary_fraction``: partial rotary (``partial_rotary_factor``,
  GPT-NeoX's ``rotary_pct``, GPT-J's ``rotary_dim``), odd head widths
  included.

>>> sorted(METHODS)[:4]
['alibi', 'learned', 'none', 'rope']
>>> get_method("rope_yarn").acts_on
'queries and keys'
>>> get_method("alibi").layer.__name__
'AlibiBias'
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

#: Where a method acts, the values of :attr:`PositionMethod.acts_on`.
WHERE = ("input", "queries and keys", "scores", "none")


@dataclasses.dataclass(frozen=True)
class PositionMethod:
    """One position method.

    Attributes:
        name: its key in :data:`METHODS`.
        summary: one line saying what it does.
        acts_on: one of :data:`WHERE`.
        reference_path: dotted path of the NumPy reference function, or
            ``None`` (``"learned"`` and ``"none"`` have no formula); the
            function itself is :attr:`reference`.
        layer_path: dotted path of the Keras layer class in :mod:`pe_lib.layers`,
            or ``None`` for ``"none"``; the class itself is :attr:`layer`.
        extrapolates: whether the method gives positions past the longest
            sequence seen in training (a learned table does not).
    """

    name: str
    summary: str
    acts_on: str
    reference_path: str | None
    layer_path: str | None
    extrapolates: bool = True

    @property
    def reference(self) -> Callable | None:
        """The NumPy reference function."""
        return None if self.reference_path is None else _load(self.reference_path)

    @property
    def layer(self) -> type | None:
        """The Keras layer class (imports Keras on first use)."""
        return None if self.layer_path is None else _load(self.layer_path)


def _load(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _entry(name, summary, acts_on, reference, layer, extrapolates=True) -> tuple[str, PositionMethod]:
    return name, PositionMethod(name, summary, acts_on, reference, layer, extrapolates)


#: Every position method, by name.
METHODS: dict[str, PositionMethod] = dict([
    _entry("sinusoidal", "fixed sines and cosines of the position, added to the tokens", "input",
           "pe_lib.sinusoidal.sinusoidal_encoding", "pe_lib.layers.PositionalEncoding"),
    _entry("learned", "a trained vector per position, added to the tokens", "input",
           None, "pe_lib.layers.LearnedPositionEmbedding", extrapolates=False),
    _entry("rope", "queries and keys rotated by angles proportional to the position", "queries and keys",
           "pe_lib.rope.apply_rope", "pe_lib.layers.RotaryEmbedding"),
    _entry("rope_pi", "RoPE with every rate divided by the scale (position interpolation)", "queries and keys",
           "pe_lib.rope_scaling.interpolation_rates", "pe_lib.layers.RotaryEmbedding"),
    _entry("rope_ntk", "RoPE with the base raised to N s^(d/(d-2)) (NTK-aware)", "queries and keys",
           "pe_lib.rope_scaling.ntk_rates", "pe_lib.layers.RotaryEmbedding"),
    _entry("rope_dynamic", "NTK-aware RoPE whose scale follows the current length (dynamic NTK)",
           "queries and keys", "pe_lib.rope_scaling.dynamic_ntk_rates", "pe_lib.layers.RotaryEmbedding"),
    _entry("rope_yarn", "RoPE with slow pairs interpolated, fast ones kept, a ramp over the pair index (YaRN)",
           "queries and keys", "pe_lib.rope_scaling.yarn_rates", "pe_lib.layers.RotaryEmbedding"),
    _entry("rope_yarn_paper", "YaRN as the paper writes it: the ramp linear in each pair's turns",
           "queries and keys", "pe_lib.rope_scaling.yarn_paper_rates", "pe_lib.layers.RotaryEmbedding"),
    _entry("rope_llama3", "RoPE in three bands of wavelength: kept, ramped, interpolated (Llama 3.1)",
           "queries and keys", "pe_lib.rope_scaling.llama3_rates", "pe_lib.layers.RotaryEmbedding"),
    _entry("rope_longrope", "RoPE with a searched factor per pair, short or long by the length (LongRoPE)",
           "queries and keys", "pe_lib.longrope.longrope_rates", "pe_lib.layers.RotaryEmbedding"),
    _entry("alibi", "a per-head penalty proportional to the distance, on the scores", "scores",
           "pe_lib.alibi.alibi_block", "pe_lib.layers.AlibiBias"),
    _entry("t5", "a learned per-head scalar per bucket of offsets, on the scores", "scores",
           "pe_lib.t5.relative_position_bucket", "pe_lib.layers.T5RelativeBias"),
    _entry("shaw", "learned vectors per clipped offset, for keys and values", "scores",
           "pe_lib.shaw.relative_scores", "pe_lib.layers.ShawRelativePositions"),
    _entry("none", "no positions: attention sees a set", "none", None, None),
])


@dataclasses.dataclass(frozen=True)
class AttentionOption:
    """An option of the attention that released models set beside their position method.

    Attributes:
        name: its key in :data:`ATTENTION_OPTIONS`.
        summary: one line saying what it does.
        reference_path: dotted path of the NumPy reference.
        layer_option: where the Keras layers take it, ``"Class.argument"``, or
            ``"Class.call.argument"`` for an argument of the call.
        peers: the names Hugging Face transformers gives it.
    """

    name: str
    summary: str
    reference_path: str
    layer_option: str
    peers: str

    @property
    def reference(self) -> Callable:
        """The NumPy reference function or class."""
        return _load(self.reference_path)


#: The attention options that go with the positions, by name.
ATTENTION_OPTIONS: dict[str, AttentionOption] = {option.name: option for option in (
    AttentionOption("layer_scheme", "a position method per layer (local and global layers, NoPE layers)",
                    "pe_lib.layer_schemes.LayerPositions", "PositionalSelfAttention.method",
                    "layer_types, rope_local_base_freq, no_rope_layers"),
    AttentionOption("temperature", "a factor on each query that grows with its position",
                    "pe_lib.temperature.query_temperature", "PositionalSelfAttention.temperature",
                    "attn_temperature_tuning, floor_scale, attn_scale; use_logn_attn"),
    AttentionOption("window", "a sliding window of keys, with the first tokens kept as sinks",
                    "pe_lib.sinks.window_mask", "PositionalSelfAttention.window",
                    "sliding_window; StreamingLLM's attention sinks"),
    AttentionOption("sink_logit", "a learned logit per head that takes softmax weight from the keys",
                    "pe_lib.sinks.softmax_with_sink", "PositionalSelfAttention.sink_logit", "sinks (gpt-oss)"),
    AttentionOption("rotary_fraction", "RoPE on the first features of each head only, odd widths included",
                    "pe_lib.rope.rotary_depth", "RotaryEmbedding.rotary_fraction",
                    "partial_rotary_factor, rotary_pct, rotary_dim"),
    AttentionOption("mrope_section", "RoPE by sections of pairs, each turned by one axis: time, row, column (M-RoPE)",
                    "pe_lib.multimodal_rope.apply_mrope", "RotaryEmbedding.mrope_section",
                    "rope_parameters['mrope_section'] (Qwen2-VL, Qwen2.5-VL)"),
    AttentionOption("axial", "2-D RoPE for image patches: half the pairs by the row, half by the column",
                    "pe_lib.multimodal_rope.apply_axial_rope", "RotaryEmbedding.axial",
                    "rope_type='axial' (Qwen2VLVisionRotaryEmbedding)"),
    AttentionOption("packed_positions", "positions that start again at 0 for each document packed in a row",
                    "pe_lib.position_ids.packed_position_ids", "PositionalSelfAttention.call.position_ids",
                    "DataCollatorWithFlattening's position_ids; find_packed_sequence_indices"),
    AttentionOption("left_padding", "positions counted over the tokens of a left-padded row, pads at 0",
                    "pe_lib.position_ids.left_padded_position_ids", "RotaryEmbedding.call.attention_mask",
                    "position_ids from attention_mask in generation"),
)}


def get_method(method: str | PositionMethod) -> PositionMethod:
    """The registry entry of ``method``, or a ``ValueError`` listing the names.

    A public entry point calls this once on what the user passed, a name or an
    entry, and hands the entry inward; an entry of the registry comes back as is.

    >>> get_method("t5").summary
    'a learned per-head scalar per bucket of offsets, on the scores'
    >>> get_method(METHODS["t5"]) is METHODS["t5"]
    True
    >>> get_method("cosine")
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'sinusoidal', 'learned', 'rope', 'rope_pi', 'rope_ntk', 'rope_dynamic', 'rope_yarn', 'rope_yarn_paper', 'rope_llama3', 'rope_longrope', 'alibi', 't5', 'shaw', 'none'; got 'cosine'
    """
    if isinstance(method, PositionMethod) and METHODS.get(method.name) is method:
        return method
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    return METHODS[method]


def method_names(acts_on: str | None = None) -> tuple[str, ...]:
    """The names of the methods, all or those acting on ``acts_on``.

    >>> method_names("input")
    ('sinusoidal', 'learned')
    >>> method_names("inputs")
    Traceback (most recent call last):
    ...
    ValueError: acts_on must be one of 'input', 'queries and keys', 'scores', 'none'; got 'inputs'
    """
    if acts_on is not None and acts_on not in WHERE:
        raise ValueError(f"acts_on must be one of {', '.join(map(repr, WHERE))}; got {acts_on!r}")
    return tuple(name for name, entry in METHODS.items() if acts_on in (None, entry.acts_on))
