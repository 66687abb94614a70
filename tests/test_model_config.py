"""Reading a released model's positions from its configuration, against transformers' values and exact ones.

Independent references: the values transformers 5.24 computed for the same
configurations (``tests/data/hf_reference.json``, float32, so within 4 float32
steps of the exact rates), the formulas of ``modeling_rope_utils`` evaluated
in mpmath at 40 digits, and counts by hand.
"""

import json
import math
import re
from pathlib import Path

import mpmath
import numpy as np
import pytest

from exact_values import exact_alibi_slopes, exact_angle_rates
from float_checks import TRANSCENDENTAL_ULP, ulp_errors
from peer_reference import FLOAT32_STEP, PEER, array
from pe_lib.alibi import alibi_slopes
from pe_lib.layer_schemes import LayerPositions
from pe_lib.model_config import read_config

CONFIGS = Path(__file__).parent / "data" / "model_configs"
FAMILIES = sorted(path.stem for path in CONFIGS.glob("*.json"))
PEER_RTOL = 4 * FLOAT32_STEP  # float32 pow, reciprocal and division: a few roundings of 2^-24 each


def load(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def model(name: str):
    return read_config(CONFIGS / f"{name}.json")


def exact(values) -> np.ndarray:
    return np.array([float(value) for value in values])


def whole(words: str) -> str:
    """A pattern matching ``words`` as whole words, not inside a longer name."""
    return rf"(?<!\w){re.escape(words)}(?!\w)"


def test_at_least_twelve_families_each_described():
    readme = (CONFIGS / "README.md").read_text()
    assert len(FAMILIES) >= 12
    assert all(f"`{name}.json`" in readme for name in FAMILIES)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_configuration_reads_and_builds(name):
    positions = model(name)
    assert len(positions.layers) == (load(name).get("text_config") or load(name)).get(
        "num_hidden_layers", len(positions.layers))
    for index, layer in enumerate(positions.layers):
        rates = positions.rates(index)
        assert (rates is None) == (not layer.uses_rope)
        if rates is not None:
            assert np.all(np.isfinite(rates) & (rates > 0))


def test_a_path_and_a_dict_read_alike(tmp_path):
    assert read_config(load("gemma3_27b")) == model("gemma3_27b")
    named = {**load("gemma3_1b"), "_name_or_path": "google/gemma-3-1b-it \u2014 \u00e9t\u00e9"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(named, ensure_ascii=False), encoding="utf-8")  # as transformers writes it
    assert read_config(path) == read_config(named) == model("gemma3_1b")
    with pytest.raises(TypeError, match="config must be a path"):
        read_config(42)


# --- Gemma 3 ------------------------------------------------------------------------------


def test_gemma3_as_transformers_5_saves_it_is_hugging_faces():
    gemma = PEER["gemma3"]
    positions = model("gemma3_transformers5")
    kinds = ["sliding_attention" if layer.window else "full_attention" for layer in positions.layers]
    assert kinds == gemma["layer_types"]
    for index, kind in enumerate(kinds):
        np.testing.assert_allclose(positions.rates(index), array(gemma["rates"][kind]), rtol=PEER_RTOL, atol=0)
    assert {layer.window for layer in positions.layers} == {gemma["sliding_window"], None}


def test_gemma3_27b_from_its_transformers_4_keys():
    gemma = PEER["gemma3"]
    positions = model("gemma3_27b")
    global_layers = [index for index, layer in enumerate(positions.layers) if layer.window is None]
    assert global_layers == list(range(5, 62, 6)) and len(global_layers) == 10  # 62 layers: 10 global
    assert all(layer.window == 1024 for index, layer in enumerate(positions.layers) if index not in global_layers)
    # the same head width and parameters as the recorded 12-layer model
    np.testing.assert_allclose(positions.rates(0), array(gemma["rates"]["sliding_attention"]), rtol=PEER_RTOL, atol=0)
    np.testing.assert_allclose(positions.rates(5), array(gemma["rates"]["full_attention"]), rtol=PEER_RTOL, atol=0)
    # the cache at 131072 tokens: 52 local layers keep 1024 keys, 10 global keep all
    share = sum(layer.window or 131072 for layer in positions.layers) / (62 * 131072)
    assert share == (52 * 1024 + 10 * 131072) / (62 * 131072) and round(100 * share, 1) == 16.8


def test_gemma3_1b_without_a_factor_keeps_the_global_base():
    positions = model("gemma3_1b")
    local, wide = positions.layers[0], positions.layers[5]
    assert (local.window, wide.window) == (512, None)
    np.testing.assert_allclose(positions.rates(5), exact(exact_angle_rates(256, 1_000_000)), rtol=1e-15, atol=0)
    np.testing.assert_allclose(positions.rates(0), exact(exact_angle_rates(256, 10_000)), rtol=1e-15, atol=0)
    assert wide.method == "rope" and wide.attention_factor == 1.0


def test_gemma2_alternates_from_a_sliding_first_layer():
    positions = model("gemma2_9b")
    assert [layer.window for layer in positions.layers[:4]] == [4096, None, 4096, None]
    assert positions.head_dim == 256 and len(positions.layers) == 42


# --- Llama ------------------------------------------------------------------------------


def test_llama4_scout_layers_are_hugging_faces():
    llama = PEER["llama4"]
    positions = model("llama4_scout")
    assert [int(layer.uses_rope) for layer in positions.layers[:8]] == llama["no_rope_layers"]
    assert sum(not layer.uses_rope for layer in positions.layers) == 12
    for layer in positions.layers:
        if layer.uses_rope:
            assert (layer.chunk_size, layer.qk_norm, layer.temperature) == (8192, True, None)
            assert layer.options["layout"] == "interleaved"
        else:
            assert (layer.chunk_size, layer.qk_norm) == (None, False)
            # indexed by the step in the row, as Llama4TextAttention indexes it
            assert layer.temperature == {"kind": "llama4", "floor_scale": llama["floor_scale"],
                                         "attn_scale": llama["attn_scale"], "index": "cache_position"}
    np.testing.assert_allclose(positions.rates(0), array(llama["rates"]), rtol=PEER_RTOL, atol=0)
    options = positions.layers[0].attention_options()
    assert (options["chunk_size"], options["qk_norm"]) == (8192, True)
    assert "chunk_size" not in positions.layers[3].attention_options()


def test_llama4_without_temperature_tuning_or_norm_or_chunks():
    text = load("llama4_scout")["text_config"]
    positions = read_config({**text, "attn_temperature_tuning": False, "use_qk_norm": False,
                             "attention_chunk_size": None, "no_rope_layers": [1, 0] * 24})
    assert all(layer.temperature is None for layer in positions.layers)
    assert all(layer.chunk_size is None and not layer.qk_norm for layer in positions.layers)
    assert [layer.uses_rope for layer in positions.layers[:4]] == [True, False, True, False]


def exact_llama3_rates(depth, base, scale, original, low, high):
    """transformers' _compute_llama3_parameters, in mpmath."""
    rates = []
    with mpmath.workdps(40):
        for rate in exact_angle_rates(depth, base):
            wavelength = 2 * mpmath.pi / rate
            if wavelength < mpmath.mpf(original) / high:
                rates.append(rate)
            elif wavelength > mpmath.mpf(original) / low:
                rates.append(rate / scale)
            else:
                smooth = (mpmath.mpf(original) / wavelength - low) / (high - low)
                rates.append((1 - smooth) * rate / scale + smooth * rate)
    return exact(rates)


def test_llama31_rates_are_transformers_llama3_formula():
    positions = model("llama3_1_8b")
    expected = exact_llama3_rates(128, 500000, 8, 8192, 1, 4)
    np.testing.assert_allclose(positions.rates(0), expected, rtol=1e-14, atol=0)
    # kept: the plain rate, to NumPy's power (its last bits vary by processor)
    kept = ulp_errors(positions.rates(0), exact_angle_rates(128, 500000)) <= TRANSCENDENTAL_ULP
    # by hand: a pair keeps its rate while its wavelength 2 pi N^(2i/d) is under 8192 / 4 = 2048
    assert np.flatnonzero(kept).tolist() == [i for i in range(64) if 2 * math.pi * 500000 ** (i / 64) < 2048]


def test_llama2_and_code_llama_differ_by_their_base_only():
    llama2, code = model("llama2_7b"), model("code_llama_7b")
    np.testing.assert_allclose(llama2.rates(0), exact(exact_angle_rates(128, 10_000)), rtol=1e-15, atol=0)
    np.testing.assert_allclose(code.rates(0), exact(exact_angle_rates(128, 1_000_000)), rtol=1e-15, atol=0)
    assert (llama2.max_length, code.max_length) == (4096, 16384)


# --- YaRN: gpt-oss, DeepSeek-V3, Qwen2.5 ---------------------------------------------------


def exact_yarn(depth, base, scale, original, beta_fast=32, beta_slow=1, truncate=True):
    """transformers' _compute_yarn_parameters in mpmath: rates and attention factor."""
    with mpmath.workdps(40):
        def dim(turns):
            return depth * mpmath.log(original / (turns * 2 * mpmath.pi)) / (2 * mpmath.log(base))
        low, high = dim(beta_fast), dim(beta_slow)
        if truncate:
            low, high = mpmath.floor(low), mpmath.ceil(high)
        low, high = max(low, 0), min(high, depth - 1)
        rates = []
        for i, rate in enumerate(exact_angle_rates(depth, base)):
            kept = 1 - min(max((i - low) / (high - low), 0), 1)
            rates.append(rate / scale * (1 - kept) + rate * kept)
        return exact(rates), float(1 + mpmath.mpf(1) / 10 * mpmath.log(scale))


def test_gpt_oss_is_hugging_faces():
    oss = PEER["gpt_oss"]
    positions = model("gpt_oss_20b")
    assert ["sliding_attention" if layer.window else "full_attention"
            for layer in positions.layers[:4]] == oss["layer_types"]
    assert all(layer.sink_logit for layer in positions.layers)  # every layer, not alternate ones
    assert {layer.window for layer in positions.layers} == {oss["sliding_window"], None}
    np.testing.assert_allclose(positions.rates(0), array(oss["rates"]), rtol=PEER_RTOL, atol=0)
    rates, factor = exact_yarn(64, 150000, 32, 4096, truncate=False)
    np.testing.assert_allclose(positions.rates(1), rates, rtol=1e-14, atol=0)
    assert math.isclose(positions.layers[0].attention_factor, oss["attention_scaling"], rel_tol=1e-15)
    assert math.isclose(positions.layers[0].attention_factor, factor, rel_tol=1e-15)


def test_gpt_oss_reads_alike_from_transformers_5_rope_parameters():
    config = load("gpt_oss_20b")
    del config["rope_scaling"], config["rope_theta"]
    config["rope_parameters"] = PEER["gpt_oss"]["rope_parameters"]
    assert read_config(config) == model("gpt_oss_20b")


def test_deepseek_v3_is_hugging_faces():
    deepseek = PEER["deepseek_v3"]
    positions = model("deepseek_v3")
    assert (positions.head_dim, positions.rope_head_dim) == (deepseek["qk_head_dim"], deepseek["rope_head_dim"])
    assert positions.layers[0].options["layout"] == "interleaved" and deepseek["rope_interleave"]
    np.testing.assert_allclose(positions.rates(0), array(deepseek["rates"]), rtol=PEER_RTOL, atol=0)
    assert positions.layers[0].attention_factor == deepseek["rotary_attention_scaling"] == 1.0
    with mpmath.workdps(40):
        square = float((1 + mpmath.log(40) / 10) ** 2)
    assert math.isclose(positions.softmax_factor, square, rel_tol=1e-15)
    assert abs(positions.softmax_factor - deepseek["softmax_scale_times_sqrt_head_dim"]) < 1e-6


def test_yarn_without_a_factor_takes_the_ratio_of_the_lengths():
    config = load("gpt_oss_20b")
    del config["rope_scaling"]["factor"]  # 131072 / 4096 = 32, as transformers takes it
    assert read_config(config).rates(0).tolist() == model("gpt_oss_20b").rates(0).tolist()
    assert read_config(config).layers[0].attention_factor == model("gpt_oss_20b").layers[0].attention_factor
    config = load("deepseek_v3")  # whose attention reads the factor itself
    del config["rope_scaling"]["factor"]
    with pytest.raises(ValueError, match="lacks factor"):
        read_config(config)


def test_a_lone_mscale_is_ignored_as_transformers_ignores_it():
    config = load("deepseek_v3")
    del config["rope_scaling"]["mscale_all_dim"]
    layer = read_config(config).layers[0]
    assert "mscale" not in layer.options
    assert math.isclose(layer.attention_factor, 1 + 0.1 * math.log(40), rel_tol=1e-15)


def test_qwen25_yarn_is_static_and_scales_every_length():
    plain, yarn = model("qwen2_5_7b"), model("qwen2_5_7b_yarn")
    assert all(layer.window is None for layer in plain.layers)  # use_sliding_window is false
    np.testing.assert_allclose(plain.rates(0), exact(exact_angle_rates(128, 1_000_000)), rtol=1e-15, atol=0)
    rates, factor = exact_yarn(128, 1_000_000, 4, 32768)
    np.testing.assert_allclose(yarn.rates(0), rates, rtol=1e-14, atol=0)
    assert math.isclose(yarn.layers[0].attention_factor, factor, rel_tol=1e-15) and round(factor, 3) == 1.139
    assert yarn.layers[0].method not in ("rope_dynamic", "rope_longrope")  # no length switches it off


def test_qwen2_vl_is_mrope_over_plain_rates():
    qwen = PEER["qwen2_vl_mrope"]
    positions = model("qwen2_vl_7b")
    layer = positions.layers[0]
    assert (layer.method, layer.options["mrope_section"], layer.options["base"]) == (
        "rope", qwen["mrope_section"], qwen["rope_theta"])
    assert positions.head_dim == qwen["head_dim"]


# --- LongRoPE and partial rotary -------------------------------------------------------------


def test_phi35_longrope_is_hugging_faces():
    phi = PEER["longrope"]
    positions = model("phi3_5_mini")
    layer = positions.layers[0]
    assert positions.rope_head_dim == phi["head_dim"]
    np.testing.assert_allclose(positions.rates(0), array(phi["short_rates"]), rtol=PEER_RTOL, atol=0)
    np.testing.assert_allclose(positions.rates(0, length=4096), array(phi["short_rates"]), rtol=PEER_RTOL, atol=0)
    np.testing.assert_allclose(positions.rates(0, length=4097), array(phi["long_rates"]), rtol=PEER_RTOL, atol=0)
    # the attention factor from max_position_embeddings / original_max_position_embeddings = 32
    with mpmath.workdps(40):
        factor = float(mpmath.sqrt(mpmath.mpf(17) / 12))
    assert math.isclose(layer.attention_factor, factor, rel_tol=1e-15)
    assert abs(layer.attention_factor - phi["attention_scaling"]) < 1e-12


def test_longrope_with_a_factor_takes_it_over_the_lengths():
    config = load("phi3_5_mini")
    config["rope_scaling"]["factor"] = 8.0
    layer = read_config(config).layers[0]
    assert math.isclose(layer.attention_factor, math.sqrt(1 + math.log(8) / math.log(4096)), rel_tol=1e-15)
    config["rope_scaling"]["attention_factor"] = 1.5
    assert read_config(config).layers[0].attention_factor == 1.5


def test_phi3_mini_4k_has_no_scaling_and_a_window():
    positions = model("phi3_mini_4k")
    assert {(layer.method, layer.window) for layer in positions.layers} == {("rope", 2047)}
    config = load("phi3_mini_4k")
    config["rope_scaling"] = {"type": "su", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48}
    assert read_config(config).layers[0].method == "rope_longrope"  # LongRoPE's first name


def test_partial_rotary_rotates_the_configured_share():
    phi2, neox = model("phi2"), model("gpt_neox_20b")
    np.testing.assert_allclose(phi2.rates(0), exact(exact_angle_rates(32, 10_000)), rtol=1e-15, atol=0)
    np.testing.assert_allclose(neox.rates(0), exact(exact_angle_rates(24, 10_000)), rtol=1e-15, atol=0)
    for case in PEER["gpt_neox_partial"]:  # an odd head: int(81 * 0.5) = 40 rotated, as GPT-NeoX's attention
        config = {**load("gpt_neox_20b"), "hidden_size": case["width"], "num_attention_heads": 1,
                  "rotary_pct": case["fraction"]}
        assert 2 * len(read_config(config).rates(0)) == case["rotary_ndims"]


def test_dynamic_ntk_follows_the_length_past_max_position_embeddings():
    ntk = PEER["dynamic_ntk"]
    config = {**load("llama2_7b"), "max_position_embeddings": ntk["original_length"],
              "rope_scaling": {"rope_type": "dynamic", "factor": ntk["scale"]}}
    positions = read_config(config)
    depth = ntk["head_dim"]
    np.testing.assert_allclose(positions.rates(0, length=4096), exact(exact_angle_rates(depth)), rtol=1e-15, atol=0)
    with mpmath.workdps(40):  # n = 8192: base 10^4 (2 * 8192 / 4096 - 1)^(d / (d - 2))
        base = 10_000 * mpmath.power(3, mpmath.mpf(depth) / (depth - 2))
    np.testing.assert_allclose(positions.rates(0, length=8192), exact(exact_angle_rates(depth, base)),
                               rtol=1e-14, atol=0)


# --- biases and tables -----------------------------------------------------------------------


def test_alibi_t5_and_learned_models():
    bloom, mpt = model("bloom_176b"), model("mpt_7b")
    assert {layer.method for layer in bloom.layers + mpt.layers} == {"alibi"}
    np.testing.assert_allclose(alibi_slopes(bloom.heads), exact(exact_alibi_slopes(112)), rtol=1e-15, atol=0)
    t5 = model("t5_base")
    assert t5.layers[0].options == {"num_buckets": 32, "max_distance": 128} and t5.heads == 12
    gpt2 = model("gpt2")
    assert (gpt2.input_method, gpt2.max_length) == ("learned", 1024)
    assert {layer.method for layer in gpt2.layers} == {"none"}
    assert model("mistral_7b_v0_1").layers[31].window == 4096
    assert model("falcon_7b").head_dim == 4544 // 71


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c["rope_scaling"].update(rope_type="ntk"), "rope_type='ntk'"),
    (lambda c: c["rope_scaling"].pop("low_freq_factor"), "low_freq_factor"),
    (lambda c: c["rope_scaling"].pop("factor"), "factor"),
    (lambda c: c.pop("rope_theta"), "rope_theta"),
    (lambda c: c.pop("model_type"), "model_type"),
    (lambda c: c.update(model_type="bert"), "model_type='bert'"),
    (lambda c: c.pop("num_attention_heads"), "num_attention_heads"),
    (lambda c: c.update(model_type="falcon", alibi=False, sliding_window=4), "sliding_window"),
    (lambda c: c.update(layer_types=["full_attention"] * 3), "layer_types"),
])
def test_a_missing_key_or_unknown_value_is_named(change, message):
    config = load("llama3_1_8b")
    change(config)
    with pytest.raises(ValueError, match=whole(message)):
        read_config(config)


