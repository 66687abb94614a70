"""RoPE: rotations that keep lengths and make scores depend on the offset only."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pe_lib
from pe_lib.layouts import LAYOUTS, interleaved_to_half_split
from pe_lib.rope import apply_rope, exact_angle_cos_sin, offset_score, rope_angles, rotary_depth, rotation_tables

even_depths = st.integers(min_value=1, max_value=16).map(lambda half: 2 * half)
layouts = st.sampled_from(LAYOUTS)
positions = st.integers(min_value=0, max_value=10**5)
bases = st.sampled_from([100.0, 10000.0, 500000.0])
entries = st.floats(min_value=-10, max_value=10)


@st.composite
def vectors(draw, rows=1):
    depth = draw(even_depths)
    return draw(arrays(np.float64, (rows, depth), elements=entries))


def test_depth_two_is_one_rotation_by_the_position():
    rotated = apply_rope(np.array([[1.0, 0.0]] * 3), positions=[0, 1, 5])
    expected = [[1.0, 0.0], [math.cos(1), math.sin(1)], [math.cos(5), math.sin(5)]]
    np.testing.assert_allclose(rotated, expected, rtol=0, atol=1e-15)


def test_depth_four_by_hand_in_both_layouts():
    # Rates 1 and 1/100; at position 2 the pairs turn by 2 and 0.02 radians.
    c1, s1, c2, s2 = math.cos(2), math.sin(2), math.cos(0.02), math.sin(0.02)
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    interleaved = [1 * c1 - 2 * s1, 1 * s1 + 2 * c1, 3 * c2 - 4 * s2, 3 * s2 + 4 * c2]
    half_split = [1 * c1 - 3 * s1, 2 * c2 - 4 * s2, 1 * s1 + 3 * c1, 2 * s2 + 4 * c2]
    np.testing.assert_allclose(apply_rope(x, [2], layout="interleaved")[0], interleaved, atol=1e-15)
    np.testing.assert_allclose(apply_rope(x, [2], layout="half-split")[0], half_split, atol=1e-15)


@given(vectors(rows=4), layouts)
def test_position_zero_is_the_identity(x, layout):
    np.testing.assert_array_equal(apply_rope(x, np.zeros(4, dtype=int), layout=layout), x)


@given(vectors(rows=3), st.lists(positions, min_size=3, max_size=3), layouts, bases)
def test_norms_are_preserved(x, where, layout, base):
    rotated = apply_rope(x, where, layout=layout, base=base)
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=1), np.linalg.norm(x, axis=1), rtol=1e-12, atol=1e-12)


@given(vectors(rows=2), positions, positions, st.integers(min_value=0, max_value=10**4), layouts, bases)
def test_score_depends_only_on_the_offset(pair, m, n, shift, layout, base):
    q, k = pair[:1], pair[1:]

    def score(a, b):
        return float(apply_rope(q, [a], layout=layout, base=base)[0] @ apply_rope(k, [b], layout=layout, base=base)[0])

    scale = 1 + float(np.linalg.norm(q) * np.linalg.norm(k))
    # Angles up to ~1e5 radians carry an error near 1e5 * 2**-52 each.
    assert math.isclose(score(m, n), score(m + shift, n + shift), rel_tol=0, abs_tol=1e-9 * scale)


@given(vectors(rows=5), st.lists(positions, min_size=5, max_size=5), bases)
def test_layouts_agree_up_to_a_fixed_permutation(x, where, base):
    perm = interleaved_to_half_split(x.shape[1])
    np.testing.assert_allclose(
        apply_rope(x[:, perm], where, layout="half-split", base=base),
        apply_rope(x, where, layout="interleaved", base=base)[:, perm],
        rtol=0, atol=1e-12,
    )


def test_permutation_is_a_permutation_and_not_the_identity():
    perm = interleaved_to_half_split(8)
    assert sorted(perm.tolist()) == list(range(8)) and perm.tolist() != list(range(8))


def test_leading_axes_and_float32_are_kept():
    x = np.random.default_rng(0).normal(size=(2, 3, 5, 4)).astype(np.float32)
    rotated = apply_rope(x, sequence_axis=-2)
    assert rotated.shape == x.shape and rotated.dtype == np.float32
    np.testing.assert_allclose(rotated[1, 2], apply_rope(x[1, 2].astype(np.float64)), rtol=1e-6, atol=1e-6)


def test_angles_use_the_sinusoidal_rates():
    np.testing.assert_array_equal(rope_angles([3], 8, base=100.0)[0], 3 * pe_lib.angle_rates(8, base=100.0))


@given(st.integers(min_value=0, max_value=5000), bases)
def test_offset_score_is_the_score_of_rotated_copies(offset, base):
    depth = 16
    q = np.ones((1, depth))
    direct = apply_rope(q, [offset], base=base)[0] @ apply_rope(q, [0], base=base)[0] / depth
    assert math.isclose(offset_score(offset, depth, base=base), direct, abs_tol=1e-9)


def test_a_larger_base_stretches_the_wavelengths_and_slows_the_decay():
    depth = 128
    short, long = pe_lib.wavelengths(depth, base=10000.0), pe_lib.wavelengths(depth, base=500000.0)
    assert short[0] == long[0] == 2 * math.pi and np.all(long[1:] > short[1:])
    offsets = np.arange(1, 5000)
    first_half = {base: int(offsets[np.argmax(offset_score(offsets, depth, base=base) < 0.5)])
                  for base in (10000.0, 500000.0)}
    assert (first_half[10000.0], first_half[500000.0]) == (46, 166)
    far = np.array([100, 1000, 10000])
    assert np.all(offset_score(far, depth, base=500000.0) > offset_score(far, depth, base=10000.0) + 0.1)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: apply_rope(np.zeros((3, 5))), ValueError, ["x", "depth must be even", "5"]),
        (lambda: apply_rope(np.zeros(4)), ValueError, ["x", "(4,)"]),
        (lambda: apply_rope(np.array([[np.nan, 0.0]])), ValueError, ["x", "finite"]),
        (lambda: apply_rope(np.zeros((2, 4)), layout="pairs"), ValueError, ["layout", "'pairs'"]),
        (lambda: apply_rope(np.zeros((2, 4)), base=0.0), ValueError, ["base", "0.0"]),
        (lambda: apply_rope(np.zeros((2, 4)), positions=[0.0, 1.5]), TypeError, ["positions", "1.5"]),
        (lambda: apply_rope(np.zeros((2, 4)), positions=[0, 1, 2]), ValueError, ["positions", "(2,)", "(3,)"]),
        (lambda: rope_angles([0.5], 4), TypeError, ["positions", "0.5"]),
        (lambda: apply_rope(np.zeros((2, 3, 5, 4))), ValueError, ["sequence_axis", "(2, 3, 5, 4)"]),
        (lambda: apply_rope(np.zeros((2, 4)), sequence_axis=3), ValueError, ["sequence_axis", "3"]),
        (lambda: apply_rope(np.zeros((2, 4)), sequence_axis=1), ValueError, ["sequence_axis", "feature_axis"]),
        (lambda: apply_rope(np.zeros((2, 3, 4)), positions=np.zeros((3, 3), int)), ValueError,
         ["positions", "(3, 3)"]),
        (lambda: rope_angles([0], 0), ValueError, ["depth", "0"]),
        (lambda: interleaved_to_half_split(0), ValueError, ["depth", "0"]),
        (lambda: offset_score([1], 3), ValueError, ["depth", "3"]),
        (lambda: rope_angles([0, 1, 2], 4, rates=[1.0]), ValueError, ["rates", "2", "(1,)"]),
        (lambda: apply_rope(np.zeros((2, 8)), rates=[1.0, 0.1, 0.01, 0.001], rotary_fraction=0.5), ValueError,
         ["rates", "2", "(4,)"]),
        (lambda: apply_rope(np.zeros((2, 8)), rotary_fraction=0.0), ValueError, ["rotary_fraction", "0.0"]),
        (lambda: apply_rope(np.zeros((2, 8)), rotary_fraction=1.5), ValueError, ["rotary_fraction", "1.5"]),
        (lambda: apply_rope(np.zeros((2, 8)), rotary_fraction="half"), TypeError, ["rotary_fraction", "'half'"]),
        (lambda: apply_rope(np.zeros((2, 8)), rotary_fraction=0.125), ValueError, ["rotary_fraction", "1", "even"]),
        (lambda: exact_angle_cos_sin([2**32], [1.0]), ValueError, ["multiples", "2**32"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert all(word in str(raised.value) for word in words)


def _rotate_pairs_by_hand(x, angles):
    """Reference: rotate (x_i, x_{i+d/2}) by each angle with explicit 2 x 2 matrices."""
    half = x.shape[-1] // 2
    out = np.empty_like(x)
    for i in range(half):
        c, s = np.cos(angles[..., i]), np.sin(angles[..., i])
        out[..., i] = c * x[..., i] - s * x[..., i + half]
        out[..., i + half] = s * x[..., i] + c * x[..., i + half]
    return out


def test_explicit_axes_rotate_along_the_sequence_axis_not_the_heads():
    # keras-hub and GPT-J: (batch, sequence, heads, head_dim)
    x = np.random.default_rng(1).normal(size=(2, 5, 3, 8))
    rotated = apply_rope(x, sequence_axis=1)
    angles = np.arange(5)[:, None] * pe_lib.angle_rates(8)  # (sequence, pairs)
    for head in range(3):
        np.testing.assert_allclose(rotated[:, :, head], _rotate_pairs_by_hand(x[:, :, head], angles), atol=1e-12)
    # the same numbers with the heads first
    moved = apply_rope(np.swapaxes(x, 1, 2), sequence_axis=2)
    np.testing.assert_allclose(np.swapaxes(moved, 1, 2), rotated, atol=1e-12)


def test_per_batch_positions_rotate_each_row_by_its_own_positions():
    x = np.random.default_rng(2).normal(size=(2, 4, 6))
    positions = np.array([[0, 1, 2, 3], [10, 11, 12, 13]])
    rotated = apply_rope(x, positions)
    for row in range(2):
        angles = positions[row][:, None] * pe_lib.angle_rates(6)
        np.testing.assert_allclose(rotated[row], _rotate_pairs_by_hand(x[row], angles), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_input_dtype_is_kept(dtype):
    x = np.random.default_rng(3).normal(size=(6, 8)).astype(dtype)
    rotated = apply_rope(x, np.arange(100, 106))
    assert rotated.dtype == dtype
    exact = apply_rope(x.astype(np.float64), np.arange(100, 106))
    np.testing.assert_allclose(rotated.astype(np.float64), exact, rtol=0, atol=float(np.finfo(dtype).eps) * 4)


def test_integer_input_gives_float64():
    assert apply_rope(np.ones((2, 4), dtype=np.int32)).dtype == np.float64


def test_rates_replace_the_base():
    x = np.random.default_rng(4).normal(size=(5, 8))
    rates = pe_lib.angle_rates(8, base=500.0)
    np.testing.assert_allclose(apply_rope(x, rates=rates), apply_rope(x, base=500.0), atol=0)


# --- partial rotary ---------------------------------------------------------------------------


def test_partial_rotary_by_hand_leaves_the_other_features_untouched():
    # depth 16, a quarter rotated: 4 features, two pairs with the rates of depth 4, 1 and 1/100.
    x = np.random.default_rng(5).normal(size=(3, 16))
    rotated = apply_rope(x, [0, 1, 2], rotary_fraction=0.25)
    np.testing.assert_array_equal(rotated[:, 4:], x[:, 4:])
    c, s = math.cos(2), math.sin(2)
    c2, s2 = math.cos(0.02), math.sin(0.02)
    a, b, p, q = x[2, 0], x[2, 1], x[2, 2], x[2, 3]  # half-split pairs (0, 2) and (1, 3)
    np.testing.assert_allclose(rotated[2, :4], [a * c - p * s, b * c2 - q * s2, a * s + p * c, b * s2 + q * c2],
                               rtol=0, atol=1e-15)


@pytest.mark.parametrize(("depth", "fraction", "rotated"), [(80, 0.4, 32), (64, 0.25, 16), (128, 1.0, 128),
                                                            (64, 0.5, 32), (20, 0.3, 6)])
def test_rotary_depth_rounds_down_as_the_peers_do(depth, fraction, rotated):
    assert rotary_depth(depth, fraction) == rotated == int(depth * fraction)


def test_partial_rotary_in_float16_keeps_the_passed_features_bit_for_bit():
    x = np.random.default_rng(6).normal(size=(4, 12)).astype(np.float16)
    rotated = apply_rope(x, [3, 9, 27, 81], rotary_fraction=0.5, layout="interleaved")
    assert rotated.dtype == np.float16
    np.testing.assert_array_equal(rotated[:, 6:], x[:, 6:])
    assert not np.array_equal(rotated[:, :6], x[:, :6])


# --- float64 accuracy at long positions --------------------------------------------------------


def mpmath_cos_sin(positions, rates):
    """cos and sin of each position times each float64 rate, the product exact, at 40 digits."""
    import mpmath

    mpmath.mp.dps = 40
    cos = [[float(mpmath.cos(mpmath.mpf(int(m)) * mpmath.mpf(float(r)))) for r in rates] for m in positions]
    sin = [[float(mpmath.sin(mpmath.mpf(int(m)) * mpmath.mpf(float(r)))) for r in rates] for m in positions]
    return np.array(cos), np.array(sin)


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_exact_angle_cos_sin_is_float64_accurate_up_to_two_to_the_32(base):
    rates = pe_lib.angle_rates(64, base=base)
    positions = np.array([0, 1, 4095, 131071, 2**24 + 1, 2**31 - 1, 2**32 - 1])
    cos, sin = exact_angle_cos_sin(positions, rates)
    expected_cos, expected_sin = mpmath_cos_sin(positions, rates)
    assert np.abs(cos - expected_cos).max() < 2e-15 and np.abs(sin - expected_sin).max() < 2e-15
    # Forming the angle in float64 first loses up to m theta 2**-53 radians: 2.4e-7 at 2**31.
    assert np.abs(np.cos(positions[-2] * rates[1]) - expected_cos[-2, 1]).max() > 1e-9


def test_rotation_tables_hold_the_digit_angles():
    rates = pe_lib.angle_rates(8, base=500000.0)
    tables = rotation_tables(rates)
    for level, (cos, sin) in enumerate(tables):
        assert cos.dtype == sin.dtype == np.float64 and cos.shape == (256, 4)
        digits = np.array([0, 1, 128, 255])
        expected_cos, expected_sin = mpmath_cos_sin(digits * 256**level, rates)
        np.testing.assert_allclose(cos[digits], expected_cos, rtol=0, atol=2e-15)
        np.testing.assert_allclose(sin[digits], expected_sin, rtol=0, atol=2e-15)


def test_apply_rope_is_float64_to_the_rounding_of_its_angles_at_131072():
    # apply_rope forms m theta in float64: its error is at most about m theta 2**-52.
    rates = pe_lib.angle_rates(64, base=500000.0)
    positions = np.array([131071])
    x = np.zeros((1, 64))
    x[0, :32] = 1.0  # half-split: the first member of each pair
    rotated = apply_rope(x, positions, base=500000.0)
    cos, sin = mpmath_cos_sin(positions, rates)
    assert np.abs(rotated[0, :32] - cos[0]).max() < 131071 * 2.0**-52
    assert np.abs(rotated[0, 32:] - sin[0]).max() < 131071 * 2.0**-52
