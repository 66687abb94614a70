"""LongRoPE (``"rope_longrope"``): rates, switch, attention factor, layer, against Hugging Face's Phi-3 module."""

import math
import re

import keras
import numpy as np
import pytest

from layer_harness import CHECKS, LayerExample, to_numpy
from peer_reference import FLOAT32_STEP, PEER, array, float32_angle_tolerance
from pe_lib import longrope, rope_scaling
from pe_lib.frequencies import angle_rates
from pe_lib.layers import RotaryEmbedding
from pe_lib.methods import get_method
from pe_lib.rope import apply_rope, rotate_half

PHI = PEER["longrope"]  # Phi-3.5-mini-instruct's factors, head_dim 96, L = 4096, L_max = 131072


def phi_rates(length):
    return rope_scaling.scaled_rates("rope_longrope", PHI["head_dim"], original_length=PHI["original_length"],
                                     length=length, short_factor=PHI["short_factor"],
                                     long_factor=PHI["long_factor"])


def test_rates_are_hugging_faces_short_then_long():
    np.testing.assert_allclose(phi_rates(4096), array(PHI["short_rates"]), rtol=4 * FLOAT32_STEP, atol=0)
    np.testing.assert_allclose(phi_rates(4097), array(PHI["long_rates"]), rtol=4 * FLOAT32_STEP, atol=0)


def test_the_switch_is_just_past_the_trained_length():
    assert not longrope.uses_long_factors(4096, 4096) and longrope.uses_long_factors(4097, 4096)
    # by hand: pair 0 has rate 1, divided by its factor
    assert phi_rates(1)[0] == 1.0 / PHI["short_factor"][0]
    assert phi_rates(131072)[0] == 1.0 / PHI["long_factor"][0]


def test_attention_factor_by_hand_and_as_hugging_face():
    # ln 32 / ln 4096 = 5/12 exactly, so the factor is sqrt(17/12)
    expected = math.sqrt(17 / 12)
    factor = rope_scaling.attention_factor("rope_longrope", 32.0, original_length=4096)
    assert factor == pytest.approx(expected, rel=1e-15)
    assert factor == pytest.approx(PHI["attention_scaling"], rel=1e-15)
    assert longrope.longrope_attention_factor(1.0, 4096) == 1.0
    assert rope_scaling.attention_factor("rope_longrope", 32.0, original_length=4096, attention_factor=1.5) == 1.5


@pytest.mark.parametrize("which", ["short", "long"])
def test_rotation_is_hugging_faces_cos_and_sin(which):
    positions = PHI[f"{which}_positions"]
    cos, sin = array(PHI[f"cos_{which}"]), array(PHI[f"sin_{which}"])  # (positions, 96), scaled by the factor
    x = np.random.default_rng(0).normal(size=(len(positions), PHI["head_dim"]))
    peer = x * cos + rotate_half(x) * sin
    rates = phi_rates(max(positions) + 1)
    ours = apply_rope(x, np.array(positions), rates=rates) * PHI["attention_scaling"]
    bound = np.tile(float32_angle_tolerance(positions, rates), 2) * np.abs(x).max()
    assert np.all(np.abs(ours - peer) <= bound * 2)


def test_layer_switches_with_the_length_and_matches_the_reference():
    layer = RotaryEmbedding("rope_longrope", max_length=PHI["max_length"], original_length=PHI["original_length"],
                            short_factor=PHI["short_factor"], long_factor=PHI["long_factor"], dtype="float32")
    x = np.random.default_rng(1).normal(size=(1, 3, 1, 96)).astype("float32")
    factor = PHI["attention_scaling"]
    for positions in ([10, 11, 4095], [10, 11, 4096], [100000, 100001, 131071]):
        out = to_numpy(layer(x, positions=np.array(positions)))
        expected = apply_rope(x.astype(np.float64), np.array(positions), sequence_axis=1,
                              rates=phi_rates(max(positions) + 1)) * factor
        np.testing.assert_allclose(out, expected, rtol=0, atol=2e-5)
    # at position 10 the two sets disagree: the switch moved position 10's rotation
    short = to_numpy(layer(x, positions=np.array([10, 11, 4095])))[0, 0]
    long = to_numpy(layer(x, positions=np.array([10, 11, 4096])))[0, 0]
    assert np.abs(short - long).max() > 1e-2
    assert layer.attention_factor == pytest.approx(math.sqrt(17 / 12), rel=1e-15)


