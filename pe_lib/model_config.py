r"""A released model's positions, read from its configuration (``config.json``).

:func:`read_config` takes a configuration as Hugging Face transformers saves
it, a path to ``config.json`` or the dict itself, and returns the model's
position scheme as a :class:`ModelPositions`: one
:class:`pe_lib.layer_schemes.LayerPositions` per layer, with the method, its
options and the attention options (window, sinks, temperature, chunk,
query-key norm, no positions at all), and what acts on the input (a learned
table) where the model has it.

Both generations of keys are read:

- transformers 4: ``rope_theta``, ``rope_scaling`` (``rope_type``, formerly
  ``type``), ``partial_rotary_factor`` (GPT-NeoX's ``rotary_pct`` and
  ``rotary_emb_base``), ``rope_local_base_freq`` and
  ``sliding_window_pattern`` (Gemma 3), ``sliding_window``,
  ``use_sliding_window`` and ``max_window_layers`` (Qwen2),
  ``no_rope_layers`` or ``no_rope_layer_interval``,
  ``attn_temperature_tuning``, ``floor_scale``, ``attn_scale``,
  ``attention_chunk_size`` and ``use_qk_norm`` (Llama 4);
- transformers 5: ``rope_parameters``, flat, or nested by layer type
  (``{"sliding_attention": {...}, "full_attention": {...}}``, Gemma 3), and
  ``layer_types``.

Every derived value is derived as transformers 5 derives it
(``modeling_rope_utils``): ``head_dim`` is the configuration's, or
``hidden_size // num_attention_heads``; the rotated width is
``int(head_dim * partial_rotary_factor)``; ``original_max_position_embeddings``
of ``llama3``, ``yarn`` and ``longrope`` falls back to
``max_position_embeddings`` (Phi-3's top-level value first); YaRN's and
LongRoPE's scale is ``factor``, or ``max_position_embeddings /
original_max_position_embeddings`` where ``factor`` is absent, and their
attention factors follow from it; dynamic NTK's trained length is
``max_position_embeddings``. A key the model needs and does not give, or a
``rope_type`` not listed in :data:`ROPE_TYPES`, is an error naming it.

>>> model = read_config({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
...                      "num_hidden_layers": 32, "max_position_embeddings": 131072,
...                      "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
...                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
...                      "original_max_position_embeddings": 8192}})
>>> model.layers[0].method, model.head_dim, len(model.layers)
('rope_llama3', 128, 32)
>>> read_config({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
...              "num_hidden_layers": 1, "max_position_embeddings": 64, "rope_theta": 1e4,
...              "rope_scaling": {"rope_type": "ntk"}})
Traceback (most recent call last):
...
ValueError: rope_type='ntk' is not one transformers defines here; known: 'default', 'linear', 'dynamic', 'yarn', 'llama3', 'longrope', 'su', 'mrope'
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

from pe_lib import rope_scaling
from pe_lib.layer_schemes import LayerPositions

#: The ``rope_type`` values read, with the registry method each becomes
#: (``"su"`` is LongRoPE's first name; ``"mrope"`` is Qwen2-VL's plain RoPE over three axes).
ROPE_TYPES = {"default": "rope", "linear": "rope_pi", "dynamic": "rope_dynamic", "yarn": "rope_yarn",
              "llama3": "rope_llama3", "longrope": "rope_longrope", "su": "rope_longrope", "mrope": "rope"}

#: The model types read, by what carries their positions.
ROPE_MODELS = ("llama", "mistral", "mixtral", "qwen2", "qwen2_vl", "gemma", "gemma2", "gemma3", "gemma3_text",
               "phi", "phi3", "gpt_neox", "deepseek_v3", "gpt_oss", "llama4", "llama4_text", "falcon")
ALIBI_MODELS = ("bloom", "mpt")
OTHER_MODELS = ("t5", "gpt2")

#: The layer types of ``layer_types`` read.
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention")

_RATES_OPTIONS = {"rope_yarn": ("beta_fast", "beta_slow"), "rope_llama3": ("low_freq_factor", "high_freq_factor")}


@dataclasses.dataclass(frozen=True)
class ModelPositions:
    """A model's positions, as its configuration gives them.

    Attributes:
        model_type: the configuration's ``model_type`` (of its ``text_config``
            for a model with one).
        layers: one :class:`~pe_lib.layer_schemes.LayerPositions` per
            attention layer (``num_hidden_layers``).
        heads: query heads (``num_attention_heads``).
        head_dim: the width of a query and of a key head.
        rope_head_dim: the width RoPE's rates are computed for before
            ``rotary_fraction`` (DeepSeek-V3's ``qk_rope_head_dim``, 64 of
            192); ``head_dim`` elsewhere; ``None`` without RoPE.
        max_length: ``max_position_embeddings`` (GPT-2's ``n_positions``,
            MPT's ``max_seq_len``, BLOOM's ``seq_length``); ``None`` for T5,
            whose buckets have no last position, or where none is given.
        input_method: ``"learned"`` for a table added to the tokens, else ``None``.
        softmax_factor: what multiplies the softmax scale :math:`1/\\sqrt{d}`
            besides the positions (DeepSeek-V3's YaRN ``mscale_all_dim``: the
            square of :math:`0.1 \\ln s + 1`; Gemma 2's and 3's
            ``query_pre_attn_scalar`` :math:`a`, whose scale is
            :math:`1/\\sqrt{a}`: :math:`\\sqrt{d/a}`); 1 elsewhere.
    """

    model_type: str
    layers: tuple[LayerPositions, ...]
    heads: int
    head_dim: int
    rope_head_dim: int | None
    max_length: int | None
    input_method: str | None = None
    softmax_factor: float = 1.0

    def rates(self, layer: int, *, length: int | None = None):
        """The float64 angle rates of layer ``layer``'s heads (``None`` without RoPE)."""
        return self.layers[layer].rates(self.rope_head_dim, length=length)


