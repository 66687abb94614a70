"""trained_terms (the four terms of a trained head) and seeds (the per-seed CSV files)."""

from pathlib import Path

import keras
import numpy as np
import pytest

from pe_lib.course.order.mixing import mixing_classifier
from pe_lib.course.order.seeds import (ORDER_LONGEST, ORDER_METHODS, ORDER_TEST_LENGTHS, ORDER_TRAIN_LENGTH, _write,
                                       control_sequences, read_rows)
from pe_lib.course.order.tasks import FILLER_START, marker_order_task, marker_positions, with_fillers
from pe_lib.course.order.trained_terms import head_measures, head_terms

DATA = Path(__file__).resolve().parents[1] / "chapters" / "data"


@pytest.fixture(scope="module")
def model():
    return mixing_classifier("add", token_depth=8, seed=3)


def test_terms_add_up_to_the_scores_of_the_layer_inputs(model):
    # The input of the attention layer, through the model's own layers, then
    # the head's scores written out without biases.
    sequences, _ = marker_order_task(4, 10, seed=2)
    front = keras.Model(model.input, model.get_layer("positions").output)
    inputs = keras.ops.convert_to_numpy(front(sequences)).astype(np.float64)
    attention = model.get_layer("attention")
    for head in range(2):
        w_q = keras.ops.convert_to_numpy(attention.query_dense.kernel)[:, head]
        w_k = keras.ops.convert_to_numpy(attention.key_dense.kernel)[:, head]
        scores = (inputs @ w_q) @ np.swapaxes(inputs @ w_k, 1, 2)
        terms = head_terms(model, sequences, head)
        parts = sum(terms[name] for name in
                    ("token_token", "token_position", "position_token", "position_position"))
        np.testing.assert_allclose(terms["total"], scores, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(parts, terms["total"], rtol=0, atol=1e-12)


def test_measures_on_terms_built_by_hand():
    # Two sequences of 3 steps. The position-position term is a function of the
    # offset j - i, the token-position term a function of the key step alone.
    sequences = np.array([[3, 4, 5], [5, 4, 3]])
    offset = np.subtract.outer(np.arange(3), np.arange(3)).T
    pp = np.broadcast_to(offset.astype(float), (2, 3, 3))
    tp = np.broadcast_to(np.array([1.0, -2.0, 4.0]), (2, 3, 3))
    pt = np.broadcast_to(np.arange(9.0).reshape(3, 3), (2, 3, 3))
    tt = np.zeros((2, 3, 3))
    terms = {"token_token": tt, "token_position": tp, "position_token": pt,
             "position_position": pp, "total": tt + tp + pt + pp}
    measures = head_measures(terms, sequences)
    assert measures["pp_rho"] == pytest.approx(0.0, abs=1e-12)
    assert measures["pp_by_key"] > 0.5  # a function of j - i, not of j
    assert measures["tt_size"] == 0.0
    total = terms["total"].std()
    assert measures["pp_size"] == pytest.approx(np.sqrt(4 / 3) / total)  # j - i over a 3 x 3 grid


def test_head_terms_names_a_missing_head(model):
    with pytest.raises(ValueError, match="head must be below 2, got 2"):
        head_terms(model, np.ones((1, 4), dtype=int), 2)


def test_rows_round_trip(tmp_path):
    rows = [{"seed": 0, "method": "learned", "accuracy_12": 0.998},
            {"seed": 1, "method": "sinusoidal", "accuracy_12": 1.0}]
    _write(tmp_path / "rows.csv", rows, {"command": "python3 tasks.py experiment order-seeds"})
    text = (tmp_path / "rows.csv").read_text()
    assert text.startswith("# command: python3 tasks.py experiment order-seeds\nseed,method,accuracy_12\n")
    assert read_rows(tmp_path / "rows.csv") == rows


def test_committed_files_hold_every_seed_and_model():
    order = read_rows(DATA / "order_seeds.csv")
    assert sorted((row["seed"], row["method"]) for row in order) == sorted(
        (seed, method) for seed in range(5) for method in ORDER_METHODS)
    assert all(0 <= row[f"accuracy_{length}"] <= 1 for row in order for length in ORDER_TEST_LENGTHS)
    assert all(0 <= row[f"accuracy_{ORDER_LONGEST}_{where}"] <= 1 for row in order for where in ("early", "late"))
    assert all(-1 <= row[f"similarity_{kind}"] <= 1 for row in order for kind in ("near", "far"))
    assert all(0 <= row[f"a_first_{ORDER_LONGEST}_{where}"] <= 1 for row in order for where in ("early", "late"))
    mixing = read_rows(DATA / "mixing_seeds.csv")
    assert sorted((row["seed"], row["front_end"]) for row in mixing) == sorted(
        (seed, name) for seed in range(5) for name in ("add", "concatenate_half"))
    heads = read_rows(DATA / "attention_heads_seeds.csv")
    assert sorted((row["seed"], row["head"]) for row in heads) == [(s, h) for s in range(5) for h in range(2)]
    adjacent = read_rows(DATA / "attention_adjacent_seeds.csv")
    assert sorted((row["seed"], row["head"]) for row in adjacent) == [(s, h) for s in range(5) for h in range(2)]
    assert all(0 <= row["accuracy"] <= 1 and 0 < row["rotation_share"] < 100 for row in adjacent)
    only = {"order_seeds.csv": "order", "mixing_seeds.csv": "mixing", "attention_heads_seeds.csv": "mixing",
            "attention_adjacent_seeds.csv": "adjacent"}
    for name, part in only.items():
        first = (DATA / name).read_text().splitlines()[0]
        assert first == f"# command: python3 tasks.py experiment order-seeds --only {part}"


def test_the_recorded_similarity_of_the_sinusoidal_table_is_its_mean_cosine_by_offset():
    """Rows of the sinusoidal table have norm sqrt(D/2), so two rows Delta apart
    have cosine similarity mean_i cos(omega_i Delta): the recorded near and far
    means of the fixed table follow from the rates alone."""
    width, far = 32, ORDER_TRAIN_LENGTH // 2
    rates = 10000.0 ** (-np.arange(0, width, 2) / width)
    by_offset = np.cos(np.outer(np.arange(ORDER_TRAIN_LENGTH), rates)).mean(axis=1)
    pairs = {offset: ORDER_TRAIN_LENGTH - offset for offset in range(far, ORDER_TRAIN_LENGTH)}
    expected_far = sum(by_offset[offset] * count for offset, count in pairs.items()) / sum(pairs.values())
    for row in read_rows(DATA / "order_seeds.csv"):
        if row["method"] == "sinusoidal":
            assert row["similarity_near"] == pytest.approx(by_offset[1], abs=1e-6)
            assert row["similarity_far"] == pytest.approx(expected_far, abs=1e-6)


def test_one_seeds_sinusoidal_model_answers_at_chance_past_18_tokens():
    """Learned or fixed names the seed whose sinusoidal model scores lowest at
    24 tokens, and the length from which it scores exactly one half; the
    other seeds' models stay above one half at every length."""
    sinusoidal = {row["seed"]: row for row in read_rows(DATA / "order_seeds.csv")
                  if row["method"] == "sinusoidal"}
    lowest = min(sinusoidal, key=lambda seed: sinusoidal[seed]["accuracy_24"])
    assert lowest == 3
    from_18 = [length for length in ORDER_TEST_LENGTHS if length >= 18]
    assert all(sinusoidal[3][f"accuracy_{length}"] == 0.5 for length in from_18)
    assert sinusoidal[3]["accuracy_16"] > 0.5
    # exactly one half because it answers "B first" (a negative logit) for every sequence
    assert sinusoidal[3]["a_first_24_early"] == sinusoidal[3]["a_first_24_late"] == 0.0
    assert all(row[f"accuracy_{length}"] > 0.5 for seed, row in sinusoidal.items() if seed != 3
               for length in ORDER_TEST_LENGTHS)


def test_the_control_moves_the_markers_and_nothing_else():
    """Early: the training-length sequences, then fillers; late: fillers first. Both hold the
    same markers in the same order, so the labels carry over; only their positions differ."""
    short, labels = marker_order_task(20, ORDER_TRAIN_LENGTH, seed=5)
    controls = control_sequences()
    assert set(controls) == {"early", "late"}
    (early, early_labels), (late, late_labels) = controls["early"], controls["late"]
    assert early.shape == late.shape == (1000, ORDER_LONGEST)
    assert np.array_equal(early_labels, late_labels)
    steps = ORDER_LONGEST - ORDER_TRAIN_LENGTH
    assert np.array_equal(early[:, :ORDER_TRAIN_LENGTH], late[:, steps:])
    assert np.array_equal(early[:, ORDER_TRAIN_LENGTH:], late[:, :steps])  # the same fillers
    first, second = marker_positions(early)
    assert first.max() < ORDER_TRAIN_LENGTH and second.max() < ORDER_TRAIN_LENGTH
    assert np.array_equal(early_labels, (first < second).astype(int))
    late_first, late_second = marker_positions(late)
    assert late_first.min() >= steps and np.array_equal(late_first, first + steps)
    # by hand: fillers come from the filler ids, after or before the row
    longer = with_fillers(short, 4, seed=1)
    assert np.array_equal(longer[:, :ORDER_TRAIN_LENGTH], short)
    assert longer[:, ORDER_TRAIN_LENGTH:].min() >= FILLER_START and longer.max() < 16
    assert np.array_equal(with_fillers(short, 4, before=True, seed=1)[:, 4:], short)
    assert longer.dtype == np.int32 and with_fillers(short, 0).shape == short.shape


@pytest.mark.parametrize(("arguments", "message"), [
    (dict(tokens=np.ones(3, dtype=int), steps=1), r"tokens must be 2-D \(sequences, steps\), got shape \(3,\)"),
    (dict(tokens=np.ones((1, 3), dtype=int), steps=-1), r"steps"),
    (dict(tokens=np.ones((1, 3), dtype=int), steps=1.5), r"steps"),
    (dict(tokens=np.ones((1, 3), dtype=int), steps=1, vocabulary_size=3), r"vocabulary_size"),
])
def test_with_fillers_refuses_bad_input(arguments, message):
    with pytest.raises((ValueError, TypeError), match=message):
        with_fillers(**arguments)
