"""nearest_pairs and binary_code."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pe_lib import nearest_pairs
from pe_lib.course.lessons.periodicity import binary_code


def brute_force_pairs(codes):
    codes = np.asarray(codes, dtype=np.float64).reshape(len(codes), -1)
    pairs = [
        (float(np.linalg.norm(codes[a] - codes[b])), a, b)
        for a, b in itertools.combinations(range(len(codes)), 2)
    ]
    return sorted(pairs)


@given(arrays(np.float64, st.tuples(st.integers(2, 30), st.integers(1, 4)), elements=st.floats(-1, 1)))
def test_nearest_pairs_agrees_with_brute_force(codes):
    found = nearest_pairs(codes, count=1)[0]
    best = brute_force_pairs(codes)[0]
    assert found.first < found.second
    assert np.isclose(found.distance, best[0], atol=1e-7)


def test_nearest_pairs_are_sorted_and_exact():
    values = [0.0, 0.5, 0.52, 0.9, 0.1]
    pairs = nearest_pairs(values, count=3)
    assert [(p.first, p.second) for p in pairs] == [(1, 2), (0, 4), (2, 3)]
    np.testing.assert_allclose([p.distance for p in pairs], [0.02, 0.1, 0.38])


def test_single_wave_collision_at_seven_pi():
    # 8 + 14 = 22 is almost 7*pi, where sin(8) = sin(22 - 8) would hold exactly.
    closest = nearest_pairs(np.sin(np.arange(50.0)))[0]
    assert (closest.first, closest.second) == (8, 14)
    assert closest.distance < 2e-3


def test_identical_codes_have_distance_zero():
    assert nearest_pairs([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])[0] == (0, 2, 0.0)


def test_binary_code_counts():
    code = binary_code(8, 3)
    assert code.tolist()[5] == [1, 0, 1]
    assert np.array_equal(code @ (2 ** np.arange(3)), np.arange(8))


def test_binary_bit_b_has_period_two_to_the_b_plus_one():
    code = binary_code(64, 5)
    for bit in range(5):
        period = 2 ** (bit + 1)
        assert np.array_equal(code[period:, bit], code[:-period, bit])
        assert not np.array_equal(code[period // 2 :, bit], code[: -period // 2, bit])


def test_binary_counter_wraps_past_two_to_the_bits():
    code = binary_code(10, 3)
    assert np.array_equal(code[8], code[0])


def test_ties_are_ordered_by_position():
    # For one sine-cosine pair the distance depends only on the offset, so
    # every pair one wavelength apart ties; the earliest positions come first.
    angles = 2 * np.pi * np.arange(100) / 37.969
    circle = np.column_stack([np.sin(angles), np.cos(angles)])
    pairs = nearest_pairs(circle, count=3)
    assert [(p.first, p.second) for p in pairs] == [(0, 38), (1, 39), (2, 40)]