def test_missing_keys_of_other_families_are_named():
    for name, edit, message in (
            ("phi3_5_mini", lambda c: c["rope_scaling"].pop("short_factor"), "short_factor"),
            ("gemma3_1b", lambda c: c.pop("rope_local_base_freq"), "rope_local_base_freq"),
            ("gemma3_1b", lambda c: c.pop("sliding_window_pattern"), "sliding_window_pattern"),
            ("qwen2_5_7b_yarn", lambda c: c["rope_scaling"].update(type="yarn2"), "yarn2"),
            ("gpt_neox_20b", lambda c: c.pop("rotary_pct"), "rotary_pct"),
            ("t5_base", lambda c: c.pop("relative_attention_max_distance"), "relative_attention_max_distance"),
            ("mpt_7b", lambda c: c["attn_config"].update(alibi_bias_max=16), "alibi_bias_max"),
            ("phi2", lambda c: c.pop("partial_rotary_factor"), "partial_rotary_factor"),
            ("qwen2_5_7b", lambda c: c.update(use_sliding_window=True, max_window_layers=None),
             "max_window_layers"),
            ("qwen2_5_7b_yarn", lambda c: (c["rope_scaling"].pop("original_max_position_embeddings"),
                                           c.pop("max_position_embeddings")), "max_position_embeddings"),
    ):
        config = load(name)
        edit(config)
        with pytest.raises(ValueError, match=whole(message)):
            read_config(config)
    text = load("llama4_scout")["text_config"]
    for key in ("no_rope_layer_interval", "attn_temperature_tuning", "floor_scale", "use_qk_norm",
                "attention_chunk_size"):
        with pytest.raises(ValueError, match=whole(key)):
            read_config({name: value for name, value in text.items() if name != key})
    # absent, Llama4TextConfig would chunk by 8192; null is how a configuration says no chunks
    with pytest.raises(ValueError, match=r"^the configuration lacks attention_chunk_size \(model_type='llama4_text'\); "
                                         r"null for none$"):
        read_config({name: value for name, value in text.items() if name != "attention_chunk_size"})
    with pytest.raises(ValueError, match=whole("attention_chunk_size")):  # flat, under the wrapper's name
        read_config({**{name: value for name, value in text.items() if name != "attention_chunk_size"},
                     "model_type": "llama4"})
    config = load("gemma3_transformers5")
    del config["rope_parameters"]["full_attention"]
    with pytest.raises(ValueError, match="full_attention"):
        read_config(config)


