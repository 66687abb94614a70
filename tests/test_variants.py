"""The per-column-exponent variant against its formula, and the properties it loses."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib import sinusoidal_encoding
from pe_lib.course.lessons.variants import fit_shift_map, pair_squared_radii, per_column_exponent_encoding

lengths = st.integers(min_value=1, max_value=30)
depths = st.integers(min_value=1, max_value=32)
even_depths = st.integers(min_value=1, max_value=16).map(lambda half: 2 * half)
bases = st.floats(min_value=2.0, max_value=1e5)


def seed_formula(length: int, depth: int, base: float = 10000.0) -> list[list[float]]:
    """The variant written out term by term: t = 1..L, k = 1..d, sine for even k."""
    rows = []
    for t in range(1, length + 1):
        row = []
        for k in range(1, depth + 1):
            angle = t / base ** (k / depth)
            row.append(math.sin(angle) if k % 2 == 0 else math.cos(angle))
        rows.append(row)
    return rows


def test_matches_the_seed_formula_for_d_model_14_and_l_512():
    table = per_column_exponent_encoding(512, 14, dtype="float64")
    np.testing.assert_allclose(table, seed_formula(512, 14), rtol=0, atol=1e-12)


@given(lengths, depths, bases)
def test_matches_the_seed_formula(length, depth, base):
    table = per_column_exponent_encoding(length, depth, base=base, dtype="float64")
    np.testing.assert_allclose(table, seed_formula(length, depth, base), rtol=0, atol=1e-12)


def test_small_table_by_hand():
    # base 16, depth 4: the angles are t/2, t/4, t/8, t/16 (cos, sin, cos, sin).
    table = per_column_exponent_encoding(1, 4, base=16.0, dtype="float64")
    expected = [math.cos(0.5), math.sin(0.25), math.cos(0.125), math.sin(0.0625)]
    np.testing.assert_allclose(table[0], expected, rtol=0, atol=1e-15)


def test_one_based_positions_have_no_zero_one_row():
    table = per_column_exponent_encoding(3, 6, first_position=0, dtype="float64")
    assert table[0].tolist() == [1.0, 0.0] * 3  # k = 1 is a cosine: cos 0 = 1 comes first
    assert not np.allclose(per_column_exponent_encoding(1, 6)[0], [1.0, 0.0] * 3)


def test_last_exponent_is_one_so_the_last_column_is_t_over_n():
    table = per_column_exponent_encoding(5, 14, dtype="float64")
    np.testing.assert_allclose(table[:, -1], np.sin(np.arange(1, 6) / 10000.0), rtol=0, atol=1e-15)


def test_first_column_shifts_the_column_index():
    shifted = per_column_exponent_encoding(4, 6, first_column=0, dtype="float64")
    # k = 0 is the sine of t itself, k = 1 the cosine of t / N**(1/6).
    np.testing.assert_allclose(shifted[:, 0], np.sin(np.arange(1, 5.0)), atol=1e-15)
    np.testing.assert_allclose(shifted[:, 1], np.cos(np.arange(1, 5.0) / 10000 ** (1 / 6)), atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64", np.float16])
def test_dtype_is_respected(dtype):
    assert per_column_exponent_encoding(3, 5, dtype=dtype).dtype == np.dtype(dtype)


def test_zero_length_gives_an_empty_table():
    assert per_column_exponent_encoding(0, 7).shape == (0, 7)


# Kept by the paper's pairing, lost by the variant.


@given(lengths, even_depths, st.integers(min_value=0, max_value=10**5))
def test_paper_pairs_lie_on_the_unit_circle(length, depth, start):
    table = sinusoidal_encoding(length, depth, start=start, dtype="float64")
    np.testing.assert_allclose(pair_squared_radii(table), 1.0, rtol=0, atol=1e-12)


def test_variant_pairs_leave_the_unit_circle():
    radii = pair_squared_radii(per_column_exponent_encoding(512, 14, dtype="float64"))
    # The fastest pair, cos(t / N**(1/14)) and sin(t / N**(2/14)), wanders from near 0 to near 2.
    assert radii[:, 0].min() < 0.05
    assert radii[:, 0].max() > 1.95


def test_paper_row_norm_is_constant_and_the_variants_is_not():
    paper = np.sum(sinusoidal_encoding(512, 14, start=1, dtype="float64") ** 2, axis=1)
    variant = np.sum(per_column_exponent_encoding(512, 14, dtype="float64") ** 2, axis=1)
    np.testing.assert_allclose(paper, 7.0, rtol=1e-13)
    assert variant.max() - variant.min() > 5.0


@pytest.mark.parametrize("shift", [1, 5, 50])
def test_a_shift_is_linear_for_the_paper_but_not_for_the_variant(shift):
    paper = fit_shift_map(sinusoidal_encoding(512, 14), shift)
    variant = fit_shift_map(per_column_exponent_encoding(512, 14), shift)
    assert paper.max_error < 2e-7  # float32 rounding only
    assert variant.rms_error > 0.1
    assert variant.max_error > 0.5


def test_fitted_paper_shift_is_a_rotation_of_the_fastest_pair():
    fit = fit_shift_map(sinusoidal_encoding(200, 8, dtype="float64"), 3)
    rotation = [[math.cos(3), -math.sin(3)], [math.sin(3), math.cos(3)]]
    np.testing.assert_allclose(fit.matrix[:2, :2], rotation, atol=1e-9)
    np.testing.assert_allclose(fit.matrix[:2, 2:], 0.0, atol=1e-9)


@given(st.integers(min_value=1, max_value=8).map(lambda half: 2 * half), st.integers(min_value=1, max_value=20))
def test_paper_shift_fits_to_rounding(depth, shift):
    table = sinusoidal_encoding(60, depth, base=100.0, dtype="float64")
    assert fit_shift_map(table, shift).max_error < 1e-9


def test_pair_squared_radii_by_hand_and_odd_column_is_ignored():
    radii = pair_squared_radii([[0.6, 0.8, 3.0], [1.0, 1.0, 7.0]])
    np.testing.assert_array_equal(radii, [[1.0], [2.0]])


# Bad input: one test per kind.


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"length": -1}, ValueError, ["length", "-1"]),
        ({"length": 2.0}, TypeError, ["length", "2.0"]),
        ({"depth": 0}, ValueError, ["depth", "0"]),
        ({"base": -2.0}, ValueError, ["base", "-2.0"]),
        ({"base": "10000"}, TypeError, ["base", "'10000'"]),
        ({"first_position": -1}, ValueError, ["first_position", "-1"]),
        ({"first_position": 1.5}, TypeError, ["first_position", "1.5"]),
        ({"first_column": -2}, ValueError, ["first_column", "-2"]),
        ({"dtype": "int64"}, TypeError, ["dtype", "'int64'"]),
    ],
)
def test_variant_rejects(kwargs, error, words):
    arguments = {"length": 8, "depth": 4, **kwargs}
    with pytest.raises(error) as raised:
        per_column_exponent_encoding(**arguments)
    for word in words:
        assert word in str(raised.value)


def test_pair_squared_radii_rejects_tables_without_a_pair():
    with pytest.raises(ValueError, match="at least 2 columns to form a pair, got 1"):
        pair_squared_radii(np.zeros((4, 1)))


table_functions = pytest.mark.parametrize(
    "function", [pair_squared_radii, lambda table: fit_shift_map(table, 1)], ids=["radii", "shift_map"]
)


@table_functions
def test_table_must_be_two_dimensional(function):
    with pytest.raises(ValueError, match=r"table must be 2-D \(positions, columns\), got shape \(4,\)"):
        function(np.zeros(4))


@table_functions
def test_table_must_be_finite(function):
    with pytest.raises(ValueError, match="table must be finite"):
        function(np.array([[0.0, np.inf]] * 10))


@pytest.mark.parametrize(
    ("shift", "error", "message"),
    [
        (0, ValueError, "shift must be >= 1, got 0"),
        (1.0, TypeError, "shift must be an integer, got 1.0"),
        (6, ValueError, r"more pairs of rows than columns \(4\): 10 positions and shift 6 leave 4"),
        (12, ValueError, r"10 positions and shift 12 leave 0"),
    ],
)
def test_fit_shift_map_rejects(shift, error, message):
    with pytest.raises(error, match=message):
        fit_shift_map(np.zeros((10, 4)), shift)
