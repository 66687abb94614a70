"""wavelength_rows and markdown_table, and the worked examples' numbers (errata included)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib import sinusoidal_encoding, wavelengths
from pe_lib.course.display.tables import WavelengthRow, markdown_table, wavelength_rows


def paper_angle(position: int, column: int, depth: int, base: float = 10000.0) -> float:
    """The angle of one entry, written straight from the paper's formula."""
    pair = column // 2
    return position / base ** (2 * pair / depth)


# --- wavelength_rows ---------------------------------------------------------


def test_wavelength_rows_for_depth_four():
    rows = wavelength_rows(4)
    assert [row.pair for row in rows] == [0, 1]
    assert rows[0].rate == 1.0
    assert math.isclose(rows[1].rate, 0.01, rel_tol=1e-15)
    assert math.isclose(rows[1].wavelength, 200 * math.pi, rel_tol=1e-15)


def test_depth_sixteen_wavelengths_grow_by_root_ten():
    lengths = [row.wavelength for row in wavelength_rows(16)]
    assert len(lengths) == 8
    np.testing.assert_allclose(np.diff(np.log(lengths)), math.log(math.sqrt(10)), rtol=1e-12)


def test_chosen_pairs_keep_their_order():
    rows = wavelength_rows(512, pairs=[255, 0, 50])
    assert [row.pair for row in rows] == [255, 0, 50]
    assert math.isclose(rows[2].wavelength, 2 * math.pi * 10000 ** (100 / 512), rel_tol=1e-14)


def test_rows_hold_plain_python_numbers():
    row = wavelength_rows(6)[1]
    assert type(row.pair) is int and type(row.rate) is float and type(row.wavelength) is float


@given(st.integers(min_value=1, max_value=600), st.floats(min_value=2.0, max_value=1e6))
def test_rows_agree_with_wavelengths_and_rate_times_wavelength_is_two_pi(depth, base):
    rows = wavelength_rows(depth, base=base)
    np.testing.assert_allclose([row.wavelength for row in rows], wavelengths(depth, base=base), rtol=1e-14)
    for row in rows:
        assert math.isclose(row.rate * row.wavelength, 2 * math.pi, rel_tol=1e-14)


def test_pair_past_the_last_is_refused():
    with pytest.raises(ValueError, match="pairs must be < 7 for depth 14, got 7"):
        wavelength_rows(14, pairs=[7])


def test_negative_pair_is_refused():
    with pytest.raises(ValueError, match="pairs must be >= 0, got -1"):
        wavelength_rows(14, pairs=[-1])


def test_non_integer_pair_is_refused():
    with pytest.raises(TypeError, match="pairs must be an integer, got 1.0"):
        wavelength_rows(14, pairs=[1.0])


def test_zero_depth_is_refused():
    with pytest.raises(ValueError, match="depth must be >= 1, got 0"):
        wavelength_rows(0)


# --- markdown_table ----------------------------------------------------------


def test_markdown_table_by_hand():
    text = markdown_table(["i", "rate", "note"], [[0, 1.0, "fast"], [1, 0.01, "slow"]], decimals=2)
    assert text.splitlines() == [
        "| i | rate | note |",
        "| --: | --: | --- |",
        "| 0 | 1.00 | fast |",
        "| 1 | 0.01 | slow |",
    ]


def test_markdown_table_decimals_per_column_and_numpy_numbers():
    text = markdown_table(["a", "b"], [[np.float32(0.5), np.float64(2 / 3)]], decimals=[1, 3])
    assert text.splitlines()[-1] == "| 0.5 | 0.667 |"


def test_negative_zero_loses_its_sign():
    assert markdown_table(["x"], [[-0.00001]], decimals=3).splitlines()[-1] == "| 0.000 |"


def test_header_only_table():
    assert markdown_table(["x", "y"], []).splitlines() == ["| x | y |", "| --- | --- |"]


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=8), st.integers(0, 8))
def test_every_number_reads_back_to_within_half_a_last_place(values, decimals):
    text = markdown_table(["v"], [[v] for v in values], decimals=decimals)
    cells = [line.strip("| ") for line in text.splitlines()[2:]]
    assert len(cells) == len(values)
    for cell, value in zip(cells, values):
        assert len(cell.partition(".")[2]) == decimals
        assert abs(float(cell) - value) <= 0.5 * 10.0**-decimals * (1 + 1e-9) + 1e-9 * abs(value)


