"""Make tests/data/hf_reference.json: what the peers' own code computes, for pe_lib's tests to check against.

Run it in an environment of its own, never the course's (the course never
imports transformers or torch):

    python3 -m venv /tmp/hfenv
    /tmp/hfenv/bin/pip install transformers torch numpy keras-hub
    /tmp/hfenv/bin/python tests/data/make_hf_reference.py

Each section calls the peer's module or function the way its models call it
and records inputs and outputs (float32 values written exactly, as Python
floats). Where an attention module is the only place a computation happens
(the rotation inside GPT-NeoX's attention, Llama 4's temperature), a custom
attention function registered with transformers' ``AttentionInterface``
receives the queries the module would attend with, and records them.
The versions used are written into the file.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import platform
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "torch")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AttentionInterface  # noqa: E402

OUT = Path(__file__).with_name("hf_reference.json")
CAPTURED: dict = {}


def capture(module, query, key, value, attention_mask, scaling=None, **kwargs):
    """An attention function that records what it is given and returns zeros."""
    CAPTURED["query"] = query.detach().clone()
    CAPTURED["scaling"] = scaling
    CAPTURED["kwargs"] = {name: value for name, value in kwargs.items() if isinstance(value, (int, float))}
    batch, heads, steps, _ = query.shape
    return torch.zeros(batch, steps, heads, value.shape[-1]), None


AttentionInterface.register("capture", capture)


def floats(tensor) -> list:
    return np.asarray(tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else tensor,
                      dtype=np.float64).tolist()


def random(shape, seed) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).normal(size=shape).astype(np.float32))


# Phi-3.5-mini-instruct's configuration (microsoft/Phi-3.5-mini-instruct, config.json): the factors
# as the file stores them, float32 values of two-decimal numbers.
PHI35_SHORT = [1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842,
               1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842,
               1.0699999332427979, 1.0999999046325684, 1.1099998950958252, 1.1599998474121094,
               1.1599998474121094, 1.1699998378753662, 1.2899998426437378, 1.339999794960022,
               1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788,
               1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745,
               2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
               2.0199997425079346, 2.0199997425079346, 2.0299997329711914, 2.0299997329711914,
               2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
               2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756,
               2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533,
               2.729999542236328, 2.749999523162842, 2.8399994373321533]
PHI35_LONG = [1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601,
              1.5899999141693115, 1.600000023841858, 1.6200000047683716, 2.620000123977661,
              3.2300000190734863, 3.2300000190734863, 4.789999961853027, 7.400000095367432,
              7.700000286102295, 9.09000015258789, 12.199999809265137, 17.670000076293945,
              24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
              32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992,
              50.340003967285156, 50.45000457763672, 57.55000305175781, 57.93000411987305,
              58.21000289916992, 60.1400032043457, 62.61000442504883, 62.62000274658203,
              62.71000289916992, 63.1400032043457, 63.1400032043457, 63.77000427246094,
              63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688,
              64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938,
              64.4800033569336, 64.51000213623047, 64.52999877929688, 64.83999633789062]


def longrope() -> dict:
    from transformers import Phi3Config
    from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

    config = Phi3Config(hidden_size=192, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=1,
                        max_position_embeddings=131072, original_max_position_embeddings=4096,
                        rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                         "short_factor": PHI35_SHORT, "long_factor": PHI35_LONG})
    module = Phi3RotaryEmbedding(config)
    x = torch.zeros(1, dtype=torch.float32)
    short_positions = [0, 1, 17, 1000, 4095]
    long_positions = [0, 1, 17, 1000, 4095, 4096, 20000, 131071]
    cos_short, sin_short = module(x, torch.tensor([short_positions]))
    short_rates = module.inv_freq.clone()
    cos_long, sin_long = module(x, torch.tensor([long_positions]))
    long_rates = module.inv_freq.clone()
    return {
        "head_dim": 96, "base": 10000.0, "original_length": 4096, "max_length": 131072,
        "short_factor": PHI35_SHORT, "long_factor": PHI35_LONG,
        "attention_scaling": float(module.attention_scaling),
        "short_rates": floats(short_rates), "long_rates": floats(long_rates),
        "short_positions": short_positions, "cos_short": floats(cos_short[0]), "sin_short": floats(sin_short[0]),
        "long_positions": long_positions, "cos_long": floats(cos_long[0]), "sin_long": floats(sin_long[0]),
    }


def gpt_neox_partial() -> list:
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXAttention, GPTNeoXRotaryEmbedding

    cases = []
    for width, fraction in ((81, 0.5), (65, 0.25)):
        config = GPTNeoXConfig(hidden_size=width, num_attention_heads=1, num_hidden_layers=1,
                               intermediate_size=8, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                                      "partial_rotary_factor": fraction})
        config._attn_implementation = "capture"
        attention = GPTNeoXAttention(config, layer_idx=0)
        with torch.no_grad():  # query = hidden states: the identity in the query's block of the projection
            attention.query_key_value.weight.zero_()
            attention.query_key_value.bias.zero_()
            for feature in range(width):
                attention.query_key_value.weight[feature, feature] = 1.0
        positions = [0, 1, 2, 7, 100, 2047]
        hidden = random((1, len(positions), width), seed=width)
        cos, sin = GPTNeoXRotaryEmbedding(config)(hidden, torch.tensor([positions]))
        with torch.no_grad():
            attention(hidden, None, position_embeddings=(cos, sin))
        cases.append({"width": width, "fraction": fraction, "rotary_ndims": attention.rotary_ndims,
                      "positions": positions, "x": floats(hidden[0]), "rotated": floats(CAPTURED["query"][0, 0])})
    return cases


def dynamic_ntk_keeps_the_longest() -> dict:
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = LlamaConfig(hidden_size=128, num_attention_heads=1, num_hidden_layers=1, max_position_embeddings=4096,
                         rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0})
    positions = [0, 1, 100, 4095, 6000, 8190]  # the last sets the length: 8191
    x = random((1, 1, len(positions), 128), seed=3)
    ids = torch.tensor([positions])
    fresh = LlamaRotaryEmbedding(config)
    cos_fresh, sin_fresh = fresh(x, ids)
    used = LlamaRotaryEmbedding(config)
    used(x, torch.tensor([[16382]]))  # a call at 16,383 positions first
    cos_used, sin_used = used(x, ids)
    rotated_fresh, _ = apply_rotary_pos_emb(x, x, cos_fresh, sin_fresh)
    rotated_used, _ = apply_rotary_pos_emb(x, x, cos_used, sin_used)
    return {"head_dim": 128, "scale": 2.0, "original_length": 4096, "first_length": 16383,
            "positions": positions, "x": floats(x[0, 0]),
            "rotated_fresh": floats(rotated_fresh[0, 0]), "rotated_after_longer": floats(rotated_used[0, 0])}


def distilbert_sinusoidal() -> dict:
    from transformers.models.distilbert import modeling_distilbert

    out = torch.empty(12, 8)
    modeling_distilbert._create_sinusoidal_embeddings(n_pos=12, dim=8, out=out)
    return {"n_pos": 12, "dim": 8, "table": floats(out)}


def bert_position_types() -> dict:
    from transformers.models.bert import configuration_bert, modeling_bert

    source = inspect.getsource(modeling_bert) + inspect.getsource(configuration_bert)
    return {"relative_key_in_bert": "relative_key" in source}


def deepseek_v3() -> dict:
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention, DeepseekV3RotaryEmbedding

    rope = {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "beta_fast": 32.0,
            "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "rope_theta": 10000.0}
    config = DeepseekV3Config(hidden_size=64, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=1,
                              q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=64, qk_nope_head_dim=128,
                              v_head_dim=128, max_position_embeddings=163840, rope_parameters=rope)
    attention = DeepseekV3Attention(config, layer_idx=0)
    rotary = DeepseekV3RotaryEmbedding(config)
    return {"rope_parameters": rope, "qk_head_dim": 192, "rope_head_dim": 64,
            "softmax_scale_times_sqrt_head_dim": float(attention.scaling) * 192 ** 0.5,
            "rotary_attention_scaling": float(rotary.attention_scaling), "rates": floats(rotary.inv_freq),
            "rope_interleave": bool(config.rope_interleave)}


def gemma3() -> dict:
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    rope = {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}}
    config = Gemma3TextConfig(hidden_size=64, num_attention_heads=1, num_key_value_heads=1, head_dim=128,
                              num_hidden_layers=12, sliding_window=1024, rope_parameters=rope)
    rotary = Gemma3RotaryEmbedding(config)
    rates = {kind: floats(getattr(rotary, f"{kind}_inv_freq")) for kind in ("sliding_attention", "full_attention")}
    return {"head_dim": 128, "sliding_window": 1024, "layer_types": list(config.layer_types),
            "rope_parameters": rope, "rates": rates}


def llama4() -> dict:
    from transformers import Llama4TextConfig
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention, Llama4TextRotaryEmbedding

    rope = {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
            "original_max_position_embeddings": 8192, "rope_theta": 500000.0}
    config = Llama4TextConfig(hidden_size=128, num_attention_heads=1, num_key_value_heads=1, head_dim=128,
                              num_hidden_layers=8, rope_parameters=rope, attn_temperature_tuning=True)
    rotary = Llama4TextRotaryEmbedding(config)
    small = Llama4TextConfig(hidden_size=2, num_attention_heads=1, num_key_value_heads=1, head_dim=2,
                             num_hidden_layers=4, rope_parameters=rope, attn_temperature_tuning=True)
    small._attn_implementation = "capture"
    nope = Llama4TextAttention(small, layer_idx=3)
    with torch.no_grad():
        nope.q_proj.weight.copy_(torch.eye(2))
    steps = 24600
    with torch.no_grad():
        nope(torch.ones(1, steps, 2), None, None)
    query = CAPTURED["query"][0, 0, :, 0]
    sample = [0, 1, 8190, 8191, 8192, 16382, 16383, 24575, 24576, steps - 1]
    return {"rope_parameters": rope, "no_rope_layers": list(config.no_rope_layers),
            "floor_scale": config.floor_scale, "attn_scale": config.attn_scale,
            "rates": floats(rotary.inv_freq), "head_dim": 128,
            "temperature_positions": sample, "temperature": floats(query[sample])}


def gpt_oss() -> dict:
    from transformers import GptOssConfig
    from transformers.models.gpt_oss import modeling_gpt_oss

    config = GptOssConfig(num_hidden_layers=4, hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                          head_dim=64)
    rotary = modeling_gpt_oss.GptOssRotaryEmbedding(config)

    class Heads(torch.nn.Module):
        num_key_value_groups = 1
        training = False

        def __init__(self):
            super().__init__()
            self.sinks = torch.nn.Parameter(torch.tensor([0.0, 1.5]))

    steps = 5
    query, key, value = random((1, 2, steps, 4), 11), random((1, 2, steps, 4), 12), random((1, 2, steps, 4), 13)
    causal = torch.triu(torch.full((steps, steps), float("-inf")), diagonal=1)[None, None]
    _, weights = modeling_gpt_oss.eager_attention_forward(Heads(), query, key, value, causal, scaling=0.5)
    return {"rope_parameters": dict(config.rope_parameters), "head_dim": 64,
            "rates": floats(rotary.inv_freq), "attention_scaling": float(rotary.attention_scaling),
            "sliding_window": config.sliding_window, "layer_types": list(config.layer_types),
            "sinks": [0.0, 1.5], "scaling": 0.5, "query": floats(query[0]), "key": floats(key[0]),
            "weights": floats(weights[0])}


def keras_hub_yarn() -> dict:
    import keras_hub

    layer_class = keras_hub.layers.RotaryEmbedding
    default_truncate = inspect.signature(layer_class.__init__).parameters["truncate"].default
    cases = []
    for depth, base, original, truncate in ((64, 10000, 2048, True), (64, 10000, 2048, False),
                                            (8, 500, 2048, True), (8, 20, 2048, True), (8, 20, 2048, False)):
        layer = layer_class(max_wavelength=base, scaling_factor=4.0, rope_type="yarn",
                            original_max_position_embeddings=original, truncate=truncate)
        x = random((1, 6, 1, depth), seed=depth + base)
        outputs = {}
        for start in (0, 5000):
            outputs[str(start)] = floats(layer(x, start_index=start)[0, :, 0])
        cases.append({"depth": depth, "base": float(base), "original_length": original, "scale": 4.0,
                      "truncate": truncate, "x": floats(x[0, :, 0]), "rotated": outputs})
    return {"default_truncate": default_truncate, "cases": cases}


def qwen2_vl_mrope() -> dict:
    """Qwen2-VL's M-RoPE: get_rope_index on text, an image and text, and the rotated queries."""
    from types import SimpleNamespace

    from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig

    config = Qwen2VLTextConfig(hidden_size=256, num_attention_heads=2, num_key_value_heads=2,
                               rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                                                "mrope_section": [16, 24, 24]})
    # 3 text tokens, an image of 4 x 6 patches merged 2 x 2 (2 x 3 tokens), 2 text tokens; the
    # second row has two left pads
    types = torch.tensor([[0, 0, 0] + [1] * 6 + [0, 0], [0, 0, 0, 0, 0] + [1] * 6])
    mask = torch.tensor([[1] * 11, [0, 0] + [1] * 9])
    grids = torch.tensor([[1, 4, 6], [1, 4, 6]])
    model = SimpleNamespace(config=SimpleNamespace(vision_config=SimpleNamespace(spatial_merge_size=2)))
    model.get_vision_position_ids = lambda *args, **kwargs: qwen.Qwen2VLModel.get_vision_position_ids(
        model, *args, **kwargs)
    position_ids, deltas = qwen.Qwen2VLModel.get_rope_index(model, torch.zeros_like(types), types,
                                                            image_grid_thw=grids, attention_mask=mask)
    rotary = qwen.Qwen2VLRotaryEmbedding(config)
    query = random((2, 1, 11, 128), 11)
    cos, sin = rotary(query, position_ids)
    rotated, _ = qwen.apply_rotary_pos_emb(query, query, cos, sin)
    return {"head_dim": 128, "rope_theta": 1000000.0, "mrope_section": [16, 24, 24], "spatial_merge_size": 2,
            "token_types": types.tolist(), "attention_mask": mask.tolist(), "image_grid_thw": grids.tolist(),
            "position_ids": position_ids.tolist(), "deltas": deltas.flatten().tolist(),
            "query": floats(query), "rotated": floats(rotated)}