def test_chunks_and_norms_belong_to_rope_layers():
    with pytest.raises(ValueError, match="chunk_size"):
        LayerPositions("none", chunk_size=8192)
    with pytest.raises(ValueError, match="qk_norm"):
        LayerPositions("alibi", qk_norm=True)
    with pytest.raises(TypeError, match="qk_norm"):
        LayerPositions("rope", qk_norm=1)
    with pytest.raises(ValueError, match="chunk_size"):
        LayerPositions("rope", chunk_size=0)


# --- what a contributor could break without a test noticing (found by mutation testing) ------


def test_gemmas_query_pre_attn_scalar_sets_the_softmax_scale_as_its_attention_does():
    # Gemma2Attention and Gemma3Attention: self.scaling = config.query_pre_attn_scalar**-0.5
    for name, scalar in (("gemma3_27b", 168), ("gemma3_1b", 256), ("gemma2_9b", 256)):
        config = load(name)
        assert config.get("text_config", config)["query_pre_attn_scalar"] == scalar
        positions = model(name)
        assert math.isclose(positions.softmax_factor / math.sqrt(positions.head_dim), scalar**-0.5, rel_tol=1e-15)
    assert math.isclose(model("gemma3_27b").softmax_factor, math.sqrt(128 / 168), rel_tol=1e-15)
    assert model("gemma3_1b").softmax_factor == model("gemma2_9b").softmax_factor == 1.0  # 256 = head_dim
    # absent, the configuration classes' default, 256 (Gemma3TextConfig, Gemma2Config)
    assert "query_pre_attn_scalar" not in load("gemma3_transformers5")
    assert math.isclose(model("gemma3_transformers5").softmax_factor, math.sqrt(128 / 256), rel_tol=1e-15)
    for bad in (0, -168, "168", True, None):
        config = load("gemma3_27b")
        config["text_config"]["query_pre_attn_scalar"] = bad
        with pytest.raises(ValueError, match=rf"^query_pre_attn_scalar must be a positive number, got {re.escape(repr(bad))} "
                                             r"\(model_type='gemma3_text'\)$"):
            read_config(config)
    config = load("llama3_1_8b")  # another model's key is not read
    config["query_pre_attn_scalar"] = 168
    assert read_config(config).softmax_factor == 1.0


