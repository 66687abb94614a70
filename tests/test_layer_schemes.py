"""Per-layer schemes: Gemma 3's local and global layers, Llama 4's NoPE layers, gpt-oss's banded YaRN."""

import math
from types import MappingProxyType

import numpy as np
import pytest

from exact_values import exact_angle_rates
from peer_reference import FLOAT32_STEP, PEER, array
from pe_lib import rope_scaling
from pe_lib.layer_schemes import (SCHEMES, LayerPositions, LayerScheme, gemma3_scheme, llama4_scheme, repeat_pattern,
                                  resolve_positions)
from pe_lib.layers import PositionalSelfAttention
from pe_lib.methods import ATTENTION_OPTIONS, METHODS


def test_gemma3_layers_are_hugging_faces():
    gemma = PEER["gemma3"]
    scheme = gemma3_scheme(len(gemma["layer_types"]), sliding_window=gemma["sliding_window"])
    kinds = ["sliding_attention" if layer.window else "full_attention" for layer in scheme]
    assert kinds == gemma["layer_types"]
    for layer, kind in zip(scheme, kinds):
        np.testing.assert_allclose(layer.rates(gemma["head_dim"]), array(gemma["rates"][kind]),
                                   rtol=4 * FLOAT32_STEP, atol=0)
    assert [layer.window for layer in scheme[:6]] == [1024] * 5 + [None]


def test_llama4_layers_are_hugging_faces():
    llama = PEER["llama4"]
    scheme = llama4_scheme(len(llama["no_rope_layers"]))
    assert [int(layer.uses_rope) for layer in scheme] == llama["no_rope_layers"]
    nope = [layer for layer in scheme if not layer.uses_rope]
    assert all(layer.temperature == {"kind": "llama4", "floor_scale": llama["floor_scale"],
                                     "attn_scale": llama["attn_scale"]} for layer in nope)
    # Llama 3 scaling with low_freq_factor == high_freq_factor == 1: no ramp at all
    np.testing.assert_allclose(scheme[0].rates(llama["head_dim"]), array(llama["rates"]), rtol=4 * FLOAT32_STEP,
                               atol=0)
    assert scheme[0].options["layout"] == "interleaved"


def test_rope_nope_has_llama4s_nope_layers():
    """The hybrid scheme puts its NoPE layers where Hugging Face's Llama 4 configuration does."""
    llama = PEER["llama4"]
    hybrid = resolve_positions("rope_nope").layers(len(llama["no_rope_layers"]))
    assert [int(layer.uses_rope) for layer in hybrid] == llama["no_rope_layers"]
    assert {layer.method for layer in hybrid} == {"rope", "none"}
    assert resolve_positions("rope_nope") is SCHEMES["rope_nope"] and SCHEMES["rope_nope"].extrapolates
    assert resolve_positions("rope") is METHODS["rope"]
    assert not set(SCHEMES) & set(METHODS)


def test_llama4_rates_by_hand():
    # d = 128, N = 5e5, L = 8192: pair i turns 8192 N^(-2i/128) / 2 pi times; kept where that exceeds 1
    rates = llama4_scheme(4)[0].rates(128)
    plain = 500000.0 ** (-np.arange(64) / 64)
    turns = 8192 * plain / (2 * math.pi)
    np.testing.assert_array_equal(rates[turns > 1], plain[turns > 1])
    np.testing.assert_allclose(rates[turns < 1], plain[turns < 1] / 16, rtol=1e-15)


def test_gpt_oss_rates_and_factor_are_hugging_faces():
    oss = PEER["gpt_oss"]
    rope = oss["rope_parameters"]
    assert rope["truncate"] is False and rope["rope_theta"] == 150000.0 and rope["factor"] == 32.0
    layer = LayerPositions("rope_yarn", {"base": rope["rope_theta"], "scale": rope["factor"],
                                         "original_length": rope["original_max_position_embeddings"],
                                         "truncate": rope["truncate"]}, window=oss["sliding_window"],
                           sink_logit=True)
    np.testing.assert_allclose(layer.rates(oss["head_dim"]), array(oss["rates"]), rtol=4 * FLOAT32_STEP, atol=0)
    assert rope_scaling.attention_factor("rope_yarn", 32.0) == pytest.approx(oss["attention_scaling"], rel=1e-15)
    assert oss["layer_types"][:2] == ["sliding_attention", "full_attention"]


