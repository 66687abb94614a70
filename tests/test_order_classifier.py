"""The order classifier: its size, its blindness without positions, and a short training run."""

import numpy as np
import pytest
from keras.ops import convert_to_numpy

import keras

from pe_lib.course.order.classifier import (
    encoder_block,
    order_accuracy,
    order_classifier,
    run_order_experiment,
    run_order_experiments,
)
from pe_lib.course.order.tasks import marker_order_task

# depth 32, 2 heads of 16, feed-forward 64, vocabulary 16, one block:
# embedding 16*32; query, key, value 3*(32*32 + 32); output 32*32 + 32;
# two layer norms 2*64; expand 32*64 + 64; project 64*32 + 32; logit 32 + 1.
PARAMETERS_WITHOUT_POSITIONS = 512 + 3 * 1056 + 1056 + 128 + 2112 + 2080 + 33


def test_parameter_counts_by_hand():
    assert PARAMETERS_WITHOUT_POSITIONS == 9089
    assert order_classifier("none").count_params() == 9089
    assert order_classifier("sinusoidal").count_params() == 9089
    assert order_classifier("learned", max_length=24).count_params() == 9089 + 24 * 32


def test_encoder_block_weights_by_hand_and_names_by_tag():
    # depth 8, 2 heads, feed-forward 16: attention 4*(8*8 + 8), two layer
    # norms 2*16, expand 8*16 + 16, project 16*8 + 8.
    x = keras.Input(shape=(None, 8))
    block = keras.Model(x, encoder_block(x, heads=2, hidden=16, tag="_3"))
    assert block.count_params() == 288 + 32 + 144 + 136
    names = {layer.name for layer in block.layers[1:]}
    assert names == {"attention_3", "norm_3_a", "expand_3", "project_3", "norm_3_b"}


def test_every_kind_maps_token_ids_to_one_logit():
    tokens, _ = marker_order_task(2, 7)
    for method in ("sinusoidal", "learned", "none"):
        assert tuple(order_classifier(method, max_length=8, blocks=2)(tokens).shape) == (4, 1)


def test_same_seed_same_weights():
    first, second = (order_classifier("learned", seed=3) for _ in range(2))
    for a, b in zip(first.weights, second.weights):
        np.testing.assert_array_equal(convert_to_numpy(a), convert_to_numpy(b))


def test_without_positions_mirror_pairs_get_the_same_logit():
    tokens, labels = marker_order_task(200, 12, seed=5)
    logits = convert_to_numpy(order_classifier("none", seed=1)(tokens))[:, 0]
    np.testing.assert_allclose(logits[0::2], logits[1::2], rtol=1e-5, atol=1e-6)
    assert order_accuracy(order_classifier("none", seed=1), tokens, labels) == 0.5


def test_with_positions_mirror_pairs_are_told_apart():
    tokens, _ = marker_order_task(50, 12, seed=5)
    logits = convert_to_numpy(order_classifier("sinusoidal", seed=1)(tokens))[:, 0]
    assert np.max(np.abs(logits[0::2] - logits[1::2])) > 1e-3


def test_order_accuracy_counts_signs():
    class Fixed:
        def __call__(self, tokens, training=False):
            return np.array([[2.0], [-1.0], [0.5], [-3.0]])

    assert order_accuracy(Fixed(), np.zeros((4, 3)), np.array([1, 0, 0, 0])) == 0.75


TRAINING = {"pairs": 600, "test_pairs": 100, "epochs": 4, "batch_size": 32, "test_lengths": (12, 16), "seed": 0}


@pytest.fixture(scope="module")
def side_by_side():
    """A learned and a position-free model trained together, as the chapters do."""
    return run_order_experiments(("learned", "none"), **TRAINING)


def test_short_training_learns_the_order_and_leaves_far_rows_untouched(side_by_side):
    run = side_by_side["learned"]
    assert run.test_accuracy[12] > 0.8
    assert set(run.test_accuracy) == {12, 16}
    assert len(run.train_accuracy) == 4
    assert run.trainable_parameters == 9089 + 16 * 32
    table = convert_to_numpy(run.model.get_layer("embedding").position_embedding.table)
    np.testing.assert_array_equal(table[12:], run.initial_position_table[12:])
    assert not np.allclose(table[:12], run.initial_position_table[:12])


def test_no_position_model_stays_at_chance(side_by_side):
    assert side_by_side["none"].test_accuracy == {12: 0.5, 16: 0.5}
    assert side_by_side["none"].initial_position_table is None