def _load(config) -> dict:
    if isinstance(config, Mapping):
        return json.loads(json.dumps(config))  # a deep copy, as JSON would store it
    if isinstance(config, (str, os.PathLike)):
        return json.loads(Path(config).read_bytes())  # JSON's bytes are UTF-8 whatever the locale
    raise TypeError(f"config must be a path to config.json or a dict, got {config!r}")


def _need(config: Mapping, *names: str):
    """The value of the first of ``names`` present (not None), or an error naming them."""
    for name in names:
        if config.get(name) is not None:
            return config[name]
    raise ValueError(f"the configuration lacks {' or '.join(names)} (model_type={config.get('model_type')!r})")


def _shape(config: Mapping, model_type: str) -> tuple[int, int, int]:
    """``(layers, heads, head_dim)`` under each family's names."""
    if model_type == "gpt2":
        return _need(config, "n_layer"), _need(config, "n_head"), _need(config, "n_embd") // _need(config, "n_head")
    if model_type == "bloom":
        heads = _need(config, "n_head", "num_attention_heads")
        return _need(config, "n_layer", "num_hidden_layers"), heads, _need(config, "hidden_size", "n_embed") // heads
    if model_type == "mpt":
        return _need(config, "n_layers"), _need(config, "n_heads"), _need(config, "d_model") // _need(config, "n_heads")
    if model_type == "t5":
        return _need(config, "num_layers"), _need(config, "num_heads"), _need(config, "d_kv")
    heads = _need(config, "num_attention_heads")
    if model_type == "deepseek_v3":
        head_dim = _need(config, "qk_nope_head_dim") + _need(config, "qk_rope_head_dim")
    else:
        head_dim = config.get("head_dim") or _need(config, "hidden_size") // heads
    return _need(config, "num_hidden_layers"), heads, head_dim