def qwen2_vl_vision_axial() -> dict:
    """Qwen2-VL's vision tower: 2-D axial RoPE on the patches of one image, in merge-block order."""
    from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
    from transformers.vision_utils import get_vision_position_ids

    config = Qwen2VLVisionConfig(embed_dim=160, num_heads=2)  # head_dim 80, as Qwen2-VL's 1280 / 16
    grid = torch.tensor([[1, 4, 6]])
    position_ids = get_vision_position_ids(grid, 2)
    rotary = qwen.Qwen2VLVisionRotaryEmbedding(config)
    query = random((24, 1, 80), 12)
    cos, sin = rotary(query, position_ids)
    rotated, _ = qwen.apply_rotary_pos_emb_vision(query, query, cos, sin)
    return {"head_dim": 80, "rope_theta": float(config.rope_parameters["rope_theta"]), "grid_thw": grid.tolist(),
            "spatial_merge_size": 2, "position_ids": position_ids.tolist(), "inv_freq": floats(rotary.inv_freq),
            "query": floats(query), "rotated": floats(rotated)}


def packed_and_padded() -> dict:
    """Position ids of packed documents (DataCollatorWithFlattening), the documents Hugging Face's masks
    find in them, and the position ids of left-padded inputs in generation."""
    from types import SimpleNamespace

    from transformers import DataCollatorWithFlattening, GenerationMixin
    from transformers.masking_utils import find_packed_sequence_indices

    documents = [{"input_ids": list(range(10, 13))}, {"input_ids": [7]}, {"input_ids": list(range(20, 24))}]
    packed = DataCollatorWithFlattening(return_tensors="pt")(documents)
    found = find_packed_sequence_indices(packed["position_ids"])
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 0, 1, 1]])
    owner = SimpleNamespace(device="cpu")
    padded = GenerationMixin._prepare_position_ids_for_generation(owner, torch.zeros_like(mask),
                                                                   {"attention_mask": mask})
    return {"lengths": [3, 1, 4], "packed_position_ids": packed["position_ids"].tolist(),
            "packed_documents": found.tolist(), "attention_mask": mask.tolist(),
            "padded_position_ids": padded.tolist()}


