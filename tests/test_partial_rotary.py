"""Partial rotary on odd head widths, as GPT-NeoX in Hugging Face transformers computes it."""

import numpy as np
import pytest

from layer_harness import CHECKS, LayerExample, to_numpy
from peer_reference import PEER, array, float32_angle_tolerance
from pe_lib.frequencies import angle_rates
from pe_lib.layers import RotaryEmbedding
from pe_lib.rope import apply_rope, rotary_depth


@pytest.mark.parametrize("case", PEER["gpt_neox_partial"], ids=lambda case: f"{case['width']}-{case['fraction']}")
def test_odd_widths_rotate_what_gpt_neox_rotates(case):
    width, fraction = case["width"], case["fraction"]
    assert rotary_depth(width, fraction) == case["rotary_ndims"]  # 40 of 81, 16 of 65
    x, peer = array(case["x"]), array(case["rotated"])
    positions = np.array(case["positions"])
    ours = apply_rope(x, positions, rotary_fraction=fraction)
    rotated = case["rotary_ndims"]
    bound = np.tile(float32_angle_tolerance(positions, angle_rates(rotated)), 2) * np.abs(x).max() * 2
    assert np.all(np.abs(ours[:, :rotated] - peer[:, :rotated]) <= bound)
    np.testing.assert_array_equal(ours[:, rotated:], x[:, rotated:])  # passed through untouched
    np.testing.assert_array_equal(peer[:, rotated:], x[:, rotated:].astype(np.float32))
    layer = RotaryEmbedding(rotary_fraction=fraction, sequence_axis=0)
    out = to_numpy(layer(x.astype("float32"), positions=positions))
    np.testing.assert_allclose(out, ours, rtol=0, atol=5e-6)


def test_by_hand_at_position_one():
    # width 5, half rotated: 2 features, one pair at rate 1; the other three pass through
    x = np.array([[1.0, 0.0, 7.0, 8.0, 9.0]] * 2)
    out = apply_rope(x, rotary_fraction=0.5)
    np.testing.assert_allclose(out[1], [np.cos(1.0), np.sin(1.0), 7.0, 8.0, 9.0], rtol=1e-15)


@pytest.mark.parametrize(("depth", "fraction", "words"), [(66, 0.5, ["33", "even"]), (81, 1.0, ["depth", "81"]),
                                                          (3, 0.5, ["rotates 1"])])
def test_an_odd_number_of_rotated_features_is_refused(depth, fraction, words):
    with pytest.raises(ValueError) as raised:
        rotary_depth(depth, fraction)
    assert all(word in str(raised.value) for word in words), str(raised.value)


def test_the_layer_refuses_an_odd_width_rotated_whole():
    with pytest.raises(ValueError, match=r"\(2, 6, 3, 7\)"):
        RotaryEmbedding()(np.zeros((2, 6, 3, 7), "float32"))


ODD_EXAMPLE = LayerExample(
    init_kwargs={"rotary_fraction": 0.5, "sequence_axis": 1},
    make_inputs=lambda rng: rng.normal(size=(2, 6, 3, 9)).astype("float32"), bad_shape=(2, 6, 3, 7, 1),
)


@pytest.mark.parametrize("check", ["config_round_trip", "symbolic_and_eager", "mixed_precision"])
def test_odd_width_layer_through_the_harness(check):
    CHECKS[check](RotaryEmbedding, ODD_EXAMPLE)
