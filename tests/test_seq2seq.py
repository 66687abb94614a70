"""The reversal task, the encoder-decoder and greedy decoding (pe_lib.course.encoder_decoder.model)."""

import numpy as np
import pytest

from pe_lib.course.encoder_decoder import model as seq2seq


def test_targets_are_the_sources_reversed_by_plain_python():
    data = seq2seq.reversal_task(20, 7, vocabulary_size=12, seed=5)
    for source, decoder_input, target in zip(data.sources, data.decoder_inputs, data.targets):
        source, target = source.tolist(), target.tolist()
        assert target == list(reversed(source))
        assert decoder_input.tolist() == [1] + target[:-1]
        assert all(2 <= token < 12 for token in source)


def test_sorting_targets_are_the_same_sources_sorted_by_plain_python():
    data = seq2seq.sorting_task(20, 7, vocabulary_size=12, seed=5)
    reversal = seq2seq.reversal_task(20, 7, vocabulary_size=12, seed=5)
    np.testing.assert_array_equal(data.sources, reversal.sources)
    for source, decoder_input, target in zip(data.sources, data.decoder_inputs, data.targets):
        target = target.tolist()
        assert target == sorted(source.tolist())
        assert decoder_input.tolist() == [1] + target[:-1]


def test_training_refuses_an_unknown_task():
    with pytest.raises(ValueError, match="task"):
        seq2seq.train_encoder_decoders(("none",), sequences=8, epochs=1, task=sorted)


def test_a_model_trained_beside_others_takes_the_steps_it_takes_alone():
    # The summed loss: no weight is shared, so each branch's gradient is its
    # own loss's gradient, and Adam's steps are per weight.
    settings = dict(sequences=64, epochs=2, batch_size=16, seed=3)
    beside = seq2seq.train_encoder_decoders(("sinusoidal", "none"), feed_forward=False, **settings)["none"]
    alone = seq2seq.train_encoder_decoders(("none",), feed_forward=False, **settings)["none"]
    untrained = seq2seq.encoder_decoder("none", feed_forward=False, seed=3)
    for trained, single, start in zip(beside.weights, alone.weights, untrained.weights):
        assert trained.path == single.path
        np.testing.assert_allclose(np.asarray(trained), np.asarray(single), rtol=0, atol=1e-5)
    moved = max(float(np.abs(np.asarray(a) - np.asarray(b)).max()) for a, b in zip(alone.weights, untrained.weights))
    assert moved > 1e-2  # the comparison is of trained weights, not of two initial ones


def test_generator_is_seeded():
    first = seq2seq.reversal_task(4, 6, seed=3)
    again = seq2seq.reversal_task(4, 6, seed=3)
    other = seq2seq.reversal_task(4, 6, seed=4)
    np.testing.assert_array_equal(first.sources, again.sources)
    assert not np.array_equal(first.sources, other.sources)


class _Successor:
    """A hand-built model: the next token is the last written token plus one."""

    def __init__(self, vocabulary_size):
        self.vocabulary_size = vocabulary_size

    def __call__(self, inputs, training=False):
        _, written = inputs
        following = (np.asarray(written) + 1) % self.vocabulary_size
        return np.eye(self.vocabulary_size, dtype="float32")[following]


class _Copier:
    """A hand-built model: at step t it writes source token t."""

    def __call__(self, inputs, training=False):
        sources, written = (np.asarray(array) for array in inputs)
        logits = np.zeros(written.shape + (20,), dtype="float32")
        steps = written.shape[1]
        logits[np.arange(len(sources)), steps - 1, sources[:, steps - 1]] = 1.0
        return logits


def test_greedy_decoding_follows_the_largest_logit_step_by_step():
    sources = np.zeros((2, 4), dtype="int32")
    # From START = 1: 2, 3, 4, 5, then wraps at the vocabulary size 6.
    np.testing.assert_array_equal(seq2seq.greedy_decode(_Successor(6), sources, steps=5),
                                  [[2, 3, 4, 5, 0], [2, 3, 4, 5, 0]])
    sources = np.array([[5, 9, 2], [7, 7, 3]], dtype="int32")
    np.testing.assert_array_equal(seq2seq.greedy_decode(_Copier(), sources), sources)