def llama4_chunks_norm_and_temperature() -> dict:
    """Llama 4's chunked mask (left padding; packed documents), its L2 norm of queries and keys, and the
    temperature of a NoPE layer on a packed row (indexed by cache position)."""
    from transformers import Llama4TextConfig
    from transformers.masking_utils import create_chunked_causal_mask
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention, Llama4TextL2Norm

    config = Llama4TextConfig(hidden_size=8, num_attention_heads=1, num_key_value_heads=1, head_dim=8,
                              num_hidden_layers=4, attention_chunk_size=3)
    config._attn_implementation = "eager"
    masks = {}
    for name, mask, positions in (("left_padded", torch.tensor([[0, 0, 1, 1, 1, 1, 1, 1]]), None),
                                  ("packed", None, torch.tensor([[0, 1, 2, 3, 4, 0, 1, 2]]))):
        made = create_chunked_causal_mask(config, torch.zeros(1, 8, 8), mask, None, position_ids=positions,
                                          allow_is_causal_skip=False)
        masks[name] = {"attention_mask": None if mask is None else mask.tolist(),
                       "position_ids": None if positions is None else positions.tolist(),
                       "visible": (made[0, 0] == 0).tolist()}
    norm = Llama4TextL2Norm(config.rms_norm_eps)
    x = random((3, 8), 21)
    small = Llama4TextConfig(hidden_size=2, num_attention_heads=1, num_key_value_heads=1, head_dim=2,
                             num_hidden_layers=4, attn_temperature_tuning=True, floor_scale=4, attn_scale=0.1)
    small._attn_implementation = "capture"
    nope = Llama4TextAttention(small, layer_idx=3)
    with torch.no_grad():
        nope.q_proj.weight.copy_(torch.eye(2))
        nope(torch.ones(1, 19, 2), None, None, position_ids=torch.tensor([list(range(7)) + list(range(12))]))
    return {"chunk_size": 3, "masks": masks, "rms_norm_eps": config.rms_norm_eps, "x": floats(x),
            "normalized": floats(norm(x)), "use_qk_norm_in_nope_layers": False,
            "packed_lengths": [7, 12], "floor_scale": 4, "attn_scale": 0.1,
            "temperature": floats(CAPTURED["query"][0, 0, :, 0])}


