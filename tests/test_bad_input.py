"""Every kind of bad input raises an error that names the argument and the value."""

import numpy as np
import pytest

from pe_lib import angle_rates, nearest_pairs, sinusoidal_encoding, wavelengths
from pe_lib.course.lessons.periodicity import binary_code


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"length": -1}, ValueError, ["length", "-1"]),
        ({"length": 2.5}, TypeError, ["length", "2.5"]),
        ({"length": 8.0}, TypeError, ["length", "8.0"]),
        ({"length": "8"}, TypeError, ["length", "'8'"]),
        ({"length": True}, TypeError, ["length", "True"]),
        ({"depth": 0}, ValueError, ["depth", "0"]),
        ({"depth": -4}, ValueError, ["depth", "-4"]),
        ({"depth": 4.0}, TypeError, ["depth", "4.0"]),
        ({"base": 0}, ValueError, ["base", "0"]),
        ({"base": -10000.0}, ValueError, ["base", "-10000.0"]),
        ({"base": float("nan")}, ValueError, ["base", "nan"]),
        ({"base": float("inf")}, ValueError, ["base", "inf"]),
        ({"base": "10000"}, TypeError, ["base", "'10000'"]),
        ({"layout": "stacked"}, ValueError, ["layout", "'stacked'"]),
        ({"start": -3}, ValueError, ["start", "-3"]),
        ({"start": 1.5}, TypeError, ["start", "1.5"]),
        ({"dtype": "int32"}, TypeError, ["dtype", "'int32'"]),
        ({"dtype": "no-such-type"}, TypeError, ["dtype", "'no-such-type'"]),
    ],
)
def test_sinusoidal_encoding_rejects(kwargs, error, words):
    arguments = {"length": 8, "depth": 4, **kwargs}
    with pytest.raises(error) as raised:
        sinusoidal_encoding(**arguments)
    for word in words:
        assert word in str(raised.value)


def test_numpy_integers_are_accepted():
    assert sinusoidal_encoding(np.int64(3), np.int32(4)).shape == (3, 4)


@pytest.mark.parametrize("function", [angle_rates, wavelengths])
def test_frequency_helpers_reject_bad_depth_and_base(function):
    with pytest.raises(ValueError, match="depth"):
        function(0)
    with pytest.raises(ValueError, match="base"):
        function(8, base=-1.0)


def test_nearest_pairs_rejects_bad_codes_and_counts():
    with pytest.raises(ValueError, match=r"codes must be 1-D or 2-D, got shape \(2, 2, 2\)"):
        nearest_pairs(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="codes must be finite"):
        nearest_pairs([0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="count must be at most 3 for 3 positions, got 4"):
        nearest_pairs([0.0, 1.0, 2.0], count=4)
    with pytest.raises(ValueError, match="count must be >= 1, got 0"):
        nearest_pairs([0.0, 1.0], count=0)


def test_binary_code_rejects_zero_bits():
    with pytest.raises(ValueError, match="bits must be >= 1, got 0"):
        binary_code(4, 0)
