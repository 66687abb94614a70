"""The three written forms of RoPE agree with each other, with pe_lib.rope and with hand values."""

import math

import numpy as np
import pytest

from pe_lib.course.lessons.rope_forms import (
    cos_sin_tables,
    rope_complex,
    rope_efficient,
    rope_matrix,
    rotate_half,
    rotation_matrices,
)
from pe_lib.rope import apply_rope


def test_one_pair_by_hand():
    # d = 2: one pair with rate 1, so position m turns by m radians.
    x = np.array([[3.0, 4.0]] * 4)
    expected = [[3 * math.cos(m) - 4 * math.sin(m), 3 * math.sin(m) + 4 * math.cos(m)] for m in range(4)]
    cos, sin = cos_sin_tables(4, 2)
    assert np.allclose(rope_efficient(x, cos, sin), expected, rtol=0, atol=1e-15)
    assert np.allclose(rope_matrix(x, rotation_matrices(4, 2)), expected, rtol=0, atol=1e-15)
    assert np.allclose(rope_complex(x, np.arange(4)), expected, rtol=0, atol=1e-15)


def test_second_pair_turns_a_hundred_times_slower():
    # d = 4, base 10000: rates 1 and 1/100; the half-split pairs are (0, 2) and (1, 3).
    x = np.array([[0.0, 1.0, 0.0, 0.0]] * 8)
    rotated = rope_efficient(x, *cos_sin_tables(8, 4))
    assert np.allclose(rotated[7], [0.0, math.cos(0.07), 0.0, math.sin(0.07)], rtol=0, atol=1e-15)


@pytest.mark.parametrize("depth", [2, 8, 64])
def test_the_forms_agree_with_pe_lib_rope(depth):
    x = np.random.default_rng(depth).normal(size=(3, 20, depth))
    half_split = apply_rope(x)
    assert np.allclose(rope_efficient(x, *cos_sin_tables(20, depth)), half_split, atol=1e-12)
    assert np.allclose(rope_matrix(x, rotation_matrices(20, depth)), half_split, atol=1e-12)
    positions = np.arange(20) * 101
    assert np.allclose(rope_complex(x, positions), apply_rope(x, positions, layout="interleaved"), atol=1e-12)


def test_rotation_matrices_are_rotations_that_compose_by_offset():
    matrices = rotation_matrices(12, 6)
    assert np.allclose(matrices.transpose(0, 2, 1) @ matrices, np.eye(6), atol=1e-15)
    assert np.allclose(np.linalg.det(matrices), 1.0)
    assert np.allclose(matrices[4].T @ matrices[11], matrices[7], atol=1e-14)


def test_rotate_half_is_a_quarter_turn():
    x = np.arange(1.0, 7.0)
    assert rotate_half(x).tolist() == [-4.0, -5.0, -6.0, 1.0, 2.0, 3.0]
    assert np.array_equal(rotate_half(rotate_half(x)), -x)