def qwen_vl_videos_padding_and_interleaving() -> dict:
    """get_rope_index of Qwen2-VL and Qwen2.5-VL with a video (2 time steps) and left padding; Qwen3-VL's
    interleaved M-RoPE rotation."""
    from types import SimpleNamespace

    from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as qwen25
    from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen2
    from transformers.models.qwen3_vl import modeling_qwen3_vl as qwen3
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig

    # row 0: 2 text, a video of 2 x 4 x 6 patches (merged 2 x 2: 2 x 2 x 3 tokens), 2 text;
    # row 1: three left pads, 1 text, the same video
    types = torch.tensor([[0, 0] + [2] * 12 + [0, 0], [0, 0, 0, 0] + [2] * 12])
    mask = torch.tensor([[1] * 16, [0, 0, 0] + [1] * 13])
    grids = torch.tensor([[2, 4, 6], [2, 4, 6]])
    seconds = torch.tensor([1.25, 1.25])
    cases = {}
    for name, module, extra in (("qwen2_vl", qwen2.Qwen2VLModel, {}),
                                ("qwen2_5_vl", qwen25.Qwen2_5_VLModel, {"second_per_grid_ts": seconds})):
        vision = SimpleNamespace(spatial_merge_size=2, tokens_per_second=2)
        model = SimpleNamespace(config=SimpleNamespace(vision_config=vision))
        model.get_vision_position_ids = lambda *args, _m=module, _o=model, **kwargs: _m.get_vision_position_ids(
            _o, *args, **kwargs)
        positions, deltas = module.get_rope_index(model, torch.zeros_like(types), types, video_grid_thw=grids,
                                                  attention_mask=mask, **extra)
        cases[name] = {"position_ids": positions.tolist(), "deltas": deltas.flatten().tolist()}
    config = Qwen3VLTextConfig(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, head_dim=16,
                               rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                "mrope_section": [4, 2, 2], "mrope_interleaved": True})
    rotary = qwen3.Qwen3VLTextRotaryEmbedding(config)
    positions = torch.tensor([[[0, 3, 3, 3, 9]], [[0, 3, 3, 4, 9]], [[0, 3, 4, 5, 9]]])
    query = random((1, 1, 5, 16), 22)
    cos, sin = rotary(query, positions)
    rotated, _ = qwen3.apply_rotary_pos_emb(query, query, cos, sin)
    return {"token_types": types.tolist(), "attention_mask": mask.tolist(), "video_grid_thw": grids.tolist(),
            "spatial_merge_size": 2, "tokens_per_second": 2, "second_per_grid_ts": seconds.tolist(),
            "get_rope_index": cases,
            "qwen3_vl": {"head_dim": 16, "rope_theta": 10000.0, "mrope_section": [4, 2, 2],
                         "position_ids": positions.tolist(), "query": floats(query[0, 0]),
                         "rotated": floats(rotated[0, 0])}}