def _layer_types(config: Mapping, model_type: str, num_layers: int) -> list[str]:
    """Each layer's attention, as ``layer_types`` lists it or as the configuration class derives it."""
    given = config.get("layer_types")
    if given is not None:
        if len(given) != num_layers or any(kind not in LAYER_TYPES for kind in given):
            raise ValueError(f"layer_types must list one of {LAYER_TYPES} per layer ({num_layers}), got {given!r}")
        return list(given)
    if model_type in ("gemma2", "gpt_oss"):  # alternate, the first sliding
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(num_layers)]
    if model_type in ("gemma3", "gemma3_text"):
        pattern = _need(config, "sliding_window_pattern")
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(num_layers)]
    if model_type in ("qwen2", "qwen2_vl"):  # a window only with use_sliding_window, from max_window_layers on
        if not config.get("use_sliding_window") or config.get("sliding_window") is None:
            return ["full_attention"] * num_layers
        first = _need(config, "max_window_layers")
        return ["sliding_attention" if i >= first else "full_attention" for i in range(num_layers)]
    if model_type in ("mistral", "mixtral", "phi3"):  # one window in every layer, if any
        kind = "full_attention" if config.get("sliding_window") is None else "sliding_attention"
        return [kind] * num_layers
    if model_type in ("llama4", "llama4_text"):
        chunked = config.get("attention_chunk_size") is not None
        return ["chunked_attention" if rope and chunked else "full_attention" for rope in _rope_layers(config)]
    if config.get("sliding_window") is not None:
        raise ValueError(f"sliding_window is set but model_type={model_type!r} has no rule for which layers "
                         "use it; give layer_types")
    return ["full_attention"] * num_layers


def _rope_layers(config: Mapping) -> list[int]:
    """Llama 4's ``no_rope_layers`` (1: RoPE, 0: none), or the list ``no_rope_layer_interval`` makes."""
    layers = _need(config, "num_hidden_layers")
    given = config.get("no_rope_layers")
    if given:  # transformers takes an empty list as absent
        if len(given) != layers or any(flag not in (0, 1) for flag in given):
            raise ValueError(f"no_rope_layers must hold a 0 or 1 per layer ({layers}), got {given!r}")
        return list(given)
    interval = _need(config, "no_rope_layer_interval")
    return [int((i + 1) % interval != 0) for i in range(layers)]


def _rope_parameters(config: Mapping, model_type: str) -> dict:
    """The RoPE parameters by layer type (``None`` for every layer type when not nested)."""
    given = config.get("rope_parameters")
    if given is not None:  # transformers 5
        nested = {kind: given[kind] for kind in given if kind in LAYER_TYPES}
        if nested:
            return nested
        return {None: dict(given)}
    scaling = dict(config.get("rope_scaling") or {})
    if model_type in ("gemma3", "gemma3_text"):  # the factor is the global layers'; the local base its own key
        full = {**scaling, "rope_theta": _need(config, "rope_theta")}
        local = {"rope_theta": _need(config, "rope_local_base_freq")}
        return {"full_attention": full, "sliding_attention": local}
    if model_type == "gpt_neox":
        scaling.setdefault("rope_theta", _need(config, "rotary_emb_base", "rope_theta"))
        scaling.setdefault("partial_rotary_factor", _need(config, "rotary_pct", "partial_rotary_factor"))
    if "rope_theta" not in scaling:
        scaling["rope_theta"] = _need(config, "rope_theta")
    # Phi rotates a share it must state; elsewhere the share is optional
    fraction = _need(config, "partial_rotary_factor") if model_type == "phi" else config.get("partial_rotary_factor")
    if fraction is not None:
        scaling.setdefault("partial_rotary_factor", fraction)
    return {None: scaling}


