"""The length-extrapolation model: its attention layer, its task, and a short training run."""

import keras
import numpy as np
import pytest
from keras.ops import convert_to_numpy

from pe_lib.alibi import alibi_bias
from pe_lib.course.extrapolation.experiment import (
    answer_scores,
    extrapolation_model,
    query_task,
    evaluate_with_scaling,
    run_extrapolation,
    with_query_token,
)
from pe_lib.course.order.classifier import order_accuracy
from pe_lib.layers import PositionalSelfAttention
from pe_lib.rope import apply_rope

SMALL = {"depth": 8, "heads": 2}


def layer_and_input(positions, steps=6, seed=0):
    layer = PositionalSelfAttention(heads=2, key_dim=4, method=positions)
    keras.utils.set_random_seed(seed)
    x = np.random.default_rng(seed).normal(size=(1, steps, 8)).astype("float32")
    layer(x)
    return layer, x


def test_parameter_count_by_hand():
    # query, key, value: 8 x (2 * 4); output: (2 * 4) x 8; no biases.
    layer, _ = layer_and_input("none")
    assert layer.count_params() == 4 * 64
    # embedding 17 x 8, layer norm 2 x 8, logit 8 + 1; learned adds 6 x 8.
    assert extrapolation_model("rope", train_length=6, **SMALL).count_params() == 256 + 136 + 16 + 9
    assert extrapolation_model("learned", train_length=6, **SMALL).count_params() == 417 + 48


@pytest.mark.parametrize("positions", ["none", "rope", "alibi"])
def test_attention_is_causal(positions):
    layer, x = layer_and_input(positions)
    changed = x.copy()
    changed[0, 4:] += 1.0
    before, after = convert_to_numpy(layer(x)), convert_to_numpy(layer(changed))
    np.testing.assert_array_equal(before[0, :4], after[0, :4])
    assert not np.allclose(before[0, 4:], after[0, 4:])


def test_rope_scores_match_pe_lib_rope():
    layer, x = layer_and_input("rope")
    queries = (x[0] @ convert_to_numpy(layer.query.kernel)).reshape(6, 2, 4).transpose(1, 0, 2)
    keys = (x[0] @ convert_to_numpy(layer.key.kernel)).reshape(6, 2, 4).transpose(1, 0, 2)
    expected = apply_rope(queries.astype(np.float64)) @ np.swapaxes(apply_rope(keys.astype(np.float64)), 1, 2) / 2
    scores = convert_to_numpy(layer.scores(x))[0]
    lower = np.tril(np.ones((6, 6), dtype=bool))
    np.testing.assert_allclose(scores[:, lower], expected[:, lower], rtol=1e-4, atol=1e-4)
    assert np.all(scores[:, ~lower] == -1e9)


def test_alibi_scores_are_the_plain_scores_plus_the_alibi_bias():
    alibi, x = layer_and_input("alibi")
    plain, _ = layer_and_input("none")
    plain.set_weights(alibi.get_weights())
    difference = convert_to_numpy(alibi.scores(x))[0] - convert_to_numpy(plain.scores(x))[0]
    lower = np.tril(np.ones((6, 6), dtype=bool))
    np.testing.assert_allclose(difference[:, lower], alibi_bias(6, 2)[:, lower], rtol=0, atol=1e-5)


@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_scores_of_a_repeated_token_depend_only_on_the_offset(positions):
    layer = PositionalSelfAttention(heads=2, key_dim=4, method=positions)
    x = np.tile(np.random.default_rng(1).normal(size=(1, 1, 8)), (1, 9, 1)).astype("float32")
    layer(x)
    scores = convert_to_numpy(layer.scores(x))[0]
    for c in range(-8, 1):
        diagonal = np.diagonal(scores, offset=c, axis1=1, axis2=2)
        np.testing.assert_allclose(diagonal, diagonal[:, :1].repeat(diagonal.shape[1], axis=1), atol=1e-5)


def test_the_scores_method_shown_in_the_book_fits_its_column():
    """Train short, test long shows ``PositionalSelfAttention.scores`` as it is
    (a literalinclude with ``:dedent: 4``): every line fits 80 characters,
    and the method stays short enough to read on a page."""
    import inspect
    import textwrap

    lines = textwrap.dedent(inspect.getsource(PositionalSelfAttention.scores)).splitlines()
    too_wide = [line for line in lines if len(line) > 80]
    assert not too_wide, too_wide
    assert len(lines) <= 30, len(lines)


