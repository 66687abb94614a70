"""The four terms of an attention score, the offset measure, and the add-or-concatenate models."""

import math

import keras
import numpy as np
import pytest

import pe_lib
from pe_lib.course.lessons import attention_terms as at
from pe_lib.course.order import mixing as pm


def sinusoidal_rows(length, depth):
    """Interleaved sinusoidal codes from the definition, with math.sin and math.cos."""
    rows = np.empty((length, depth))
    for p in range(length):
        for i in range(depth // 2):
            angle = p / 10000.0 ** (2 * i / depth)
            rows[p, 2 * i], rows[p, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return rows


def random_case(seed=0, steps=7, depth=6, head_depth=3):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(steps, depth)), rng.normal(size=(steps, depth)),
            rng.normal(size=(depth, head_depth)), rng.normal(size=(depth, head_depth)))


def test_the_four_terms_sum_to_the_score_of_the_summed_inputs():
    tokens, positions, query_kernel, key_kernel = random_case()
    terms = at.score_terms(tokens, positions, query_kernel, key_kernel)
    inputs = tokens + positions
    queries, keys = inputs @ query_kernel, inputs @ key_kernel
    score = np.array([[sum(q * k) for k in keys] for q in queries])
    np.testing.assert_allclose(terms.total, score, rtol=1e-12, atol=1e-12)
    assert all(getattr(terms, name).dtype == np.float64 for name in at.TERM_NAMES)


def test_each_term_against_a_hand_computed_case():
    # x_0 = (1, 0), x_1 = (0, 1); p_0 = (0, 1), p_1 = (1, 1);
    # W_Q = (1, 2)^T and W_K = (3, 1)^T, so W_Q W_K^T = [[3, 1], [6, 2]].
    terms = at.score_terms([[1, 0], [0, 1]], [[0, 1], [1, 1]], [[1], [2]], [[3], [1]])
    # token-token is x_i A x_j^T = A itself, since the x are the unit vectors.
    np.testing.assert_array_equal(terms.token_token, [[3, 1], [6, 2]])
    # token-position: rows (3, 1) and (6, 2) of A against p_0 = (0, 1) and p_1 = (1, 1).
    np.testing.assert_array_equal(terms.token_position, [[1, 4], [2, 8]])
    # position-token: p_0 A = (6, 2) and p_1 A = (9, 3), against the unit vectors.
    np.testing.assert_array_equal(terms.position_token, [[6, 2], [9, 3]])
    # position-position: (6, 2) and (9, 3) against (0, 1) and (1, 1).
    np.testing.assert_array_equal(terms.position_position, [[2, 8], [3, 12]])


def test_identity_projections_give_a_position_term_of_the_offset_alone():
    codes = sinusoidal_rows(40, 16)
    terms = at.score_terms(np.zeros_like(codes), codes, np.eye(16), np.eye(16))
    offsets = np.subtract.outer(np.arange(40), np.arange(40))
    closed_form = sum(np.cos(offsets * 10000.0 ** (-2 * i / 16)) for i in range(8))
    np.testing.assert_allclose(terms.position_position, closed_form, rtol=0, atol=1e-12)
    assert at.offset_residual(terms.position_position) < 1e-12


def test_commuting_blocks_keep_the_position_term_offset_only_and_give_its_closed_form():
    depth, length = 8, 30
    rng = np.random.default_rng(3)
    part = at.rotation_commuting_part(rng.normal(size=(depth, depth)))
    codes = sinusoidal_rows(length, depth)
    scores = codes @ part @ codes.T
    p, q = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    # Block f is a I + b J: sin-cos pairs give a cos((p - q) w) + b sin((p - q) w).
    expected = np.zeros((length, length))
    for f in range(depth // 2):
        a, b = part[2 * f, 2 * f], part[2 * f, 2 * f + 1]
        rate = 10000.0 ** (-2 * f / depth)
        expected += a * np.cos((p - q) * rate) + b * np.sin((p - q) * rate)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)
    assert at.offset_residual(scores) < 1e-12