def test_only_deepseeks_yarn_and_gemmas_scalar_scale_the_softmax():
    for name in FAMILIES:
        if name != "deepseek_v3" and not name.startswith("gemma"):
            assert model(name).softmax_factor == 1.0, name
    config = load("deepseek_v3")
    del config["rope_scaling"]["mscale_all_dim"]  # DeepseekV3Attention: mscale_all_dim absent is 0
    assert read_config(config).softmax_factor == 1.0
    config["rope_scaling"] = None
    assert read_config(config).softmax_factor == 1.0
    config = load("deepseek_v3")
    config["rope_scaling"]["rope_type"] = config["rope_scaling"].pop("type")
    assert read_config(config).softmax_factor == model("deepseek_v3").softmax_factor
    del config["rope_scaling"]["factor"]
    with pytest.raises(ValueError, match=r"^the configuration lacks factor \(rope_scaling of model_type='deepseek_v3', "
                                         r"whose attention scales its softmax by it\)$"):
        read_config(config)
    for default in ({"type": "default"}, {"rope_type": "default"}, {}):  # DeepseekV3Attention: only a scaled RoPE
        config = load("deepseek_v3")
        config["rope_scaling"] = {**default, "factor": 40.0, "mscale_all_dim": 1.0}
        assert read_config(config).softmax_factor == 1.0
    config = load("gpt_oss_20b")  # another model's YaRN leaves the softmax alone, mscale_all_dim or not
    config["rope_scaling"].update(mscale=1.0, mscale_all_dim=1.0)
    assert read_config(config).softmax_factor == 1.0


