"""T5's relative-position buckets: hand-checked values and the properties of the definition."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pe_lib.t5 import bucket_matrix, bucket_starts, bucket_thresholds, relative_position_bucket


@st.composite
def settings(draw):
    bidirectional = draw(st.booleans())
    num_buckets = 2 * draw(st.integers(2, 32)) if bidirectional else draw(st.integers(2, 64))
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_distance = draw(st.integers(per_direction // 2 + 1, 1000))
    return {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}


def test_hand_checked_bidirectional_defaults():
    # 16 buckets per direction, 8 exact; 8 + floor(ln(n/8) / ln(16) * 8) beyond.
    offsets = [0, -1, -7, -8, -11, -12, -16, -90, -91, -128, -5000, 1, 7, 12, 5000]
    expected = [0, 1, 7, 8, 8, 9, 10, 14, 15, 15, 15, 17, 23, 25, 31]
    assert relative_position_bucket(offsets).tolist() == expected


def test_hand_checked_causal_defaults():
    # 32 buckets, 16 exact; 16 + floor(ln(n/16) / ln(8) * 16) beyond; the future goes to 0.
    offsets = [0, -1, -15, -16, -32, -99, -113, -128, 3, 500]
    expected = [0, 1, 15, 16, 21, 30, 31, 31, 0, 0]
    assert relative_position_bucket(offsets, bidirectional=False).tolist() == expected


@given(settings())
def test_monotone_in_the_distance_on_each_side(kwargs):
    distances = np.arange(0, 2 * kwargs["max_distance"] + 2)
    backward = relative_position_bucket(-distances, **kwargs)
    assert np.all(np.diff(backward) >= 0)
    if kwargs["bidirectional"]:
        assert np.all(np.diff(relative_position_bucket(distances[1:], **kwargs)) >= 0)


@given(settings())
def test_small_distances_get_a_bucket_each(kwargs):
    per_direction = kwargs["num_buckets"] // 2 if kwargs["bidirectional"] else kwargs["num_buckets"]
    exact = np.arange(per_direction // 2)
    assert relative_position_bucket(-exact, **kwargs).tolist() == exact.tolist()
    if kwargs["bidirectional"]:
        assert relative_position_bucket(exact[1:], **kwargs).tolist() == (exact[1:] + per_direction).tolist()


@given(settings())
def test_everything_from_max_distance_on_shares_the_last_bucket(kwargs):
    per_direction = kwargs["num_buckets"] // 2 if kwargs["bidirectional"] else kwargs["num_buckets"]
    far = kwargs["max_distance"] + np.array([0, 1, 7, 10**6])
    assert set(relative_position_bucket(-far, **kwargs).tolist()) == {per_direction - 1}
    if kwargs["bidirectional"]:
        assert set(relative_position_bucket(far, **kwargs).tolist()) == {kwargs["num_buckets"] - 1}


@given(settings())
def test_sign_split_and_range(kwargs):
    offsets = np.arange(-3 * kwargs["max_distance"], 3 * kwargs["max_distance"] + 1)
    buckets = relative_position_bucket(offsets, **kwargs)
    assert buckets.min() == 0 and buckets.max() == kwargs["num_buckets"] - 1
    if kwargs["bidirectional"]:
        half = kwargs["num_buckets"] // 2
        assert np.all(buckets[offsets <= 0] < half) and np.all(buckets[offsets > 0] >= half)
    else:
        assert np.all(buckets[offsets > 0] == 0)


def test_every_default_bucket_but_one_is_used():
    # Offset 0 belongs to the backward half, so the forward half's distance-0
    # bucket, number 16, is never used.
    buckets = relative_position_bucket(np.arange(-200, 201))
    assert sorted(set(buckets.tolist())) == [b for b in range(32) if b != 16]


def test_log_spaced_buckets_widen():
    widths = np.diff(bucket_starts())
    assert widths[:8].tolist() == [1] * 8
    assert np.all(np.diff(widths[8:]) >= 0) and widths[-1] > 20


def test_bucket_matrix_depends_only_on_the_offset():
    matrix = bucket_matrix(40, bidirectional=False, num_buckets=8, max_distance=20)
    for c in range(-39, 40):
        assert len(set(np.diagonal(matrix, offset=c).tolist())) == 1
    assert matrix[39, 0] == 7 and matrix[0, 39] == 0


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: relative_position_bucket([1], num_buckets=7), ValueError, ["num_buckets", "even", "7"]),
        (lambda: relative_position_bucket([1], num_buckets=2), ValueError, ["num_buckets", ">= 4", "2"]),
        (lambda: relative_position_bucket([1], bidirectional=False, num_buckets=1), ValueError,
         ["num_buckets", "1"]),
        (lambda: relative_position_bucket([1], num_buckets=32.0), TypeError, ["num_buckets", "32.0"]),
        (lambda: relative_position_bucket([1], max_distance=8), ValueError, ["max_distance", "8"]),
        (lambda: relative_position_bucket([1], max_distance=-3), ValueError, ["max_distance", "-3"]),
        (lambda: relative_position_bucket([1], bidirectional="yes"), TypeError, ["bidirectional", "'yes'"]),
        (lambda: relative_position_bucket([1.5, 2.0]), TypeError, ["offsets", "1.5"]),
        (lambda: bucket_matrix(0), ValueError, ["length", "0"]),
        (lambda: bucket_starts(num_buckets=5), ValueError, ["num_buckets", "5"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert all(word in str(raised.value) for word in words)


# --- exactness: an independent reference with exact rational arithmetic -----------------


def exact_bucket(offset: int, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> int:
    """T5's bucket from its definition, the floor found by exact comparisons of fractions.

    floor(ln(n/E) / ln(D/E) * (B - E)) is the largest k with (n/E)**(B-E) >= (D/E)**k.
    """
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    first = per_direction if bidirectional and offset > 0 else 0
    distance = abs(offset) if bidirectional else max(-offset, 0)
    exact = per_direction // 2
    if distance < exact:
        return first + distance
    ratio, top = Fraction(distance, exact), Fraction(max_distance, exact)
    k = 0
    while ratio ** (per_direction - exact) >= top ** (k + 1):
        k += 1
    return first + min(exact + k, per_direction - 1)


@pytest.mark.parametrize(
    ("offset", "num_buckets", "max_distance", "bidirectional", "expected"),
    [
        (-10, 20, 160, True, 6),  # floor(5 ln 2 / ln 32) = 1; the float64 quotient is 0.9999999999999999
        (10, 20, 160, True, 16),
        (-20, 20, 160, True, 7),
        (-80, 20, 160, True, 9),
        (80, 20, 160, True, 19),
        (-10, 10, 160, False, 6),
        (-20, 20, 320, False, 12),  # causal: floor(10 ln 2 / ln 32) = 2
    ],
)
def test_offsets_where_the_formula_lands_on_an_integer(offset, num_buckets, max_distance, bidirectional, expected):
    options = {"num_buckets": num_buckets, "max_distance": max_distance, "bidirectional": bidirectional}
    assert exact_bucket(offset, **options) == expected
    assert int(relative_position_bucket(offset, **options)) == expected


@given(
    st.integers(min_value=-3000, max_value=3000),
    st.integers(min_value=2, max_value=40),
    st.integers(min_value=1, max_value=2000),
    st.booleans(),
)
def test_every_setting_agrees_with_exact_arithmetic(offset, half, max_distance, bidirectional):
    num_buckets = 2 * half if bidirectional else half
    per_direction = half
    assume(max_distance > per_direction // 2)
    options = {"num_buckets": num_buckets, "max_distance": max_distance, "bidirectional": bidirectional}
    assert int(relative_position_bucket(offset, **options)) == exact_bucket(offset, **options)


@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 9), (32, 10), (64, 17), (20, 160), (8, 4)])
def test_bucket_starts_for_settings_with_empty_buckets(num_buckets, max_distance):
    starts = bucket_starts(num_buckets=num_buckets, max_distance=max_distance)
    per_direction = num_buckets // 2
    assert starts.shape == (per_direction,) and np.all(np.diff(starts) >= 0)
    for bucket, start in enumerate(starts):
        # the smallest distance whose bucket is at least `bucket`, by brute force
        smallest = next(n for n in range(10 * max_distance) if exact_bucket(-n, num_buckets=num_buckets,
                                                                             max_distance=max_distance) >= bucket)
        assert start == smallest


def test_thirty_two_buckets_up_to_nine_leave_buckets_nine_to_fourteen_empty():
    starts = bucket_starts(num_buckets=32, max_distance=9)
    assert starts.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8] + [9] * 7
    assert set(relative_position_bucket(-np.arange(100), num_buckets=32, max_distance=9).tolist()) == set(
        range(9)
    ) | {15}


@pytest.mark.parametrize(
    ("offset", "num_buckets", "max_distance", "expected"),
    [
        # 5 causal buckets: E = 5 // 2 = 2 exact; distance 3 gets 2 + floor(ln 1.5 / ln 5 * 3) = 2 + 0.
        (-3, 5, 10, 2),
        (-1, 5, 10, 1),
        (-2, 5, 10, 2),
        (-5, 5, 10, 3),  # 2 + floor(ln 2.5 / ln 5 * 3) = 2 + floor(1.70)
        (-9, 5, 10, 4),
        # 7 causal buckets: E = 3; distance 3 opens bucket 3.
        (-3, 7, 20, 3),
    ],
)
def test_odd_causal_bucket_counts_take_half_rounded_down_as_exact(offset, num_buckets, max_distance, expected):
    options = {"num_buckets": num_buckets, "max_distance": max_distance, "bidirectional": False}
    assert exact_bucket(offset, **options) == expected
    assert int(relative_position_bucket(offset, **options)) == expected


def test_bucket_starts_marks_an_empty_bucket_by_repeating_the_next_entry():
    # bidirectional, 10 buckets (5 per direction, 2 exact), max_distance 3: distance 2 is in bucket 2,
    # distance 3 already in the last, 4; no distance falls in bucket 3.
    starts = bucket_starts(num_buckets=10, max_distance=3)
    assert starts.tolist() == [0, 1, 2, 3, 3]
    used = set(relative_position_bucket(-np.arange(50), num_buckets=10, max_distance=3).tolist())
    assert used == {0, 1, 2, 4}
    # the contract of the first docstring line: entry b is the smallest distance whose bucket is b or more
    first_line = bucket_starts.__doc__.splitlines()[0]
    assert "whose bucket is ``b`` or more" in first_line
    assert "or more" in bucket_thresholds.__doc__.splitlines()[0]
