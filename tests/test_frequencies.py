"""Angle rates and wavelengths: a geometric series from 2*pi towards 2*pi*base."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pe_lib import angle_rates, sinusoidal_encoding, wavelengths


def test_rates_for_depth_four():
    np.testing.assert_allclose(angle_rates(4), [1.0, 0.01], rtol=1e-15)


def test_odd_depth_has_one_more_sine_rate():
    assert angle_rates(5).shape == (3,)


@given(st.integers(min_value=2, max_value=2048), st.floats(min_value=2.0, max_value=1e6))
def test_wavelengths_form_a_geometric_series(depth, base):
    lengths = wavelengths(depth, base=base)
    assert math.isclose(lengths[0], 2 * math.pi)
    if len(lengths) > 1:
        np.testing.assert_allclose(lengths[1:] / lengths[:-1], base ** (2 / depth), rtol=1e-12)
    # The longest wavelength stays below 2*pi*base, whatever the depth.
    assert lengths[-1] < 2 * math.pi * base


def test_each_column_pair_repeats_after_its_wavelength():
    # Column pair 50 of a depth-512 table has a wavelength of about 38 positions.
    wavelength = wavelengths(512)[50]
    angle = 2 * math.pi * 22 / wavelength
    table = sinusoidal_encoding(2, 512, start=22, dtype="float64")
    assert math.isclose(table[0, 100], math.sin(angle), abs_tol=1e-12)
    assert math.isclose(table[0, 101], math.cos(angle), abs_tol=1e-12)
