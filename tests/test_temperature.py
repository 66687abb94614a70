"""Attention temperature: Llama 4's, log-n scaling and a constant, in NumPy and in the attention layer."""

import math

import numpy as np
import pytest

from layer_harness import CHECKS, LayerExample, to_numpy
from peer_reference import FLOAT32_STEP, PEER, array
from pe_lib.layers import PositionalSelfAttention
from pe_lib.rope_scaling import yarn_softmax_factor
from pe_lib.temperature import query_temperature


def test_llama4_by_hand():
    # 1 + 0.1 ln(1 + floor((m + 1) / 8192))
    values = query_temperature("llama4", [0, 8190, 8191, 16382, 16383, 8192 * 9 - 1])
    expected = [1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(3),
                1 + 0.1 * math.log(10)]
    np.testing.assert_allclose(values, expected, rtol=2e-16)


def test_llama4_is_hugging_faces():
    llama = PEER["llama4"]
    ours = query_temperature("llama4", llama["temperature_positions"], floor_scale=llama["floor_scale"],
                             attn_scale=llama["attn_scale"])
    np.testing.assert_allclose(ours, array(llama["temperature"]), rtol=2 * FLOAT32_STEP, atol=0)


def test_log_length_by_hand():
    # log_2048(4096) = 12/11; up to the trained length, 1
    values = query_temperature("log_length", [0, 2047, 4095, 2**20 - 1], trained_length=2048)
    np.testing.assert_allclose(values, [1.0, 1.0, 12 / 11, 20 / 11], rtol=4e-16)


def test_deepseek_temperature_is_hugging_faces():
    deepseek = PEER["deepseek_v3"]
    assert deepseek["rotary_attention_scaling"] == 1.0
    assert yarn_softmax_factor(40.0, 1.0) == pytest.approx(deepseek["softmax_scale_times_sqrt_head_dim"], rel=1e-6)
    assert yarn_softmax_factor(40.0, 1.0) == pytest.approx((1 + 0.1 * math.log(40)) ** 2, rel=1e-15)


@pytest.mark.parametrize(
    ("kind", "options", "error", "words"),
    [
        ("cold", {}, ValueError, ["kind", "'cold'"]),
        ("log_length", {}, ValueError, ["trained_length"]),
        ("llama4", {"floor_scale": 0}, ValueError, ["floor_scale", "0"]),
        ("llama4", {"window": 3}, ValueError, ["window", "llama4"]),
        ("constant", {"factor": -1.0}, ValueError, ["factor", "-1.0"]),
    ],
)
def test_bad_options_name_themselves(kind, options, error, words):
    with pytest.raises(error) as raised:
        query_temperature(kind, [0], **options)
    assert all(word in str(raised.value) for word in words), str(raised.value)


def test_negative_positions_are_refused():
    with pytest.raises(ValueError, match="positions"):
        query_temperature("llama4", [-1])


def test_positions_that_are_not_integers_are_refused_by_name():
    with pytest.raises(TypeError, match=r"^positions must be integers, got \[0.5\] \(dtype float64\)$"):
        query_temperature("llama4", [0.5])


@pytest.mark.parametrize("temperature", [{"kind": "llama4", "floor_scale": 4, "attn_scale": 0.5},
                                         {"kind": "log_length", "trained_length": 3},
                                         {"kind": "constant", "factor": 1.5}])
def test_attention_layer_scales_each_querys_scores(temperature):
    x = np.random.default_rng(0).normal(size=(2, 11, 8)).astype("float32")
    plain = PositionalSelfAttention(heads=2, key_dim=4)
    plain(x)
    heated = PositionalSelfAttention(heads=2, key_dim=4, temperature=temperature)
    heated(x)
    heated.set_weights(plain.get_weights())
    options = {name: value for name, value in temperature.items() if name != "kind"}
    tau = query_temperature(temperature["kind"], np.arange(11), **options)
    before, after = to_numpy(plain.scores(x)), to_numpy(heated.scores(x))
    causal = np.tril(np.ones((11, 11), bool))
    np.testing.assert_allclose(after[..., causal], (before * tau[:, None])[..., causal], rtol=1e-5, atol=1e-6)


TEMPERATURE_EXAMPLE = LayerExample(
    init_kwargs={"heads": 2, "key_dim": 4, "method": "none",
                 "temperature": {"kind": "llama4", "floor_scale": 2, "attn_scale": 0.1}},
    make_inputs=lambda rng: rng.normal(size=(2, 6, 8)).astype("float32"), trainable=True, bad_shape=(2, 6),
)


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_temperature_through_the_harness(check):
    CHECKS[check](PositionalSelfAttention, TEMPERATURE_EXAMPLE)