def test_a_scheme_builds_one_attention_layer_per_entry():
    scheme = repeat_pattern([LayerPositions("rope", {"base": 100.0}, window=4),
                             LayerPositions("none", temperature={"kind": "llama4", "floor_scale": 4})], 4)
    layers = [PositionalSelfAttention(heads=2, key_dim=4, **layer.attention_options()) for layer in scheme]
    x = np.random.default_rng(0).normal(size=(2, 9, 8)).astype("float32")
    for layer in layers:
        x = layer(x)
    assert x.shape == (2, 9, 8)
    assert [layer.method for layer in layers] == ["rope", "none", "rope", "none"]
    assert layers[0].positions.base == 100.0 and layers[0].window == 4
    assert layers[1].temperature["floor_scale"] == 4


def test_the_registry_lists_the_attention_options_with_their_peers():
    assert set(ATTENTION_OPTIONS) == {"layer_scheme", "temperature", "window", "sink_logit", "rotary_fraction",
                                      "mrope_section", "axial", "packed_positions", "left_padding"}
    for option in ATTENTION_OPTIONS.values():
        assert option.peers and option.reference is not None
        *where, argument = option.layer_option.split(".")
        import functools
        import inspect

        import pe_lib.layers

        assert argument in inspect.signature(functools.reduce(getattr, where, pe_lib.layers)).parameters
    assert "rope_longrope" in METHODS


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: LayerPositions("nope"), ValueError, ["method", "'nope'"]),
        (lambda: LayerPositions("rope", window=0), ValueError, ["window", "0"]),
        (lambda: LayerPositions("rope", sink_tokens=2), ValueError, ["sink_tokens=2"]),
        (lambda: LayerPositions("none", temperature={"floor_scale": 3}), ValueError, ["kind"]),
        (lambda: LayerPositions("none", sink_logit="yes"), TypeError, ["sink_logit", "'yes'"]),
        (lambda: repeat_pattern([], 3), TypeError, ["pattern"]),
        (lambda: gemma3_scheme(0), ValueError, ["num_layers", "0"]),
        (lambda: resolve_positions("nope"), ValueError, ["method", "'nope'", "'rope_nope'", "'alibi'"]),
        (lambda: LayerScheme("rope", "a scheme named as a method", (LayerPositions("rope"),)), ValueError,
         ["name", "'rope'"]),
        (lambda: LayerScheme("added", "an input method in a layer", (LayerPositions("sinusoidal"),)), ValueError,
         ["'sinusoidal'"]),
        (lambda: LayerScheme("empty", "no layers", ()), TypeError, ["pattern"]),
    ],
)
def test_bad_schemes_name_the_argument(make, error, words):
    with pytest.raises(error) as raised:
        make()
    assert all(word in str(raised.value) for word in words), str(raised.value)


# --- what a contributor could break without a test noticing (found by mutation testing) ------


def test_gemma3_1b_without_a_factor_keeps_the_global_base():
    wide = gemma3_scheme(6, factor=None)[5]
    assert (wide.method, wide.window) == ("rope", None)
    np.testing.assert_allclose(wide.rates(128), [float(rate) for rate in exact_angle_rates(128, 1_000_000)],
                               rtol=1e-15, atol=0)
    local = gemma3_scheme(6, rope_local_base_freq=5e4, factor=None)[0]
    np.testing.assert_allclose(local.rates(128), [float(rate) for rate in exact_angle_rates(128, 50_000)],
                               rtol=1e-15, atol=0)


