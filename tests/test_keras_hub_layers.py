"""The course's layers agree with keras-hub's layers of the same job.

keras-hub's outputs come from ``tests/data/keras_hub_reference.json``, made once by
``tests/data/make_keras_hub_reference.py`` in an environment of its own, with the
versions recorded in the file; this test never imports keras_hub.

How keras-hub's conventions map to the course's (read from keras-hub's source):

- ``SinePositionEncoding(max_wavelength=N)`` returns the encoding alone, for the
  caller to add; ``PositionalEncoding(base=N)`` returns the input plus the
  encoding, so the test adds the input to keras-hub's output. Both interleave:
  column ``2i`` is the sine and ``2i + 1`` the cosine of ``p * N**(-2i/D)``
  (an odd width ends with a sine), the course's default ``layout="interleaved"``;
  ``start_index`` is the course's ``start``.
- ``RotaryEmbedding(max_wavelength=N, scaling_factor=s)`` (``rope_type="linear"``)
  pairs feature ``i`` with ``i + d/2`` (``rotate_half``), the course's default
  ``layout="half-split"``, and divides every rate ``N**(-2i/d)`` by ``s``: the
  course's position interpolation, ``method="rope_pi", scale=s``
  (plain ``"rope"`` when ``s = 1``). ``sequence_axis``, ``feature_axis`` and
  ``start_index`` have the same names and meanings in both.

Tolerance. keras-hub forms every angle ``p * rate`` in float32 and the course's
layers compute in float32 from float64 tables, so the two differ by float32
round-off that grows with the angle: a float32 cosine or sine of an angle
``a`` may be off by 2 float32 steps of ``a`` plus 2 steps at 1
(:func:`peer_reference.float32_angle_tolerance`). A sine encoding adds one more
step of the sum, when it is added to the input; a rotation sums two such
products, each scaled by at most ``max|x|``. Below position 40 the values agree
to within 1e-6; at position 1,003 to within 1e-4 (a float32 step there is
6e-5 radians). The wrong layout misses by more than 1, so the bounds cannot
pass by accident.
"""

import numpy as np
import pytest

from layer_harness import to_numpy
from peer_reference import FLOAT32_STEP, KERAS_HUB, array, float32_angle_tolerance
from pe_lib.frequencies import angle_rates
from pe_lib.layers import PositionalEncoding, RotaryEmbedding
from pe_lib.rope import apply_rope
from pe_lib.sinusoidal import sinusoidal_encoding

SINE = KERAS_HUB["sine_position_encoding"]
ROTARY = KERAS_HUB["rotary_embedding"]


def test_the_reference_records_how_it_was_made():
    assert KERAS_HUB["made_by"] == "tests/data/make_keras_hub_reference.py"
    assert {"keras-hub", "keras", "jax", "numpy"} <= set(KERAS_HUB["versions"])
    assert KERAS_HUB["keras_backend"] == "jax"
    assert all(case["rope_type"] == "linear" for case in ROTARY)


# --- SinePositionEncoding and PositionalEncoding ------------------------------------------


def sine_rates(width: int, base: float) -> np.ndarray:
    """The rate of every column: pair ``i``'s rate for both of its columns."""
    return np.repeat(angle_rates(width, base=float(base)), 2)[:width]


def sine_bound(case, values) -> np.ndarray:
    positions = np.arange(case["length"]) + case["start_index"]
    rates = sine_rates(case["width"], case["max_wavelength"])
    return float32_angle_tolerance(positions, rates) + FLOAT32_STEP * np.abs(values)


@pytest.mark.parametrize("case", SINE, ids=lambda c: f"L{c['length']}-D{c['width']}-N{c['max_wavelength']}"
                                                     f"-start{c['start_index']}")
def test_positional_encoding_is_keras_hub_sine_position_encoding_added(case):
    x, encoding = array(case["x"]), array(case["encoding"])
    peer_sum = x + encoding  # keras-hub returns the encoding; the course's layer adds it
    start, length = case["start_index"], case["length"]
    layer = PositionalEncoding(max_length=start + length, base=float(case["max_wavelength"]))
    ours = to_numpy(layer(x.astype("float32"), start=start)).astype(np.float64)
    assert np.all(np.abs(ours - peer_sum) <= sine_bound(case, ours)), np.abs(ours - peer_sum).max()
    table = sinusoidal_encoding(length, case["width"], base=float(case["max_wavelength"]), start=start,
                                dtype="float64")
    for row in encoding:
        assert np.all(np.abs(table - row) <= sine_bound(case, table))
    half_split = PositionalEncoding(max_length=start + length, base=float(case["max_wavelength"]),
                                    layout="half-split")
    assert np.abs(to_numpy(half_split(x.astype("float32"), start=start)) - peer_sum).max() > 1.0


# --- RotaryEmbedding ------------------------------------------------------------------------


def course_rotary(case, layout="half-split") -> RotaryEmbedding:
    """The course's layer with keras-hub's settings: scaling_factor s is position interpolation."""
    scale = case["scaling_factor"]
    method = {"method": "rope"} if scale == 1.0 else {"method": "rope_pi", "scale": scale}
    return RotaryEmbedding(base=float(case["max_wavelength"]), layout=layout,
                           sequence_axis=case["sequence_axis"], feature_axis=case["feature_axis"], **method)


def rotary_rates_and_positions(case) -> tuple[np.ndarray, np.ndarray]:
    """The scaled rate of every pair and the position of every step of ``case``."""
    depth = case["shape"][case["feature_axis"]]
    rates = angle_rates(depth, base=float(case["max_wavelength"])) / case["scaling_factor"]
    positions = np.arange(case["shape"][case["sequence_axis"]]) + case["start_index"]
    return rates, positions


def rotary_bound(case, x) -> np.ndarray:
    """The bound per (position, feature), with the sequence and feature axes moved last."""
    rates, positions = rotary_rates_and_positions(case)
    return 2 * np.tile(float32_angle_tolerance(positions, rates), 2) * np.abs(x).max()


def last_two(values, case) -> np.ndarray:
    return np.moveaxis(values, (case["sequence_axis"], case["feature_axis"]), (-2, -1))


@pytest.mark.parametrize("case", ROTARY, ids=lambda c: f"{'x'.join(map(str, c['shape']))}-N{c['max_wavelength']}"
                                                       f"-s{c['scaling_factor']:g}-start{c['start_index']}")
def test_rotary_embedding_is_keras_hub_rotary_embedding(case):
    x, peer = array(case["x"]), array(case["rotated"])
    bound = rotary_bound(case, x)
    ours = to_numpy(course_rotary(case)(x.astype("float32"), start_index=case["start_index"]))
    gap = last_two(np.abs(ours.astype(np.float64) - peer), case)
    assert np.all(gap <= bound), gap.max()
    rates, positions = rotary_rates_and_positions(case)
    reference = apply_rope(last_two(x, case), positions, rates=rates, sequence_axis=x.ndim - 2)
    assert np.all(np.abs(reference - last_two(peer, case)) <= bound)
    interleaved = to_numpy(course_rotary(case, layout="interleaved")(x.astype("float32"),
                                                                     start_index=case["start_index"]))
    assert np.abs(interleaved - peer).max() > 1.0