def test_short_row_is_refused():
    with pytest.raises(ValueError, match=r"rows\[1\] must have 2 cells like the header, got 1"):
        markdown_table(["a", "b"], [[1, 2], [3]])


def test_empty_header_is_refused():
    with pytest.raises(ValueError, match="header must be a non-empty sequence of strings"):
        markdown_table([], [])


def test_negative_decimals_are_refused():
    with pytest.raises(ValueError, match="decimals must be >= 0, got -1"):
        markdown_table(["a"], [[1.0]], decimals=-1)


def test_wrong_number_of_decimals_is_refused():
    with pytest.raises(ValueError, match=r"decimals must give one number per column \(2\), got 1"):
        markdown_table(["a", "b"], [[1.0, 2.0]], decimals=[3])


def test_non_finite_value_is_refused():
    with pytest.raises(ValueError, match=r"rows\[0\]\[0\] must be finite, got nan"):
        markdown_table(["a"], [[float("nan")]])


def test_value_of_another_type_is_refused():
    with pytest.raises(TypeError, match=r"rows\[0\]\[1\] must be a string or a real number, got None"):
        markdown_table(["a", "b"], [[1.0, None]])


def test_wavelength_row_is_a_named_tuple():
    assert WavelengthRow(0, 1.0, 2 * math.pi)._fields == ("pair", "rate", "wavelength")


# --- the worked examples, pinned against math.sin and math.cos ---------------


def test_position_zero_of_depth_fifty():
    assert sinusoidal_encoding(1, 50)[0].tolist() == [0.0, 1.0] * 25


def test_position_five_of_depth_fifty_against_math():
    row = sinusoidal_encoding(6, 50, dtype="float64")[5]
    for column in (0, 1, 2, 3, 48, 49):
        angle = paper_angle(5, column, 50)
        expected = math.sin(angle) if column % 2 == 0 else math.cos(angle)
        assert math.isclose(row[column], expected, rel_tol=1e-13, abs_tol=1e-15), column
    # The corrected values of the erratum, to the digits the chapter states.
    assert round(row[2], 4) == -0.3123 and round(row[3], 4) == -0.95
    assert round(row[48], 7) == 0.0007227 and round(row[49], 8) == 0.99999974


def test_seed_values_for_position_five_are_wrong():
    row = sinusoidal_encoding(6, 50, dtype="float64")[5]
    # The seed's first pair is right to two decimals ...
    assert (round(row[0], 2), round(row[1], 2)) == (-0.96, 0.28)
    # ... but its second pair and its last pair are not.
    assert abs(row[2] - (-0.85)) > 0.5 and abs(row[3] - 0.52) > 1.0
    assert abs(row[48] - 5e-4) > 2e-4
    # -0.85 is the sine of the angle with exponent 1/50 instead of 2/50.
    assert round(math.sin(5 / 10000 ** (1 / 50)), 2) == -0.85


def test_depth_four_rates_one_and_one_hundredth():
    table = sinusoidal_encoding(5, 4, dtype="float64")
    for position in range(5):
        expected = [
            math.sin(position),
            math.cos(position),
            math.sin(position / 100),
            math.cos(position / 100),
        ]
        np.testing.assert_allclose(table[position], expected, rtol=1e-13, atol=1e-15)


def test_depth_fourteen_wavelengths():
    lengths = [row.wavelength for row in wavelength_rows(14)]
    expected = [2 * math.pi * 10000 ** (2 * i / 14) for i in range(7)]
    np.testing.assert_allclose(lengths, expected, rtol=1e-14)
    assert round(lengths[-1], 1) == 16855.9


def test_positions_22_and_60_nearly_coincide_in_columns_100_and_101():
    table = sinusoidal_encoding(61, 512, dtype="float64")
    gap = np.linalg.norm(table[22, 100:102] - table[60, 100:102])
    assert gap < 0.006
    assert round(wavelength_rows(512, pairs=[50])[0].wavelength, 2) == 37.97
    # The seed's second claim: 25 and 35 are far apart even in the sine alone.
    assert round(abs(table[25, 100] - table[35, 100]), 3) == 0.367