def test_side_by_side_training_equals_training_alone(side_by_side):
    together = side_by_side["learned"]
    alone = run_order_experiment("learned", **TRAINING)
    for a, b in zip(together.model.weights, alone.model.weights):
        np.testing.assert_allclose(convert_to_numpy(a), convert_to_numpy(b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(together.train_accuracy, alone.train_accuracy, atol=1e-6)
    assert together.test_accuracy == alone.test_accuracy


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"method": "rotary"}, ValueError, ["method", "'rotary'"]),
        ({"method": "rope"}, ValueError, ["method", "'rope'", "'sinusoidal'"]),
        ({"depth": 30, "heads": 4}, ValueError, ["depth", "30", "heads", "4"]),
        ({"heads": 0}, ValueError, ["heads", "0"]),
        ({"learning_rate": -1.0}, ValueError, ["learning_rate", "-1.0"]),
        ({"decay_steps": 0}, ValueError, ["decay_steps", "0"]),
    ],
)
def test_order_classifier_rejects(kwargs, error, words):
    with pytest.raises(error) as raised:
        order_classifier(**{"method": "none", **kwargs})
    assert all(word in str(raised.value) for word in words)


@pytest.mark.parametrize(
    ("methods", "words"),
    [((), "at least one"), (("learned", "learned"), "at most once"), (("rotary",), "'rotary'")],
)
def test_run_order_experiments_rejects_bad_methods(methods, words):
    with pytest.raises(ValueError, match=words):
        run_order_experiments(methods)


def test_run_order_experiment_rejects_bad_lengths():
    with pytest.raises(ValueError, match="train_length must be >= 2, got 1"):
        run_order_experiment("none", train_length=1)
    with pytest.raises(ValueError, match="test_lengths must be >= 2, got 0"):
        run_order_experiment("none", test_lengths=(12, 0))


def test_order_accuracy_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"got \(4, 3\) and \(3,\)"):
        order_accuracy(order_classifier("none"), np.zeros((4, 3), "int32"), np.zeros(3))


def test_each_test_set_comes_from_the_seed_and_its_length_alone(monkeypatch):
    """Testing one more length leaves the sequences tested at the others unchanged."""
    import pe_lib.course.order.classifier as module

    drawn = []

    def recording(pairs, length, **options):
        drawn.append((length, options["seed"]))
        return marker_order_task(pairs, length, **options)

    monkeypatch.setattr(module, "marker_order_task", recording)
    options = {"train_length": 12, "pairs": 8, "test_pairs": 4, "epochs": 1, "seed": 3}
    run_order_experiments(("none",), test_lengths=(12, 14, 16), **options)
    training, *tests = drawn
    drawn.clear()
    run_order_experiments(("none",), test_lengths=(16,), **options)
    assert drawn == [training, tests[2]]
    assert len({seed for _, seed in tests}) == 3


def test_every_order_experiment_starts_adam_at_one_rate():
    """The classifier, the loop and the experiment state one default rate, in their signatures."""
    import inspect

    from pe_lib.course.order.classifier import train_side_by_side
    from pe_lib.course.order.mixing import mixing_classifier, run_mixing_experiment

    defaults = {function.__name__: inspect.signature(function).parameters["learning_rate"].default
                for function in (order_classifier, train_side_by_side, run_order_experiments,
                                 mixing_classifier, run_mixing_experiment)
                if "learning_rate" in inspect.signature(function).parameters}
    assert set(defaults) >= {"order_classifier", "train_side_by_side", "run_order_experiments"}
    assert set(defaults.values()) == {3e-3}


def test_the_compiled_optimizer_decays_only_when_asked():
    fixed = order_classifier("none", learning_rate=0.01)
    assert float(keras.ops.convert_to_numpy(fixed.optimizer.learning_rate)) == pytest.approx(0.01)
    decaying = order_classifier("none", learning_rate=0.01, decay_steps=10)
    schedule = decaying.optimizer.get_config()["learning_rate"]
    assert schedule["class_name"] == "CosineDecay"
    assert (schedule["config"]["initial_learning_rate"], schedule["config"]["decay_steps"]) == (0.01, 10)


def test_the_mixing_experiment_trains_and_tests_on_the_task_it_is_given():
    from pe_lib.course.order.mixing import run_mixing_experiment
    from pe_lib.course.order.tasks import adjacent_markers_task

    drawn = []

    def recorded(pairs, length, *, seed):
        drawn.append((pairs, length))
        return adjacent_markers_task(pairs, length, seed=seed)

    runs = run_mixing_experiment({"add": {"mixing": "add", "token_depth": 8}}, length=6, pairs=8,
                                 test_pairs=5, epochs=1, task=recorded)
    assert drawn == [(8, 6), (5, 6)]
    # five mirror pairs: accuracy in tenths
    assert runs["add"].test_accuracy * 10 == pytest.approx(round(runs["add"].test_accuracy * 10))
    with pytest.raises(ValueError, match="task must be a function.*'adjacent'"):
        run_mixing_experiment({"add": {"mixing": "add", "token_depth": 8}}, pairs=2, task="adjacent")