def gemma4_proportional() -> dict:
    """Gemma 4's global layers: rope_type "proportional" with partial_rotary_factor 0.25."""
    from transformers import Gemma4TextConfig
    from transformers.models.gemma4 import modeling_gemma4 as gemma4

    config = Gemma4TextConfig(hidden_size=64, num_attention_heads=1, num_key_value_heads=1, head_dim=16,
                              global_head_dim=32, num_hidden_layers=6, vocab_size=32)
    rotary = gemma4.Gemma4TextRotaryEmbedding(config)
    query = random((1, 1, 4, 32), 23)
    positions = torch.tensor([[0, 1, 7, 1000]])
    cos, sin = rotary(query, positions, "full_attention")
    rotated = gemma4.apply_rotary_pos_emb(query, cos, sin)
    return {"rope_parameters": config.rope_parameters["full_attention"], "head_dim": 32,
            "rates": floats(rotary.full_attention_inv_freq), "positions": positions[0].tolist(),
            "query": floats(query[0, 0]), "rotated": floats(rotated[0, 0])}


def gemma3_image_blocks() -> dict:
    """Gemma 3's masks with images: the tokens of one image see each other both ways (full and windowed)."""
    from transformers import Gemma3TextConfig
    from transformers.masking_utils import create_causal_mask
    from transformers.models.gemma3.modeling_gemma3 import create_masks_for_vision_model, \
        get_block_sequence_ids_for_mask

    config = Gemma3TextConfig(hidden_size=8, num_attention_heads=1, num_key_value_heads=1, head_dim=8,
                              num_hidden_layers=2, sliding_window=2)
    config._attn_implementation = "eager"
    types = torch.tensor([[0, 1, 1, 1, 0, 1, 1, 0]])
    mask = torch.tensor([[0, 1, 1, 1, 1, 1, 1, 1]])  # a left pad
    blocks = get_block_sequence_ids_for_mask(types)
    masks = create_masks_for_vision_model(config, torch.zeros(1, 8, 8), mask, None, None, blocks)
    return {"token_type_ids": types.tolist(), "attention_mask": mask.tolist(), "block_ids": blocks.tolist(),
            "sliding_window": 2,
            "visible": {name: (made[0, 0] == 0).tolist() for name, made in masks.items()}}