def test_cached_keys_from_before_the_switch_break_the_offset_property():
    # a key rotated at 100 while the input was short; a query at 4096 rotated with the long set
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(1, 96)), rng.normal(size=(1, 96))
    rotated = lambda x, m, n: apply_rope(x, np.array([m]), rates=phi_rates(n))[0]  # noqa: E731
    cached = rotated(q, 4096, 4097) @ rotated(k, 100, 4096)
    fresh = rotated(q, 4096, 4097) @ rotated(k, 100, 4097)
    offset_only = rotated(q, 3996, 4097) @ rotated(k, 0, 4097)
    assert fresh == pytest.approx(offset_only, rel=1e-9)
    assert abs(cached - fresh) > 1e-3 * abs(fresh)


def test_registry_entry_and_peer_names():
    entry = get_method("rope_longrope")
    assert entry.acts_on == "queries and keys" and entry.layer is RotaryEmbedding
    assert entry.reference is longrope.longrope_rates
    import pe_lib.methods

    for name in ('rope_type="longrope"', "short_factor", "long_factor"):
        assert name in pe_lib.methods.__doc__ and name in longrope.__doc__


def test_absent_factors_are_plain_rope():
    np.testing.assert_array_equal(rope_scaling.scaled_rates("rope_longrope", 8, original_length=16), angle_rates(8))


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: longrope.longrope_rates(4, [1.0], [1.0, 1.0], 8, length=4), ValueError, ["short_factor", "2"]),
        (lambda: longrope.longrope_rates(4, [1.0, 0.0], [1.0, 1.0], 8, length=4), ValueError, ["short_factor", "0.0"]),
        (lambda: longrope.longrope_rates(4, [1.0, 1.0], "ab", 8, length=4), TypeError, ["long_factor", "'ab'"]),
        (lambda: longrope.longrope_rates(4, [1.0, 1.0], [1.0, 1.0], 8, length=0), ValueError, ["length", "0"]),
        (lambda: longrope.longrope_attention_factor(-2.0, 8), ValueError, ["scale", "-2.0"]),
        (lambda: rope_scaling.attention_factor("rope_longrope", 4.0), ValueError, ["original_length"]),
        (lambda: rope_scaling.scaled_rates("rope_longrope", 4, original_length=8, beta_fast=2.0), ValueError,
         ["beta_fast", "rope_longrope"]),
        (lambda: RotaryEmbedding("rope_longrope", original_length=8, short_factor="x"), TypeError,
         ["short_factor", "'x'"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert all(word in str(raised.value) for word in words), str(raised.value)


LONGROPE_EXAMPLE = LayerExample(
    init_kwargs={"method": "rope_longrope", "max_length": 32, "original_length": 8, "sequence_axis": 1,
                 "short_factor": [1.0, 1.5, 2.0, 2.5], "long_factor": [2.0, 4.0, 8.0, 16.0]},
    make_inputs=lambda rng: rng.normal(size=(2, 12, 3, 8)).astype("float32"), bad_shape=(2, 6, 3, 7),
)


@pytest.mark.parametrize("check", ["config_round_trip", "symbolic_and_eager", "mixed_precision", "bad_shape"])
def test_longrope_layer_through_the_harness(check):
    CHECKS[check](RotaryEmbedding, LONGROPE_EXAMPLE)


def test_longrope_layer_saves_and_loads(tmp_path):
    inputs = LONGROPE_EXAMPLE.make_inputs(np.random.default_rng(7))
    symbolic = keras.Input(shape=(None, 3, 8))
    model = keras.Model(symbolic, RotaryEmbedding(**LONGROPE_EXAMPLE.init_kwargs)(symbolic))
    model.save(tmp_path / "longrope.keras")
    loaded = keras.saving.load_model(tmp_path / "longrope.keras")
    np.testing.assert_array_equal(loaded.predict(inputs, verbose=0), model.predict(inputs, verbose=0))


def test_scaled_rates_without_a_length_take_the_short_factors():
    """transformers' ``_compute_longrope_parameters`` takes the long factors only for a ``seq_len`` past the
    original length; without one, the short. N = 10^4, 4 features: rates 1 and 10^-2 (by hand), divided by
    the short factors 1 and 2."""
    factors = {"short_factor": [1.0, 2.0], "long_factor": [4.0, 8.0]}
    got = rope_scaling.scaled_rates("rope_longrope", 4, original_length=8, **factors)
    np.testing.assert_allclose(got, [1.0, 0.005], rtol=4 * 2.0**-52, atol=0)  # within 4 ulp
    longer = rope_scaling.scaled_rates("rope_longrope", 4, original_length=8, length=9, **factors)
    np.testing.assert_allclose(longer, [0.25, 0.00125], rtol=4 * 2.0**-52, atol=0)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: longrope.longrope_rates(4, None, [1.0, 1.0], 8, length=4), TypeError,
     "short_factor must be a sequence of 2 numbers, got None"),
    (lambda: longrope.longrope_rates(4, [1.0, "x"], [1.0, 1.0], 8, length=4), TypeError,
     "short_factor must be a sequence of 2 numbers, got [1.0, 'x']"),
    (lambda: longrope.longrope_rates(4, [1.0, 1.0], [1.0], 8, length=4), ValueError,
     "long_factor must hold one factor per pair, 2 numbers; got shape (1,)"),
    (lambda: longrope.longrope_rates(4, [1.0, 1.0], [1.0, float("nan")], 8, length=4), ValueError,
     "long_factor must hold finite numbers > 0, got [1.0, nan]"),
    (lambda: longrope.longrope_rates(3, [1.0], [1.0], 8, length=4), ValueError,
     "depth must be even (RoPE rotates the features in pairs), got 3"),
    (lambda: longrope.longrope_rates(4, [1.0, 1.0], [1.0, 1.0], 8, length=4, base=0.0), ValueError,
     "base must be a finite number > 0, got 0.0"),
    (lambda: longrope.uses_long_factors(0, 8), ValueError, "length must be >= 1, got 0"),
    (lambda: longrope.uses_long_factors(4, 0), ValueError, "original_length must be >= 1, got 0"),
    (lambda: longrope.longrope_attention_factor(4.0, 1), ValueError, "original_length must be >= 2, got 1"),
    (lambda: longrope.longrope_attention_factor(0.0, 8), ValueError, "scale must be a finite number > 0, got 0.0"),
])
def test_bad_input_is_refused_in_its_own_words(call, error, message):
    with pytest.raises(error, match="^" + re.escape(message)):
        call()