def test_random_projections_do_not_give_an_offset_only_term():
    codes = sinusoidal_rows(64, 16)
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(16, 4)) @ rng.normal(size=(16, 4)).T
    assert at.offset_residual(codes @ matrix @ codes.T) > 0.5


@pytest.mark.parametrize("break_it", ["reflection", "two frequencies"])
def test_both_conditions_are_needed(break_it):
    codes = sinusoidal_rows(64, 4)
    matrix = np.zeros((4, 4))
    if break_it == "reflection":
        # diag(1, -1) in the first block: sin p sin q - cos p cos q = -cos(p + q).
        matrix[0, 0], matrix[1, 1] = 1.0, -1.0
        p, q = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
        np.testing.assert_allclose(codes @ matrix @ codes.T, -np.cos(p + q), atol=1e-12)
    else:
        # A block between the sine-cosine pairs of two different frequencies.
        matrix[0:2, 2:4] = np.eye(2)
    assert at.offset_residual(codes @ matrix @ codes.T) > 0.5


def test_the_commuting_part_is_a_projection_onto_matrices_that_commute_with_rotations():
    rng = np.random.default_rng(1)
    matrix = rng.normal(size=(6, 6))
    part = at.rotation_commuting_part(matrix)
    np.testing.assert_allclose(at.rotation_commuting_part(part), part, rtol=0, atol=1e-15)
    # What is removed is orthogonal to what is kept (Frobenius inner product).
    assert abs(np.sum((matrix - part) * part)) < 1e-12
    theta = 0.7
    block = np.array([[math.cos(theta), math.sin(theta)], [-math.sin(theta), math.cos(theta)]])
    rotation = np.kron(np.eye(3), block)
    np.testing.assert_allclose(part @ rotation, rotation @ part, rtol=0, atol=1e-12)
    assert not np.allclose(matrix @ rotation, rotation @ matrix)


def test_rotation_share_against_the_projection_onto_i_and_j():
    # Each diagonal 2 x 2 block B keeps <B, I> I / 2 + <B, J> J / 2, and I and J
    # have squared norm 2: its share is sum (<B, I>^2 + <B, J>^2) / 2 over the whole.
    rng = np.random.default_rng(4)
    matrix = rng.normal(size=(8, 8))
    turn = np.array([[0.0, 1.0], [-1.0, 0.0]])
    kept = sum((np.trace(block) ** 2 + np.sum(block * turn) ** 2) / 2
               for block in (matrix[k:k + 2, k:k + 2] for k in range(0, 8, 2)))
    assert at.rotation_share(matrix) == pytest.approx(100 * kept / np.sum(matrix**2), rel=1e-12)
    # Scaled rotations only: all of it; reflections and cross-pair blocks: none of it.
    rotations = np.kron(np.diag([1.0, -2.0]), np.eye(2)) + np.kron(np.diag([0.5, 3.0]), turn)
    assert at.rotation_share(rotations) == pytest.approx(100.0, rel=1e-15)
    reflections = np.kron(np.eye(2), np.array([[1.0, 2.0], [2.0, -1.0]]))
    assert at.rotation_share(reflections) == 0.0
    assert at.rotation_share(np.kron(np.array([[0.0, 1.0], [1.0, 0.0]]), np.ones((2, 2)))) == 0.0


def test_residual_share_against_hand_computed_values():
    # Group means 1.5 and 3.5 leave squares 4 * 0.25 = 1 of a total 5.
    assert at.residual_share([1, 2, 3, 4], [0, 0, 1, 1]) == pytest.approx(math.sqrt(1 / 5), rel=1e-15)
    assert at.residual_share([1, 2, 3, 4], [0, 1, 2, 3]) == 0.0
    assert at.residual_share([1, 2, 3, 4], [7, 7, 7, 7]) == pytest.approx(1.0, rel=1e-15)