def test_the_defaults_are_the_released_models():
    gemma, llama = PEER["gemma3"], PEER["llama4"]
    assert gemma3_scheme(6)[0].window == gemma["sliding_window"]
    assert llama4_scheme(4)[0].options["original_length"] == llama["rope_parameters"]["original_max_position_embeddings"]


def test_llama4_without_temperature_tuning_has_no_temperature():
    assert all(layer.temperature is None for layer in llama4_scheme(8, attn_temperature_tuning=False))
    assert llama4_scheme(8)[7].temperature is not None


@pytest.mark.parametrize(("build", "name"), [
    (lambda: gemma3_scheme(6, sliding_window_pattern=0), "sliding_window_pattern"),
    (lambda: llama4_scheme(4, no_rope_layer_interval=0), "no_rope_layer_interval"),
    (lambda: repeat_pattern([LayerPositions("rope")], 0), "num_layers"),
])
def test_a_count_below_one_is_refused_by_name(build, name):
    with pytest.raises(ValueError, match=rf"^{name} must be >= 1, got 0$"):
        build()


def test_a_pattern_of_one_repeats_itself():
    assert [layer.window for layer in gemma3_scheme(3, sliding_window_pattern=1)] == [None] * 3
    assert [layer.uses_rope for layer in llama4_scheme(3, no_rope_layer_interval=1)] == [False] * 3


def test_a_layer_scheme_keeps_its_pattern_and_refuses_input_methods():
    scheme = LayerScheme("two_kinds", "RoPE then NoPE", [LayerPositions("rope"), LayerPositions("none")])
    assert scheme.pattern == (LayerPositions("rope"), LayerPositions("none"))
    assert [layer.method for layer in scheme.layers(3)] == ["rope", "none", "rope"]
    with pytest.raises(ValueError, match=r"^a layer's method must act in the attention, got 'learned' "
                                         r"\(an input method is added once, before the first layer\)$"):
        LayerScheme("tables", "learned", (LayerPositions("learned"),))


def test_an_unknown_name_lists_the_methods_and_schemes():
    with pytest.raises(ValueError, match=r"'sinusoidal', 'learned', 'rope'.*\(registry methods\) or 'rope_nope'"):
        resolve_positions("nope")


def test_attention_options_default_the_base():
    assert LayerPositions("alibi").attention_options()["base"] == 10000.0


def test_a_layer_keeps_its_own_copies_of_its_options():
    options, heat = {"base": 10000.0}, {"kind": "llama4", "floor_scale": 8192, "attn_scale": 0.1}
    rope, nope = LayerPositions("rope", options), LayerPositions("none", temperature=heat)
    options["base"], heat["attn_scale"] = 5.0, 1.0  # the caller's dicts change afterwards
    assert rope.options == {"base": 10000.0} and nope.temperature["attn_scale"] == 0.1
    frozen = LayerPositions("rope", MappingProxyType({"base": 10000.0}), temperature=MappingProxyType(
        {"kind": "llama4", "floor_scale": 8192, "attn_scale": 0.1}))
    assert type(frozen.options) is dict and type(frozen.temperature) is dict


def test_chunks_of_one_token_and_windows_of_one_key_are_allowed():
    assert (LayerPositions("rope", chunk_size=1).chunk_size, LayerPositions("rope", window=1).window) == (1, 1)
    with pytest.raises(ValueError, match=r"^chunk_size must be >= 1, got 0$"):
        LayerPositions("rope", chunk_size=0)
    with pytest.raises(ValueError, match=r"^window must be >= 1, got 0$"):
        LayerPositions("rope", window=0)


def test_dynamic_rates_without_a_length_are_those_at_the_trained_length():
    # transformers' dynamic NTK leaves the rates alone up to max_position_embeddings
    layer = LayerPositions("rope_dynamic", {"base": 10000.0, "scale": 2.0, "original_length": 4096})
    np.testing.assert_allclose(layer.rates(128), [float(rate) for rate in exact_angle_rates(128, 10_000)],
                               rtol=1e-15, atol=0)
    assert layer.rates(128).tolist() == layer.rates(128, length=4096).tolist()