def test_no_rope_layers_of_the_wrong_length_or_values_are_refused():
    text = load("llama4_scout")["text_config"]
    for flags in ([1, 1, 1, 0] * 11, [1, 1, 2, 0] * 12):
        with pytest.raises(ValueError, match=r"^no_rope_layers must hold a 0 or 1 per layer \(48\)"):
            read_config({**text, "no_rope_layers": flags})


def test_phi3_reads_its_old_yarn_name_as_longrope():
    config = load("phi3_5_mini")
    config["rope_scaling"]["type"] = "yarn"  # Phi3Config renames "su" and "yarn" to "longrope"
    assert read_config(config) == model("phi3_5_mini")
    config = load("llama3_1_8b")
    config["rope_scaling"] = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 8192}
    assert read_config(config).layers[0].method == "rope_yarn"  # elsewhere YaRN stays YaRN


def test_options_hold_what_the_configuration_sets_and_nothing_more():
    assert model("llama2_7b").layers[0].options == {"base": 10000.0}
    assert model("phi2").layers[0].options == {"base": 10000.0, "rotary_fraction": 0.4}
    flat = {**load("llama4_scout")["text_config"], "model_type": "llama4"}
    assert read_config(flat).layers == model("llama4_scout").layers  # interleaved pairs under either name