def test_offset_residual_pools_leading_axes():
    offsets = np.subtract.outer(np.arange(5), np.arange(5)).T
    stacked = np.stack([np.sin(offsets), 2 + np.sin(offsets)])
    # Offset-only in each table, but the second is shifted: the offset explains part only.
    assert at.offset_residual(stacked[0]) < 1e-15
    assert 0.5 < at.offset_residual(stacked) < 1.0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: at.score_terms(np.ones((3, 4)), np.ones((3, 5)), np.ones((4, 2)), np.ones((4, 2))), "positions"),
        (lambda: at.score_terms(np.ones((3, 4)), np.ones((3, 4)), np.ones((5, 2)), np.ones((5, 2))), "query_kernel"),
        (lambda: at.score_terms(np.ones(4), np.ones(4), np.ones((4, 2)), np.ones((4, 2))), "tokens"),
        (lambda: at.score_terms(np.ones((3, 4)), np.full((3, 4), np.nan), np.ones((4, 2)), np.ones((4, 2))),
         "positions"),
        (lambda: at.offset_residual(np.ones((3, 4))), "scores"),
        (lambda: at.residual_share([1.0, 2.0], [0]), "groups"),
        (lambda: at.residual_share([1.0, 1.0], [0, 1]), "values"),
        (lambda: at.rotation_commuting_part(np.ones((3, 3))), "matrix"),
        (lambda: at.rotation_share(np.zeros((4, 4))), "matrix"),
        (lambda: pm.mixing_classifier("add", token_depth=8, position_depth=4), "position_depth"),
        (lambda: pm.mixing_classifier("concatenate", token_depth=8), "position_depth"),
        (lambda: pm.mixing_classifier("stack", token_depth=8), "mixing"),
        (lambda: pm.attention_parameters(0, heads=2), "width"),
    ],
)
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_residual_share_wants_integer_groups():
    with pytest.raises(TypeError, match="groups"):
        at.residual_share([1.0, 2.0], [0.5, 1.5])


@pytest.mark.parametrize("width, heads, key_depth", [(32, 2, None), (48, 4, None), (20, 2, 7)])
def test_attention_parameters_match_a_keras_layer(width, heads, key_depth):
    layer = keras.layers.MultiHeadAttention(heads, key_depth or width // heads)
    layer(np.zeros((1, 3, width)), np.zeros((1, 3, width)))
    assert pm.attention_parameters(width, heads=heads, key_depth=key_depth) == layer.count_params()


def test_concatenated_positions_put_the_code_after_the_tokens():
    tokens = np.arange(2 * 5 * 3, dtype="float32").reshape(2, 5, 3)
    out = keras.ops.convert_to_numpy(pm.ConcatenatedPositions(8, 4)(tokens))
    np.testing.assert_array_equal(out[..., :3], tokens)
    for sequence in out:
        np.testing.assert_allclose(sequence[:, 3:], sinusoidal_rows(5, 4), rtol=0, atol=1e-7)


def test_the_two_front_ends_have_the_widths_they_claim():
    added = pm.mixing_classifier("add", token_depth=16)
    concatenated = pm.mixing_classifier("concatenate", token_depth=16, position_depth=16)
    assert added.get_layer("attention").count_params() == pm.attention_parameters(16, heads=2)
    assert concatenated.get_layer("attention").count_params() == pm.attention_parameters(32, heads=2)
    tokens = np.ones((2, 5), dtype="int32")
    assert tuple(added(tokens).shape) == tuple(concatenated(tokens).shape) == (2, 1)
    # The added code is the library's sinusoidal table.
    embedded = added.get_layer("token_embedding")(tokens)
    with_codes = keras.ops.convert_to_numpy(added.get_layer("positions")(embedded))
    np.testing.assert_allclose(with_codes - keras.ops.convert_to_numpy(embedded), np.broadcast_to(
        pe_lib.sinusoidal_encoding(5, 16), (2, 5, 16)), rtol=0, atol=1e-6)