def main() -> None:
    torch.manual_seed(0)
    versions = {name: importlib.metadata.version(name) for name in ("transformers", "torch", "keras-hub", "keras",
                                                                     "numpy")}
    versions["python"] = platform.python_version()
    data = {
        "made_by": "tests/data/make_hf_reference.py", "versions": versions,
        "keras_backend": os.environ["KERAS_BACKEND"],
        "longrope": longrope(), "gpt_neox_partial": gpt_neox_partial(),
        "dynamic_ntk": dynamic_ntk_keeps_the_longest(), "distilbert_sinusoidal": distilbert_sinusoidal(),
        "bert": bert_position_types(), "deepseek_v3": deepseek_v3(), "gemma3": gemma3(), "llama4": llama4(),
        "gpt_oss": gpt_oss(), "keras_hub_yarn": keras_hub_yarn(),
        "qwen2_vl_mrope": qwen2_vl_mrope(), "qwen2_vl_vision_axial": qwen2_vl_vision_axial(),
        "packed_and_padded": packed_and_padded(),
        "llama4_chunks_norm_and_temperature": llama4_chunks_norm_and_temperature(),
        "qwen_vl_videos_padding_and_interleaving": qwen_vl_videos_padding_and_interleaving(),
        "gemma4_proportional": gemma4_proportional(), "gemma3_image_blocks": gemma3_image_blocks(),
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes) with {sys.executable}")


if __name__ == "__main__":
    main()