def test_answer_scores_are_the_last_row_of_the_layer_scores():
    for method in ("rope", "alibi", "none"):
        model = extrapolation_model(method, train_length=6, seed=2, **SMALL)
        tokens = np.array([[1] + [5] * 10 + [16]], dtype="int32")
        embedded = model.get_layer("embedding")(tokens)
        last_row = convert_to_numpy(model.get_layer("attention").scores(embedded))[0, :, -1, 0]
        np.testing.assert_allclose(answer_scores(model, 1, [11])[:, 0], last_row, rtol=1e-4, atol=1e-4)


def test_query_task_ends_with_the_query_token_and_keeps_mirror_pairs():
    tokens, labels = query_task(20, 9, seed=4)
    assert tokens.shape == (40, 9) and np.all(tokens[:, -1] == 16) and np.all(tokens[:, :-1] < 16)
    np.testing.assert_array_equal(labels[0::2] + labels[1::2], np.ones(20))


def test_without_positions_mirror_pairs_get_the_same_answer():
    tokens, labels = query_task(100, 20, seed=5)
    model = extrapolation_model("none", train_length=20, seed=1, **SMALL)
    logits = convert_to_numpy(model(tokens))[:, 0]
    np.testing.assert_allclose(logits[0::2], logits[1::2], rtol=1e-5, atol=1e-5)
    assert order_accuracy(model, tokens, labels) == 0.5


@pytest.mark.parametrize("method", ["sinusoidal", "learned", "rope", "alibi"])
def test_with_positions_mirror_pairs_are_told_apart(method):
    tokens, _ = query_task(50, 8, seed=5)
    logits = convert_to_numpy(extrapolation_model(method, train_length=8, seed=1, **SMALL)(tokens))[:, 0]
    assert np.max(np.abs(logits[0::2] - logits[1::2])) > 1e-3


def test_same_seed_same_weights():
    first, second = (extrapolation_model("rope", train_length=6, seed=3, **SMALL) for _ in range(2))
    for a, b in zip(first.weights, second.weights):
        np.testing.assert_array_equal(convert_to_numpy(a), convert_to_numpy(b))


def test_layer_config_round_trip():
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope", base=500.0, name="a")
    clone = PositionalSelfAttention.from_config(layer.get_config())
    assert (clone.heads, clone.key_dim, clone.method, clone.base) == (2, 4, "rope", 500.0)


def test_only_the_learned_model_refuses_longer_inputs():
    tokens, _ = query_task(2, 12, seed=0)
    for method in ("sinusoidal", "learned", "rope", "rope_pi", "rope_ntk", "alibi", "t5", "shaw", "none"):
        model = extrapolation_model(method, train_length=6, **SMALL)
        if method == "learned":
            with pytest.raises(ValueError, match="12 steps but max_length is 6"):
                model(tokens)
        else:
            assert model(tokens).shape == (4, 1)