def test_the_smallest_lengths_and_scales_by_hand():
    assert longrope.uses_long_factors(1, 1) is False and longrope.uses_long_factors(2, 1) is True
    # N = 100, 4 features: rates 1 and 1/10, the short factors 1 and 1
    np.testing.assert_allclose(longrope.longrope_rates(4, [1.0, 1.0], [2.0, 2.0], 8, length=8, base=100.0),
                               [1.0, 0.1], rtol=4 * 2.0**-52, atol=0)
    # the default base, N = 10^4: rates 1 and 1/100
    np.testing.assert_allclose(longrope.longrope_rates(4, [1.0, 1.0], [2.0, 2.0], 8, length=8), [1.0, 0.01],
                               rtol=4 * 2.0**-52, atol=0)
    # sqrt(1 + ln 4 / ln 2) = sqrt(3), sqrt(1 + ln 2 / ln 4) = sqrt(3 / 2); a scale below 1 gives 1
    assert longrope.longrope_attention_factor(4.0, 2) == pytest.approx(math.sqrt(3.0), rel=4 * 2.0**-52)
    assert longrope.longrope_attention_factor(2.0, 4) == pytest.approx(math.sqrt(1.5), rel=4 * 2.0**-52)
    assert longrope.longrope_attention_factor(0.5, 8) == 1.0