def test_greedy_decoding_refuses_sources_longer_than_the_position_table_in_plain_words():
    model = seq2seq.encoder_decoder("learned", max_length=8, feed_forward=False)
    with pytest.raises(ValueError) as refused:
        seq2seq.greedy_decode(model, seq2seq.reversal_task(2, 12).sources)
    message = str(refused.value)
    assert message.startswith("sources has 12 steps") and "max_length 8" in message
    assert "\x1b" not in message  # no terminal formatting reaches a page that prints it
    with pytest.raises(ValueError, match="steps must be at most .* max_length 8, got 9"):
        seq2seq.greedy_decode(model, seq2seq.reversal_task(2, 8).sources, steps=9)
    assert seq2seq.greedy_decode(model, seq2seq.reversal_task(2, 8).sources).shape == (2, 8)


def test_exact_match_and_token_accuracy_against_hand_counts():
    predictions = [[1, 2, 3], [1, 2, 4], [0, 0, 0], [1, 2, 3]]
    targets = [[1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]]
    assert seq2seq.exact_match(predictions, targets) == 2 / 4
    assert seq2seq.token_accuracy(predictions, targets) == 8 / 12


def test_decoder_is_causal_and_model_without_positions_ignores_source_order():
    data = seq2seq.reversal_task(3, 6, seed=1)
    model = seq2seq.encoder_decoder("none", max_length=6)
    logits = np.asarray(model([data.sources, data.decoder_inputs]))
    changed = data.decoder_inputs.copy()
    changed[:, 4:] = 2
    changed_logits = np.asarray(model([data.sources, changed]))
    np.testing.assert_allclose(changed_logits[:, :4], logits[:, :4], atol=1e-5)
    assert not np.allclose(changed_logits[:, 4:], logits[:, 4:], atol=1e-3)
    shuffled = data.sources[:, np.random.default_rng(0).permutation(6)]
    np.testing.assert_allclose(np.asarray(model([shuffled, data.decoder_inputs])), logits, atol=1e-5)


def test_learned_positions_refuse_a_longer_input_sinusoidal_accepts_it():
    longer = seq2seq.reversal_task(1, 10)
    inputs = [longer.sources, longer.decoder_inputs]
    with pytest.raises(ValueError, match="10 steps but max_length is 8"):
        seq2seq.encoder_decoder("learned", max_length=8)(inputs)
    assert seq2seq.encoder_decoder("sinusoidal", max_length=16)(inputs).shape == (1, 10, 16)


def test_parameter_counts_with_and_without_feed_forward_by_hand():
    # Embedding 16*32; three attention layers of 2 heads of 16: query, key
    # and value 3*(32*32 + 32) plus output 32*32 + 32; three layer norms 2*32;
    # logits 32*16 + 16. A feed-forward layer: 32*64 + 64 + 64*32 + 32, and
    # its layer norm 2*32; there are two, one per block.
    attention = 3 * (32 * 32 + 32) + 32 * 32 + 32
    without = 16 * 32 + 3 * attention + 3 * 2 * 32 + 32 * 16 + 16
    with_feed_forward = without + 2 * (32 * 64 + 64 + 64 * 32 + 32 + 2 * 32)
    small = seq2seq.encoder_decoder("none", feed_forward=False)
    assert small.count_params() == without
    assert seq2seq.encoder_decoder("none").count_params() == with_feed_forward
    assert not [layer.name for layer in small.layers if "_ff" in layer.name]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: seq2seq.reversal_task(0, 5), "count"),
        (lambda: seq2seq.reversal_task(3, -1), "length"),
        (lambda: seq2seq.reversal_task(3, 5, vocabulary_size=2), "vocabulary_size"),
        (lambda: seq2seq.encoder_decoder("rope"), "method"),
        (lambda: seq2seq.encoder_decoder("none", depth=30, heads=4), "depth"),
        (lambda: seq2seq.encoder_decoder("none", feed_forward="no"), "feed_forward"),
        (lambda: seq2seq.greedy_decode(_Copier(), np.array([3, 4])), "sources"),
        (lambda: seq2seq.exact_match([[1, 2]], [[1, 2, 3]]), "predictions"),
        (lambda: seq2seq.train_encoder_decoders(("none", "none")), "methods"),
    ],
)
def test_bad_arguments_raise_errors_naming_them(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()