def test_a_short_alibi_run_learns_and_is_repeatable():
    options = {"train_length": 8, "test_lengths": (8, 16), "pairs": 1000, "test_pairs": 50, "epochs": 3,
               "learning_rate": 0.01, **SMALL}
    first, second = run_extrapolation("alibi", **options), run_extrapolation("alibi", **options)
    assert first.accuracy == second.accuracy
    assert first.accuracy[8] >= 0.8


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: PositionalSelfAttention(2, 4, method="t6"), ValueError, ["method", "'t6'"]),
        (lambda: PositionalSelfAttention(0, 4), ValueError, ["heads", "0"]),
        (lambda: PositionalSelfAttention(2, 3, method="rope"), ValueError, ["key_dim", "even", "3"]),
        (lambda: PositionalSelfAttention(2, 4)(np.zeros((2, 8), "float32")), ValueError, ["shape", "(2, 8)"]),
        (lambda: extrapolation_model("relative", train_length=8), ValueError, ["method", "'relative'"]),
        (lambda: extrapolation_model("rope", train_length=8, depth=10, heads=4), ValueError,
         ["depth", "10", "heads", "4"]),
        (lambda: extrapolation_model("rope", train_length=8.0), TypeError, ["train_length", "8.0"]),
        (lambda: with_query_token(np.zeros(3, dtype=int), 16), ValueError, ["tokens", "(3,)"]),
        (lambda: with_query_token(np.zeros((2, 3), dtype=int), -1), ValueError, ["query_token", "-1"]),
        (lambda: query_task(2, 2), ValueError, ["length", "2"]),
        (lambda: run_extrapolation("rope", epochs=0), ValueError, ["epochs", "0"]),
        (lambda: answer_scores(extrapolation_model("sinusoidal", train_length=8, **SMALL), 1, [1]), ValueError,
         ["model", "'extrapolation_sinusoidal'"]),
        (lambda: answer_scores(extrapolation_model("rope", train_length=8, **SMALL), 1, [-1]), ValueError,
         ["distances", "-1"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert all(word in str(raised.value) for word in words)


def test_scaling_at_test_time_keeps_the_trained_weights_and_the_test_sequences():
    options = {"train_length": 8, "test_lengths": (8, 16), "pairs": 200, "test_pairs": 40, "epochs": 1, **SMALL}
    run = run_extrapolation("rope", **options)
    plain = evaluate_with_scaling(run, "rope", (8, 16))
    assert plain == run.accuracy  # same weights, same sequences, no scaling
    for method in ("rope_pi", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_yarn_paper", "rope_llama3"):
        scaled = evaluate_with_scaling(run, method, (8, 16, 24))
        assert scaled[8] == run.accuracy[8]  # scale 1 at the training length changes nothing
        assert set(scaled) == {8, 16, 24} and all(0.0 <= value <= 1.0 for value in scaled.values())
    # A fixed scale is used at every length: 2 at length 16 is what length 16 picks by itself.
    fixed = evaluate_with_scaling(run, "rope_pi", (8, 16), scale=2.0)
    assert fixed[16] == evaluate_with_scaling(run, "rope_pi", (16,))[16]
    with pytest.raises(ValueError, match="'alibi'"):
        evaluate_with_scaling(run, "alibi", (16,))
    with pytest.raises(ValueError, match="beta_fast"):
        evaluate_with_scaling(run, "rope_pi", (16,), beta_fast=16.0)


def test_answer_scores_of_a_partial_rotary_model_and_a_refusal_for_dynamic_ntk():
    model = extrapolation_model("rope", train_length=6, method_options={"rotary_fraction": 0.5}, **SMALL)
    attention = model.get_layer("attention")
    tokens = np.array([[1, 3, 3, 3, 3, 16]], dtype="int32")
    model(tokens)
    scores = convert_to_numpy(attention.scores(convert_to_numpy(model.get_layer("embedding")(tokens))))
    # a single layer: the last row's score for the key at position 0 is the answer score at distance 5
    assert answer_scores(model, 1, [5])[:, 0] == pytest.approx(scores[0, :, 5, 0], abs=1e-4)
    dynamic = extrapolation_model("rope_dynamic", train_length=6, method_options={"original_length": 6}, **SMALL)
    with pytest.raises(ValueError, match="rope_dynamic"):
        answer_scores(dynamic, 1, [1, 2])


def relative_table_before_and_after_training(method, options=None):
    """Shaw's key table or T5's biases of an extrapolation model, before and after
    one pass over 400 sequences of 16 steps."""
    model = extrapolation_model(method, train_length=16, seed=4, method_options=options)
    positions = model.get_layer("attention").positions
    table = positions.key_table if method == "shaw" else positions.embeddings
    before = convert_to_numpy(table).copy()
    tokens, labels = query_task(200, 16, seed=4)
    model.fit(tokens, labels, epochs=1, batch_size=50, verbose=0)
    return before, convert_to_numpy(table)


@pytest.mark.parametrize("method", ["shaw", "t5"])
def test_training_short_leaves_the_parameters_of_longer_offsets_at_their_start(method):
    """Train short, test long: trained at 16 steps, Shaw's rows for offsets past 15
    (clipped to the row for -16) and T5's buckets for distances past 15 never
    move, because no training offset reaches them; the others do move."""
    before, after = relative_table_before_and_after_training(method)
    if method == "shaw":  # rows for offsets -16..16; a causal model reads -15..0
        reached = np.arange(16 - 15, 16 + 1)
    else:  # causal buckets: 0..15 one distance each, the log-spaced ones after
        reached = np.arange(16)
    untouched = np.setdiff1d(np.arange(len(before)), reached)
    np.testing.assert_array_equal(after[untouched], before[untouched])
    assert np.all(np.abs(after[reached] - before[reached]).max(axis=1) > 0)


@pytest.mark.parametrize("method, options", [("shaw", {"max_distance": 8}),
                                             ("t5", {"num_buckets": 16, "max_distance": 16})])
def test_set_so_that_training_reaches_them_every_parameter_a_longer_offset_uses_moves(method, options):
    """Train short, test long's other settings: Shaw clipped at 8 and T5's buckets ending
    at 16. Trained at 16 steps, every row or bucket that a causal model reads
    moves, the clipped row and the last bucket included."""
    before, after = relative_table_before_and_after_training(method, options)
    read = np.arange(0, 8 + 1) if method == "shaw" else np.arange(16)  # offsets -8..0; every bucket
    assert np.all(np.abs(after[read] - before[read]).max(axis=1) > 0)
