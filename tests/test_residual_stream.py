"""The residual-stream experiment: blocks, the stack and the linear read-out of positions."""

import numpy as np
import pytest

from pe_lib.course.lessons.residual_stream import (
    feed_forward_layer, layer_norm, position_recoverability, random_blocks, run_stack)


def test_layer_norm_by_hand():
    # [1, 2, 3]: mean 2, deviations [-1, 0, 1], mean square 2/3.
    scale = np.sqrt(3 / 2)
    np.testing.assert_allclose(layer_norm(np.array([1.0, 2.0, 3.0])), [-scale, 0.0, scale], rtol=1e-12)


def test_a_residual_block_with_zero_weights_passes_its_input_on():
    blocks = random_blocks(6, 2, heads=3, seed=4)
    zero = [{**block, **{key: np.zeros_like(value) for key, value in block.items() if key != "heads"}}
            for block in blocks]
    inputs = np.random.default_rng(0).normal(size=(3, 5, 6))
    for state in run_stack(inputs, zero):
        np.testing.assert_array_equal(state, inputs)


def test_one_attention_head_by_hand():
    # Depth 2, one head, identity projections, feed-forward weights zero: the
    # block adds softmax(n n^T / sqrt 2) n to h, where n is h normalised.
    h = np.array([[[1.0, -1.0], [3.0, 1.0]]])
    block = {"query": np.eye(2), "key": np.eye(2), "value": np.eye(2), "output": np.eye(2),
             "expand": np.zeros((2, 8)), "project": np.zeros((8, 2)), "heads": 1}
    n = np.array([[1.0, -1.0], [1.0, -1.0]])  # each row centred and scaled to mean square 1
    # Both rows of n are equal, so every score is 2 / sqrt(2) and the weights are 1/2 each.
    expected = h + 0.5 * (n[0] + n[1])
    np.testing.assert_allclose(run_stack(h, [block])[1], expected, rtol=0, atol=1e-9)


def test_feed_forward_layer_by_hand():
    # Depth 2: h = (1, -1) normalises to itself; the expansion copies it into the
    # first two of 8 columns, ReLU keeps (1, 0, 0, ...), and the projection's
    # first row, (2, 3), is what comes out.
    expand = np.zeros((2, 8))
    expand[0, 0] = expand[1, 1] = 1.0
    project = np.zeros((8, 2))
    project[0] = [2.0, 3.0]
    project[1] = [5.0, 7.0]  # reads the negative half, which ReLU zeroes
    out = feed_forward_layer(np.array([[[1.0, -1.0]]]), {"expand": expand, "project": project})
    np.testing.assert_allclose(out, [[[2.0, 3.0]]], rtol=0, atol=1e-9)


def test_without_the_residual_connection_each_block_replaces_its_input():
    blocks = random_blocks(8, 1, heads=2, seed=0)
    inputs = np.random.default_rng(1).normal(size=(2, 4, 8))
    added, replaced = run_stack(inputs, blocks)[1], run_stack(inputs, blocks, residual=False)[1]
    # Replaced states are normalised: mean 0 and mean square 1 in every vector.
    np.testing.assert_allclose(replaced.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose((replaced**2).mean(axis=-1), 1.0, rtol=1e-9)
    assert not np.allclose(added, replaced)


def test_recoverability_of_an_exact_linear_function_is_one():
    rng = np.random.default_rng(2)
    codes = rng.normal(size=(6, 4))
    mixing = rng.normal(size=(4, 4))
    hidden = np.broadcast_to(codes @ mixing, (30, 6, 4)) + 2.0  # any invertible map, plus a constant
    assert position_recoverability(hidden, codes) == pytest.approx(1.0, abs=1e-9)


def test_recoverability_of_what_ignores_the_position_is_near_zero():
    rng = np.random.default_rng(3)
    codes = rng.normal(size=(8, 4))
    assert position_recoverability(rng.normal(size=(400, 8, 4)), codes) < 0.05


def test_recoverability_against_a_hand_computed_fit():
    # One feature, one code column, two steps with codes 0 and 1; the hidden value
    # is the code plus a per-sequence offset that the read-out cannot remove.
    codes = np.array([[0.0], [1.0]])
    offsets = np.array([0.0, 1.0, 0.0, 1.0])[:, None, None]
    hidden = codes[None] + offsets  # sequences 0, 1 fit the read-out; 2, 3 score it
    # Fitted on hidden values [0, 1, 1, 2] -> codes [0, 1, 0, 1]: slope 1/2,
    # constant 0; predictions on the held-out half [0, .5, .5, 1] against [0, 1, 0, 1]
    # leave 2 * (1/2)^2 = 1/2 of a total 4 * (1/2)^2 = 1: R^2 = 1/2.
    assert position_recoverability(hidden, codes) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "word"),
    [
        (lambda: random_blocks(6, 1, heads=4), "depth"),
        (lambda: run_stack(np.zeros((2, 3)), []), "inputs"),
        (lambda: run_stack(np.zeros((1, 2, 4)), random_blocks(6, 1, heads=2)), "depth"),
        (lambda: position_recoverability(np.zeros((4, 3, 2)), np.zeros((2, 2))), "hidden"),
        (lambda: position_recoverability(np.zeros((4, 3, 2)), np.zeros((3, 2)), train_share=1.0), "train_share"),
    ],
)
def test_bad_input_is_refused_by_name(call, word):
    with pytest.raises(ValueError, match=word):
        call()
