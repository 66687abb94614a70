"""How alike a position table's rows are: the two means against a loop over pairs,
and the chance gap against rows drawn at random."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pe_lib.course.order.table_similarity import chance_gap, near_and_far_similarity


def test_the_two_means_are_those_of_every_pair_of_rows_one_step_and_far_apart():
    table = np.random.default_rng(3).normal(size=(12, 32))
    near, far = [], []
    for a, b in itertools.combinations(range(10), 2):
        cosine = table[a] @ table[b] / (np.linalg.norm(table[a]) * np.linalg.norm(table[b]))
        if b - a == 1:
            near.append(cosine)
        if b - a >= 4:
            far.append(cosine)
    measured = near_and_far_similarity(table, rows=10, far=4)
    np.testing.assert_allclose(measured, (np.mean(near), np.mean(far)), rtol=0, atol=1e-14)


def test_the_chance_gap_is_three_standard_deviations_of_the_gap_for_random_rows():
    rng = np.random.default_rng(0)
    limit = np.sqrt(6 / (24 + 32))  # Glorot uniform for a 24 x 32 table, as Keras draws it
    gaps = []
    for _ in range(4000):
        near, far = near_and_far_similarity(rng.uniform(-limit, limit, size=(24, 32)), rows=12, far=6)
        gaps.append(near - far)
    # 4,000 draws estimate a standard deviation within about 2 %.
    assert abs(np.std(gaps) * 3 / chance_gap(32, rows=12, far=6) - 1) < 0.06
    assert abs(np.mean(gaps)) < 0.01


@pytest.mark.parametrize("call, named", [
    (lambda: near_and_far_similarity(np.ones(5), rows=3, far=2), "table must be a matrix"),
    (lambda: near_and_far_similarity(np.ones((5, 2)), rows=6, far=2), "rows=6"),
    (lambda: near_and_far_similarity(np.ones((5, 2)), rows=4, far=4), "far=4"),
    (lambda: chance_gap(0, rows=12, far=6), "width=0"),
    (lambda: chance_gap(32, rows=12, far=1), "far=1"),
])
def test_bad_input_is_named(call, named):
    with pytest.raises(ValueError, match=named):
        call()