def _rope_options(parameters: Mapping, config: Mapping, model_type: str) -> tuple[str, dict]:
    """The registry method and its options for one set of transformers' RoPE parameters."""
    rope_type = parameters.get("rope_type", parameters.get("type", "default"))
    if model_type == "phi3" and rope_type == "yarn":  # Phi3Config renames it, as transformers does
        rope_type = "longrope"
    if rope_type not in ROPE_TYPES:
        raise ValueError(f"rope_type={rope_type!r} is not one transformers defines here; known: "
                         f"{', '.join(map(repr, ROPE_TYPES))}")
    method = ROPE_TYPES[rope_type]
    if parameters.get("rope_theta") is None:
        raise ValueError(f"the configuration lacks rope_theta (model_type={model_type!r})")
    options = {"base": float(parameters["rope_theta"])}
    fraction = parameters.get("partial_rotary_factor", 1.0)
    if fraction != 1.0:
        options["rotary_fraction"] = float(fraction)
    if parameters.get("mrope_section") is not None:
        options["mrope_section"] = list(parameters["mrope_section"])
    if model_type in ("llama4", "llama4_text") or (model_type == "deepseek_v3" and config.get("rope_interleave", True)):
        options["layout"] = "interleaved"
    if method == "rope_pi":
        options["scale"] = float(_need(parameters, "factor"))
    elif method == "rope_dynamic":
        options["scale"] = float(_need(parameters, "factor"))
        options["original_length"] = _need(config, "max_position_embeddings")
    elif method in ("rope_yarn", "rope_llama3", "rope_longrope"):
        original = (config.get("original_max_position_embeddings") if model_type == "phi3" else None) \
            or parameters.get("original_max_position_embeddings") or _need(config, "max_position_embeddings")
        options["original_length"] = int(original)
        if parameters.get("factor") is not None:
            options["scale"] = float(parameters["factor"])
        elif method == "rope_llama3":
            raise ValueError("the configuration lacks factor (rope_type='llama3')")
        else:  # the ratio of the lengths, as transformers takes it
            options["max_length"] = int(_need(config, "max_position_embeddings"))
        for name in _RATES_OPTIONS.get(method, ()):
            if method == "rope_llama3":
                options[name] = float(_need(parameters, name))
            elif parameters.get(name):  # transformers: `get(name) or default`
                options[name] = float(parameters[name])
        if method == "rope_yarn":
            if "truncate" in parameters:
                options["truncate"] = bool(parameters["truncate"])
            if parameters.get("mscale") and parameters.get("mscale_all_dim"):  # else transformers ignores them
                options["mscale"] = float(parameters["mscale"])
                options["mscale_all_dim"] = float(parameters["mscale_all_dim"])
        if method == "rope_longrope":
            options["short_factor"] = [float(value) for value in _need(parameters, "short_factor")]
            options["long_factor"] = [float(value) for value in _need(parameters, "long_factor")]
        if method in ("rope_yarn", "rope_longrope") and parameters.get("attention_factor") is not None:
            options["attention_factor"] = float(parameters["attention_factor"])
        if "max_length" in options and options["max_length"] < options["original_length"]:
            raise ValueError(f"max_position_embeddings={options['max_length']} is below "
                             f"original_max_position_embeddings={options['original_length']}")
    return method, options


#: Models whose attention scales by ``query_pre_attn_scalar ** -0.5`` instead of
#: ``head_dim ** -0.5`` (``Gemma2Attention``, ``Gemma3Attention``), and the
#: configuration classes' default for that key.
QUERY_SCALAR_MODELS = ("gemma2", "gemma3", "gemma3_text")
QUERY_SCALAR_DEFAULT = 256


def _softmax_factor(model_type: str, parameters: Mapping, config: Mapping, head_dim: int) -> float:
    """What multiplies ``1/sqrt(head_dim)``: DeepSeek-V3's YaRN temperature, as
    ``DeepseekV3Attention`` sets it, or Gemma's ``query_pre_attn_scalar``."""
    if model_type in QUERY_SCALAR_MODELS:
        scalar = config.get("query_pre_attn_scalar", QUERY_SCALAR_DEFAULT)
        if isinstance(scalar, bool) or not isinstance(scalar, (int, float)) or not scalar > 0:
            raise ValueError(f"query_pre_attn_scalar must be a positive number, got {scalar!r} "
                             f"(model_type={model_type!r})")
        return math.sqrt(head_dim / scalar)
    if model_type != "deepseek_v3" or parameters.get("rope_type", parameters.get("type", "default")) == "default":
        return 1.0
    mscale_all_dim = parameters.get("mscale_all_dim") or 0
    if not mscale_all_dim:
        return 1.0
    if parameters.get("factor") is None:  # DeepseekV3Attention reads it directly
        raise ValueError("the configuration lacks factor (rope_scaling of model_type='deepseek_v3', whose "
                         "attention scales its softmax by it)")
    return rope_scaling.yarn_softmax_factor(float(parameters["factor"]), float(mscale_all_dim))