def test_transformers_5_parameters_without_a_base_are_refused():
    config = load("gemma3_transformers5")
    del config["rope_parameters"]["sliding_attention"]["rope_theta"]
    with pytest.raises(ValueError, match=r"^the configuration lacks rope_theta \(model_type='gemma3_text'\)"):
        read_config(config)
    config = load("llama2_7b")
    config["rope_scaling"] = {"rope_type": "ntk"}
    with pytest.raises(ValueError, match=r"known: 'default', 'linear', 'dynamic', 'yarn', 'llama3', 'longrope'"):
        read_config(config)


def test_llama4_scouts_layers_build_in_keras_with_chunks_and_norms():
    from pe_lib.layers import PositionalSelfAttention

    positions = model("llama4_scout")
    rope, nope = (PositionalSelfAttention(heads=2, key_dim=positions.head_dim, **positions.layers[index]
                                          .attention_options()) for index in (0, 3))
    assert (rope.method, rope.chunk_size, rope.qk_norm, rope.temperature) == ("rope_llama3", 8192, True, None)
    assert (nope.method, nope.chunk_size, nope.qk_norm) == ("none", None, False)
    assert nope.temperature["kind"] == "llama4" and nope.temperature["floor_scale"] == 8192


def test_shapes_and_lengths_are_the_published_ones():
    # (model_type, heads, head_dim, max_length) by hand from each file: width / heads
    expected = {"gpt2": ("gpt2", 12, 768 // 12, 1024), "t5_base": ("t5", 12, 64, None),
                "bloom_176b": ("bloom", 112, 14336 // 112, 2048), "mpt_7b": ("mpt", 32, 4096 // 32, 2048),
                "falcon_7b": ("falcon", 71, 4544 // 71, 2048), "llama3_1_8b": ("llama", 32, 4096 // 32, 131072)}
    for name, values in expected.items():
        positions = model(name)
        assert (positions.model_type, positions.heads, positions.head_dim, positions.max_length) == values, name
    for name in FAMILIES:  # a whole number of features, never a float that equals one
        assert type(model(name).head_dim) is int, name


def test_either_name_of_a_renamed_key_is_read():
    bloom = load("bloom_176b")  # BloomConfig's attribute_map and its n_embed of old
    renamed = {"model_type": "bloom", "num_attention_heads": bloom["n_head"], "num_hidden_layers": bloom["n_layer"],
               "n_embed": bloom["hidden_size"], "seq_length": bloom["seq_length"]}
    assert read_config(renamed) == model("bloom_176b")
    neox = load("gpt_neox_20b")  # GPTNeoXConfig's later names
    base, fraction = neox.pop("rotary_emb_base"), neox.pop("rotary_pct")
    renamed = {**neox, "rope_theta": base, "partial_rotary_factor": fraction}
    assert read_config(renamed) == model("gpt_neox_20b")
    with pytest.raises(ValueError, match=r"^the configuration lacks rotary_pct or partial_rotary_factor "
                                         r"\(model_type='gpt_neox'\)$"):
        read_config({name: value for name, value in renamed.items() if name != "partial_rotary_factor"})


def test_layer_patterns_are_derived_where_layer_types_is_absent():
    oss = load("gpt_oss_20b")  # GptOssConfig's rule gives the published alternation
    del oss["layer_types"]
    assert read_config(oss) == model("gpt_oss_20b")
    flat = {**load("gemma3_27b")["text_config"], "model_type": "gemma3"}  # Gemma 3 without its wrapper
    assert read_config(flat).layers == model("gemma3_27b").layers
    qwen = {**load("qwen2_5_7b"), "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 21}
    # Qwen2Config: the first max_window_layers layers full, the other 28 - 21 = 7 in the window
    assert [layer.window for layer in read_config(qwen).layers] == [None] * 21 + [4096] * 7
    for off in ({"use_sliding_window": True, "sliding_window": None}, {"use_sliding_window": False},
                {"use_sliding_window": None}):  # a window needs both; use_sliding_window defaults to false
        assert all(layer.window is None for layer in read_config({**qwen, **off}).layers), off
    unset = {name: value for name, value in qwen.items() if name != "use_sliding_window"}
    assert all(layer.window is None for layer in read_config(unset).layers)
    mistral = load("mistral_7b_v0_1")  # Mistral 7B from v0.2 on has no window; Mixtral reads as Mistral
    assert all(layer.window is None for layer in read_config({**mistral, "sliding_window": None}).layers)
    assert [layer.window for layer in read_config({**mistral, "model_type": "mixtral"}).layers] == [4096] * 32
    with pytest.raises(ValueError, match=r"^sliding_window is set but model_type='llama' has no rule for which "
                                         r"layers use it; give layer_types$"):
        read_config({**load("llama2_7b"), "sliding_window": 4096})


BASES = {"full_attention": 1e4, "sliding_attention": 1e5, "chunked_attention": 1e6}


def by_layer_type(config: dict) -> dict:
    """``config`` with transformers 5 ``rope_parameters`` keyed by layer type, one base each."""
    config = {name: value for name, value in config.items() if name not in ("rope_scaling", "rope_theta")}
    return {**config, "rope_parameters": {kind: {"rope_type": "default", "rope_theta": base}
                                          for kind, base in BASES.items()}}


def test_parameters_by_layer_type_reach_each_kind_of_layer():
    full, window, chunk = BASES["full_attention"], BASES["sliding_attention"], BASES["chunked_attention"]
    llama4 = load("llama4_scout")["text_config"]
    for config, bases in (
            (load("gemma2_9b"), [window, full] * 21),
            ({**load("qwen2_5_7b"), "use_sliding_window": True, "max_window_layers": 21}, [full] * 21 + [window] * 7),
            (load("qwen2_5_7b"), [full] * 28),
            ({**load("mistral_7b_v0_1"), "sliding_window": None}, [full] * 32),
            (load("llama2_7b"), [full] * 32),
            (llama4, [chunk, chunk, chunk, None] * 12),
            ({**llama4, "attention_chunk_size": None}, [full, full, full, None] * 12),
    ):
        positions = read_config(by_layer_type(config))
        assert [layer.options.get("base") for layer in positions.layers] == bases, config["model_type"]


def test_llama4_layer_types_decide_chunks_and_windows():
    text = load("llama4_scout")["text_config"]
    # transformers' Llama 4 chunks only the layers layer_types calls chunked
    for kinds, window in ((["full_attention"] * 48, None), (["sliding_attention"] * 48, 512)):
        layers = read_config({**text, "layer_types": kinds, "sliding_window": window}).layers
        assert all(layer.chunk_size is None for layer in layers)
        assert {layer.window for layer in layers} == {window}  # NoPE layers keep their window too
        assert sum(not layer.uses_rope for layer in layers) == 12


def test_gemma3_reads_the_old_type_key_as_rope_type():
    text = load("gemma3_27b")["text_config"]
    old = {**text, "rope_scaling": {"type": "linear", "factor": 8.0}}  # transformers 4's first name for the key
    positions = read_config(old)
    assert positions.layers == model("gemma3_27b").layers
    assert positions.layers[5].method == "rope_pi" and positions.layers[5].options["scale"] == 8.0


def test_partial_rotary_of_any_family_and_deepseeks_interleave():
    phi4_like = {**load("phi3_mini_4k"), "partial_rotary_factor": 0.75}  # Phi-4-mini rotates 3/4 of its head
    # head 3072 / 32 = 96 features, int(96 * 0.75) = 72 of them rotated
    np.testing.assert_allclose(read_config(phi4_like).rates(0), exact(exact_angle_rates(72, 10_000)),
                               rtol=1e-15, atol=0)
    plain = read_config({**load("deepseek_v3"), "rope_interleave": False})  # DeepseekV3Attention's switch
    assert "layout" not in plain.layers[0].options
    assert plain.rates(0).tolist() == model("deepseek_v3").rates(0).tolist()


def test_yarn_and_longrope_lengths_and_options_as_transformers_reads_them():
    qwen = load("qwen2_5_7b_yarn")  # YaRN's original length falls back to max_position_embeddings (32768)
    del qwen["rope_scaling"]["original_max_position_embeddings"]
    assert read_config(qwen) == model("qwen2_5_7b_yarn")
    llama = {**load("llama3_1_8b"), "original_max_position_embeddings": 4096}  # only Phi-3 reads the top level
    assert read_config(llama) == model("llama3_1_8b")
    qwen["rope_scaling"]["attention_factor"] = 1.25  # YaRN's factor, when given, is taken as it is
    assert read_config(qwen).layers[0].attention_factor == 1.25
    oss = load("gpt_oss_20b")
    oss["rope_scaling"].update(truncate=True, beta_fast=16.0, beta_slow=2.0)
    rates, _ = exact_yarn(64, 150000, 32, 4096, beta_fast=16, beta_slow=2, truncate=True)
    np.testing.assert_allclose(read_config(oss).rates(1), rates, rtol=1e-14, atol=0)
    phi = load("phi3_5_mini")
    with pytest.raises(ValueError, match=r"^max_position_embeddings=2048 is below "
                                         r"original_max_position_embeddings=4096$"):
        read_config({**phi, "max_position_embeddings": 2048})
    same = read_config({**phi, "max_position_embeddings": 4096}).layers[0]  # a ratio of 1: no scaling
    assert same.attention_factor == 1.0  # sqrt(1 + ln 1 / ln 4096)
    config = load("llama3_1_8b")
    del config["rope_scaling"]["factor"]
    with pytest.raises(ValueError, match=r"^the configuration lacks factor \(rope_type='llama3'\)$"):
        read_config(config)


def test_alibi_of_falcon_and_mpt_and_whole_messages():
    falcon = read_config({**load("falcon_7b"), "alibi": True})  # Falcon-RW's ALiBi
    assert {layer.method for layer in falcon.layers} == {"alibi"} and len(falcon.layers) == 32
    mpt = load("mpt_7b")
    del mpt["attn_config"]["alibi_bias_max"]  # MPTConfig's default is ALiBi's 8
    assert read_config(mpt) == model("mpt_7b")
    mpt["attn_config"]["alibi"] = False
    with pytest.raises(ValueError, match=r"^an MPT configuration without attn_config\['alibi'\] is not read here$"):
        read_config(mpt)
    with pytest.raises(ValueError, match=r"^the configuration lacks model_type$"):
        read_config({name: value for name, value in load("llama2_7b").items() if name != "model_type"})
    with pytest.raises(ValueError, match=r"^model_type='bert' is not read here; known: 'llama', 'mistral', "):
        read_config({**load("llama2_7b"), "model_type": "bert"})


def test_a_given_scale_wins_over_the_lengths():
    layer = LayerPositions("rope_yarn", {"base": 150000.0, "scale": 32.0, "original_length": 4096,
                                         "max_length": 8192})  # 8192 / 4096 would be a scale of 2
    rates, factor = exact_yarn(64, 150000, 32, 4096)
    np.testing.assert_allclose(layer.rates(64), rates, rtol=1e-14, atol=0)
    assert math.isclose(layer.attention_factor, factor, rel_tol=1e-15)