def read_config(config) -> ModelPositions:
    """The positions of the model that ``config`` (a ``config.json`` path or its dict) configures.

    A model with a ``text_config`` (Llama 4, Gemma 3 4B and up) is read from it.
    """
    config = _load(config)
    if isinstance(config.get("text_config"), Mapping):
        config = config["text_config"]
    model_type = config.get("model_type")
    if model_type is None:
        raise ValueError("the configuration lacks model_type")
    known = ROPE_MODELS + ALIBI_MODELS + OTHER_MODELS
    if model_type not in known:
        raise ValueError(f"model_type={model_type!r} is not read here; known: {', '.join(map(repr, known))}")
    num_layers, heads, head_dim = _shape(config, model_type)
    max_length = config.get("max_position_embeddings", config.get("max_seq_len", config.get("seq_length")))
    if model_type == "gpt2":
        return ModelPositions(model_type, (LayerPositions("none"),) * num_layers, heads, head_dim, None,
                              _need(config, "n_positions"), input_method="learned")
    if model_type == "t5":
        layer = LayerPositions("t5", {"num_buckets": _need(config, "relative_attention_num_buckets"),
                                      "max_distance": _need(config, "relative_attention_max_distance")})
        return ModelPositions(model_type, (layer,) * num_layers, heads, head_dim, None, None)  # buckets: no end
    if model_type in ALIBI_MODELS or (model_type == "falcon" and _need(config, "alibi") is True):
        if model_type == "mpt":
            attention = _need(config, "attn_config")
            if not attention.get("alibi"):
                raise ValueError("an MPT configuration without attn_config['alibi'] is not read here")
            if attention.get("alibi_bias_max", 8) != 8:
                raise ValueError(f"alibi_bias_max={attention['alibi_bias_max']!r}: only ALiBi's 8 is built here")
        return ModelPositions(model_type, (LayerPositions("alibi"),) * num_layers, heads, head_dim, None, max_length)
    rope_head_dim = _need(config, "qk_rope_head_dim") if model_type == "deepseek_v3" else head_dim
    kinds = _layer_types(config, model_type, num_layers)
    by_kind = _rope_parameters(config, model_type)
    rope_flags = _rope_layers(config) if model_type in ("llama4", "llama4_text") else [True] * num_layers
    if model_type in ("llama4", "llama4_text") and "attention_chunk_size" not in config:  # transformers: 8192 if absent
        raise ValueError(f"the configuration lacks attention_chunk_size (model_type={model_type!r}); null for none")
    tuning = model_type in ("llama4", "llama4_text") and bool(_need(config, "attn_temperature_tuning"))
    qk_norm = model_type in ("llama4", "llama4_text") and bool(_need(config, "use_qk_norm"))
    layers = []
    for kind, rope in zip(kinds, rope_flags):
        window = _need(config, "sliding_window") if kind == "sliding_attention" else None
        if not rope:
            # indexed as Llama4TextAttention indexes it: by the step in the row
            # (cache_position), pads and earlier packed documents included
            heat = {"kind": "llama4", "floor_scale": _need(config, "floor_scale"),
                    "attn_scale": _need(config, "attn_scale"),
                    "index": "cache_position"} if tuning else None
            layers.append(LayerPositions("none", window=window, temperature=heat))
            continue
        if None in by_kind:
            parameters = by_kind[None]
        elif kind in by_kind:
            parameters = by_kind[kind]
        else:
            raise ValueError(f"rope_parameters has no entry for the layer type {kind!r}")
        method, options = _rope_options(parameters, config, model_type)
        chunk = config.get("attention_chunk_size") if kind == "chunked_attention" else None
        layers.append(LayerPositions(method, options, window=window, sink_logit=model_type == "gpt_oss",
                                     chunk_size=chunk, qk_norm=qk_norm))
    first = next(iter(by_kind.values()))  # the one set, or the first layer type's
    return ModelPositions(model_type, tuple(layers), heads, head_dim, rope_head_dim, max_length,
                          softmax_factor=_softmax_factor(model_type, first, config, head_dim))
