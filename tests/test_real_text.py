"""The real-text language models: data, model, evaluation, the experiment and its CSV.

References are independent of the code under test: the split is checked by
searching each part's text for the passages of the others, the scoring of
the whole test text by scoring its windows cut out by hand, causality by changing
later characters, bits per character against probabilities worked by hand
with fractions, parameter counts against a count written out layer by layer.
"""

import csv
import dataclasses
import math
import statistics
from fractions import Fraction
from pathlib import Path

import keras
import matplotlib
import numpy as np
import pytest

from pe_lib.course.real_text import data
from pe_lib.course.real_text.training import (CONFIGS, ROPE_VARIANTS, TRAINED_METHODS, RealTextConfig, run_real_text,
                                     with_rope_variant)
from pe_lib.course.real_text.model import bits_per_character, language_model, position_losses
from pe_lib.layers import PositionalSelfAttention

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LARGE_CSV = ROOT / "chapters" / "data" / "real_text_large.csv"
CHAPTER = ROOT / "chapters" / "real_text.ipynb"

#: A configuration that trains in about a second: for checking the code path, not the numbers.
TINY = RealTextConfig("tiny", train_length=8, steps=3, batch_size=4, depth=8, heads=2, layers=2, feed_forward=1,
                      learning_rate=1e-2, scales=(1, 2, 4), methods=("rope", "learned", "alibi", "t5"))


# --- data ---------------------------------------------------------------------------------------


def test_split_covers_every_topic_once():
    train = set(data.training_topics())
    development, test = set(data.development_topics()), set(data.test_topics())
    assert train.isdisjoint(development) and train.isdisjoint(test) and development.isdisjoint(test)
    assert train | development | test == set(data.topics())
    assert development and test, "something must be held out"
    assert {data.split_topics(name) for name in data.SPLITS} == {
        data.training_topics(), data.development_topics(), data.test_topics()}


@pytest.mark.parametrize("held, others", [
    ("development", ("training", "test")),
    ("test", ("training", "development")),
])
def test_no_passage_of_a_held_out_part_is_in_another_part(held, others):
    text = data.split_text(held)
    for other in others:
        searched = data.split_text(other)
        for start in range(0, len(text) - data.PASSAGE, 50):
            assert text[start:start + data.PASSAGE] not in searched, (held, other, start)


def test_topics_sharing_a_passage_are_in_one_part():
    """``while`` repeats a section of ``compound``: the two are in one part, whichever it is."""
    shipped = data.topics()
    text = shipped["while"]
    assert any(text[start:start + data.PASSAGE] in shipped["compound"] for start in range(0, len(text), 50))
    part = {name: split for split in data.SPLITS for name in data.split_topics(split)}
    assert part["while"] == part["compound"]


def test_each_held_out_part_is_about_a_tenth():
    total = len("".join(data.topics().values()))
    for split in ("development", "test"):
        assert 0.05 < len(data.split_text(split)) / total < 0.2, split


def test_encoding_by_hand():
    # newline 0, space 1, "A" is ASCII 65 -> 65 - 31 = 34, "~" 126 -> 95; the rest is OTHER
    assert data.encode("\n A~").tolist() == [0, 1, 34, 95]
    assert data.encode("\u2018\u00e9\t").tolist() == [data.OTHER] * 3
    assert data.VOCABULARY_SIZE == 97
    assert data.decode(data.encode("x = 'y'\n")) == "x = 'y'\n"
    assert data.other_count("a\u2014b\u2026") == 2


def test_other_characters_are_few():
    text = "".join(data.split_text(split) for split in data.SPLITS)
    assert 0 < data.other_count(text) < 0.005 * len(text)


def test_training_windows_are_text_and_its_next_characters():
    ids = np.arange(1000, dtype=np.int32)
    inputs, targets = data.training_windows(ids, 16, 50, seed=3)
    assert inputs.shape == targets.shape == (50, 16)
    assert np.array_equal(targets, inputs + 1)
    assert np.array_equal(np.diff(inputs, axis=1), np.ones((50, 15)))
    again, _ = data.training_windows(ids, 16, 50, seed=3)
    assert np.array_equal(inputs, again)
    assert inputs.min() >= 0 and targets.max() <= 999


def test_evaluation_windows_score_the_same_characters_at_every_length():
    ids = np.arange(100, dtype=np.int32)
    for length in (4, 8, 16):
        inputs, targets = data.evaluation_windows(ids, length, 64)
        assert inputs.ravel().tolist() == list(range(64))
        assert targets.ravel().tolist() == list(range(1, 65))
        # one block of 16 in every 3: blocks 0 and 3, predictions 1-16 and 49-64
        inputs, targets = data.evaluation_windows(ids, length, 64, every=3, block=16)
        assert targets.ravel().tolist() == list(range(1, 17)) + list(range(49, 65))
        assert np.array_equal(targets, inputs + 1)


def test_scored_characters_by_hand():
    # 100 ids make 99 predictions: 96 in whole windows of 16, 3 left out
    assert data.scored_characters(np.arange(100), 16) == 96
    assert data.scored_characters(np.arange(97), 16) == 96
    assert data.scored_characters(np.arange(96), 16) == 80


@pytest.mark.parametrize("call", [
    lambda: data.evaluation_windows(np.arange(100), 8, 60),
    lambda: data.evaluation_windows(np.arange(10), 4, 12),
    lambda: data.training_windows(np.arange(4), 4, 1, seed=0),
    lambda: data.decode([97]),
    lambda: data.evaluation_windows(np.arange(100), 4, 64, every=2),
    lambda: data.evaluation_windows(np.arange(100), 4, 64, every=2, block=6),
    lambda: data.scored_characters(np.arange(16), 16),
    lambda: data.split_topics("validation"),
])
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()


# --- model --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", TRAINED_METHODS + ROPE_VARIANTS + ("rope_nope",))
def test_no_position_sees_the_future(method):
    """Changing the characters after position t leaves every logit up to t unchanged."""
    options = {"scale": 2.0, "original_length": 8} if method in ROPE_VARIANTS else None
    model = language_model(method, train_length=8, vocabulary_size=11, depth=8, heads=2,
                           layers=4 if method == "rope_nope" else 2, max_length=16, method_options=options)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 11, size=(2, 8)).astype("int32")
    before = keras.ops.convert_to_numpy(model(ids))
    for t in (0, 3, 6):
        changed = ids.copy()
        changed[:, t + 1:] = (changed[:, t + 1:] + 1 + rng.integers(0, 10, size=changed[:, t + 1:].shape)) % 11
        after = keras.ops.convert_to_numpy(model(changed))
        np.testing.assert_allclose(after[:, :t + 1], before[:, :t + 1], rtol=0, atol=1e-5)
        assert not np.allclose(after[:, t + 1:], before[:, t + 1:], atol=1e-3)


def test_hybrid_is_causal_and_rotates_in_three_blocks_of_four():
    """``"rope_nope"``: with block 3's queries zeroed, the hybrid computes what RoPE does with the same weights.

    A zero query scores 0 against every key whether or not it is rotated, so
    the two models then differ only where they should, in block 3, and
    nowhere once that block cannot tell positions apart.
    """
    options = {"train_length": 8, "vocabulary_size": 11, "depth": 8, "heads": 2, "layers": 4, "max_length": 16}
    hybrid = language_model("rope_nope", **options)
    rope = language_model("rope", **options)
    assert [hybrid.get_layer(f"attention_{b}").method for b in range(4)] == ["rope"] * 3 + ["none"]
    assert hybrid.count_params() == rope.count_params()
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 11, size=(2, 12)).astype("int32")
    rope.set_weights(hybrid.get_weights())
    differ = keras.ops.convert_to_numpy(hybrid(ids)) - keras.ops.convert_to_numpy(rope(ids))
    assert np.abs(differ).max() > 1e-3  # block 3 sees positions in one model only
    for model in (hybrid, rope):
        kernel = model.get_layer("attention_3").query.kernel
        kernel.assign(np.zeros(kernel.shape, dtype="float32"))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(hybrid(ids)), keras.ops.convert_to_numpy(rope(ids)),
                               rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="method_options"):
        language_model("rope_nope", method_options={"scale": 2.0}, **options)


def test_parameter_counts_by_hand():
    vocabulary, depth, hidden, layers, length = 11, 8, 16, 2, 8
    per_block = 4 * depth * depth + 2 * 2 * depth + (depth * hidden + hidden) + (hidden * depth + depth)
    plain = vocabulary * depth + layers * per_block + 2 * depth + (depth * vocabulary + vocabulary)
    counts = {method: language_model(method, train_length=length, vocabulary_size=vocabulary, depth=depth,
                                     heads=2, layers=layers, feed_forward=2, max_length=64).count_params()
              for method in TRAINED_METHODS}
    assert counts["none"] == counts["sinusoidal"] == counts["rope"] == counts["alibi"] == plain
    assert counts["learned"] == plain + length * depth
    assert counts["t5"] == plain + 32 * 2  # 32 buckets, 2 heads: one table for both blocks


def test_learned_refuses_longer_windows():
    model = language_model("learned", train_length=8, vocabulary_size=5, depth=8, heads=2)
    with pytest.raises(ValueError, match="max_length"):
        model(np.zeros((1, 9), dtype="int32"))


def test_bits_per_character_worked_by_hand():
    # p = (1/8, 3/8, 1/2): target 2 costs 1 bit, target 0 three bits, target 1 log2(8/3).
    probabilities = [Fraction(1, 8), Fraction(3, 8), Fraction(1, 2)]
    logits = np.log([float(p) for p in probabilities]) + 5.0  # a shift changes nothing
    losses = position_losses(np.array([logits, logits, logits]), np.array([2, 0, 1]))
    np.testing.assert_allclose(losses, [1.0, 3.0, 3.0 - math.log2(3)], rtol=0, atol=1e-12)
    expected = (1 + 3 + (3 - math.log2(3))) / 3
    assert abs(bits_per_character(np.array([logits] * 3), np.array([2, 0, 1])) - expected) < 1e-12
    # a uniform guess over the 97 ids costs log2(97) bits per character, whatever the text
    uniform = bits_per_character(np.zeros((4, 5, 97)), np.arange(20).reshape(4, 5))
    assert abs(uniform - math.log2(97)) < 1e-12


def test_position_losses_refuses_mismatched_targets():
    with pytest.raises(ValueError, match="targets"):
        position_losses(np.zeros((2, 3, 4)), np.zeros((2, 4), dtype=int))
    with pytest.raises(ValueError, match="targets"):
        position_losses(np.zeros((2, 4)), np.array([0, 4]))


def test_causal_attention_without_positions_counts_the_visible_tokens():
    """Equal scores on a distinct first token: weight 1/(p+1) at position p (Haviv et al.)."""
    layer = PositionalSelfAttention(heads=1, key_dim=4, method="none")
    first, rest = np.eye(4, dtype="float32")[:2]
    inputs = np.stack([first] + [rest] * 7)[None]
    layer(inputs)
    layer.query.kernel.assign(np.zeros((4, 4), dtype="float32"))  # every score 0: uniform attention
    for dense in (layer.value, layer.output_projection):
        dense.kernel.assign(np.eye(4, dtype="float32"))
    outputs = keras.ops.convert_to_numpy(layer(inputs))[0]
    for p in range(8):
        weight = Fraction(1, p + 1)
        expected = [float(weight), float(1 - weight), 0.0, 0.0]
        np.testing.assert_allclose(outputs[p], expected, rtol=0, atol=1e-6)


# --- training and evaluation ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run():
    return run_real_text(TINY, keep_models=True)


def test_run_has_a_row_per_method_seed_and_length(tiny_run):
    keys = {(row["method"], row["length"]) for row in tiny_run.rows}
    expected = {(m, n) for m in TINY.methods for n in TINY.lengths}
    expected |= {(v, n) for v in ROPE_VARIANTS for n in TINY.lengths[1:]}
    assert keys == expected
    learned = {row["length"]: row["bits_per_character"] for row in tiny_run.rows if row["method"] == "learned"}
    assert learned[8] is not None and learned[16] is None and learned[32] is None
    for row in tiny_run.rows:
        if row["bits_per_character"] is not None:
            assert 0 < row["bits_per_character"] < 10
    assert tiny_run.position_curves[("alibi", 0)].shape == (32,)
    assert tiny_run.position_curves[("learned", 0)].shape == (8,)


def test_run_scores_all_of_the_test_text(tiny_run):
    """Every prediction of the test text is scored but the last few, fewer than the longest window.

    The reference cuts the test text into windows by hand and scores the
    learned model's logits on them, at the training length.
    """
    text = data.test_text()
    assert tiny_run.split == "test"
    assert tiny_run.scored + tiny_run.left_out == len(text) - 1
    assert 0 <= tiny_run.left_out < TINY.longest
    assert tiny_run.scored % TINY.longest == 0
    ids = data.encode(text)
    windows = tiny_run.scored // TINY.train_length
    inputs = ids[:windows * TINY.train_length].reshape(windows, TINY.train_length)
    targets = ids[1:windows * TINY.train_length + 1].reshape(windows, TINY.train_length)
    logits = keras.ops.convert_to_numpy(tiny_run.models[("learned", 0)](inputs))
    expected = float(np.mean(position_losses(logits, targets)))
    found = tiny_run.bits("learned", TINY.train_length, 0)[0]
    assert found == pytest.approx(expected, rel=0, abs=1e-9)


def test_development_split_is_scored_when_asked():
    config = dataclasses.replace(TINY, methods=("alibi",), scales=(1, 2))
    run = run_real_text(config, split="development")
    assert run.split == "development"
    assert run.scored + run.left_out == len(data.development_text()) - 1
    with pytest.raises(ValueError, match="split"):
        run_real_text(config, split="training")


def test_a_sample_is_the_same_characters_at_every_length_and_spread_over_the_text():
    config = CONFIGS["small"]
    ids = data.encode(data.test_text())
    cut = data.scored_characters(ids, config.longest)
    blocks = cut // config.longest
    sampled = {length: data.evaluation_windows(ids, length, cut, every=config.score_every,
                                               block=config.longest)[1].ravel().tolist()
               for length in config.lengths}
    assert all(found == sampled[config.longest] for found in sampled.values())
    # blocks 0, k, 2k, ...: one in every k, from the first block to within k of the last
    expected = [ids[1 + start:1 + start + config.longest].tolist()
                for start in range(0, cut, config.score_every * config.longest)]
    assert sampled[config.longest] == [i for block in expected for i in block]
    assert len(expected) == -(-blocks // config.score_every)
    assert (len(expected) - 1) * config.score_every >= blocks - config.score_every


def test_t5_blocks_share_one_trained_table(tiny_run):
    """One table in the model, trained away from its zeros, and the same bias in every block."""
    model = tiny_run.models[("t5", 0)]
    tables = [w for w in model.weights if w.path.endswith("embeddings") and "positions" in w.path]
    assert len(tables) == 1 and tuple(tables[0].shape) == (32, TINY.heads)
    assert np.abs(keras.ops.convert_to_numpy(tables[0])).max() > 0
    blocks = [layer for layer in model.layers if isinstance(layer, PositionalSelfAttention)]
    assert len(blocks) == TINY.layers == 2
    queries = np.zeros((1, 12, TINY.depth), dtype="float32")
    biases = [keras.ops.convert_to_numpy(block.positions(queries)) for block in blocks]
    assert np.array_equal(biases[0], biases[1])
    assert np.abs(biases[0]).max() > 0


def test_stretch_by_one_changes_nothing(tiny_run):
    model = tiny_run.models[("rope", 0)]
    ids = data.encode(data.test_text()[:16])[None]
    plain = keras.ops.convert_to_numpy(model(ids))
    for variant in ("rope_pi", "rope_ntk"):
        same = keras.ops.convert_to_numpy(with_rope_variant(model, variant, 1.0, TINY)(ids))
        np.testing.assert_allclose(same, plain, rtol=0, atol=1e-5)
    stretched = keras.ops.convert_to_numpy(with_rope_variant(model, "rope_pi", 2.0, TINY)(ids))
    assert not np.allclose(stretched, plain, atol=1e-4)


def test_yarn_without_its_factor_is_yarn_with_queries_and_keys_scaled_back(tiny_run):
    """``rope_yarn_no_factor`` keeps YaRN's rates and drops only its factor.

    The factor multiplies each rotated query and key by 0.1 ln s + 1 (the YaRN
    paper's eq. 22, ``mscale`` in its authors' code). Rotation is linear, so
    scaling the model's query and key projections by that number must turn the
    model without the factor into YaRN as shipped, and change it otherwise.
    """
    model = tiny_run.models[("rope", 0)]
    ids = data.encode(data.test_text()[:32])[None]
    scale = 4.0
    shipped = keras.ops.convert_to_numpy(with_rope_variant(model, "rope_yarn", scale, TINY)(ids))
    alone = with_rope_variant(model, "rope_yarn_no_factor", scale, TINY)
    assert not np.allclose(keras.ops.convert_to_numpy(alone(ids)), shipped, rtol=0, atol=1e-4)
    factor = 0.1 * math.log(scale) + 1
    attention = [layer for layer in alone._flatten_layers() if isinstance(layer, PositionalSelfAttention)]
    assert len(attention) == TINY.layers
    for layer in attention:
        for dense in (layer.query, layer.key):
            dense.kernel.assign(dense.kernel * factor)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(alone(ids)), shipped, rtol=0, atol=1e-4)


def test_run_tests_the_variants_asked_for():
    run = run_real_text(dataclasses.replace(TINY, methods=("rope",)), variants=("rope_yarn_no_factor",))
    assert {(row["method"], row["length"]) for row in run.rows} == (
        {("rope", n) for n in TINY.lengths} | {("rope_yarn_no_factor", n) for n in TINY.lengths[1:]})
    assert ("rope_yarn_no_factor", 0) in run.position_curves
    with pytest.raises(ValueError, match="variants.*'rope_cosine'"):
        run_real_text(TINY, variants=("rope_cosine",))
    with pytest.raises(ValueError, match="variant must be.*'alibi'"):
        with_rope_variant(keras.Sequential(), "alibi", 2.0, TINY)


def test_config_checks():
    with pytest.raises(ValueError, match="score_every"):
        dataclasses.replace(TINY, score_every=0)
    with pytest.raises(ValueError, match="scales"):
        dataclasses.replace(TINY, scales=(2, 4))
    with pytest.raises(ValueError, match="method"):
        dataclasses.replace(TINY, methods=("cosine",))


# --- the experiment, its CSV and the chapter ------------------------------------------------------


def test_experiment_writes_what_run_real_text_computes(tmp_path, monkeypatch, tiny_run):
    """The experiment's CSV holds run_real_text's numbers, for methods trained alone or after others.

    The experiment trains ALiBi and the learned table only, in another
    order than ``tiny_run`` (which trained RoPE first): each method's
    numbers must not depend on what was trained before it in the process,
    which is what lets the chapter train four methods and the experiment
    six and still agree.
    """
    from pe_lib.course.real_text import training as real_text
    from pe_lib.course.real_text import experiment as real_text_experiment

    monkeypatch.setitem(real_text.CONFIGS, "tiny", TINY)
    out = tmp_path / "tiny.csv"
    real_text_experiment.main(["--config", "tiny", "--methods", "alibi", "learned", "--out", str(out),
                               "--bin-width", "4", "--quiet", "--backend", keras.backend.backend()])
    metadata, rows = real_text_experiment.read_results(out)
    assert {"command", "config", "seeds", "versions", "backend", "device"} <= set(metadata)
    assert metadata["seeds"] == "0" and "keras" in metadata["versions"]
    with open(out) as handle:  # the same file read with the csv module alone
        plain = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    expected = {(row["method"], row["length"]): row["bits_per_character"] for row in tiny_run.rows
                if row["method"] in ("alibi", "learned")}
    assert len(plain) == len(rows) == len(expected)
    for row in plain:
        value = expected[(row["method"], int(row["length"]))]
        if value is None:
            assert row["bits_per_character"] == ""
        else:
            assert float(row["bits_per_character"]) == pytest.approx(value, rel=0, abs=1e-9)
    _, positions = real_text_experiment.read_results(real_text_experiment.positions_path(out))
    alibi = [row["bits_per_character"] for row in positions if row["method"] == "alibi"]
    np.testing.assert_allclose(alibi, tiny_run.position_curves[("alibi", 0)].reshape(-1, 4).mean(axis=1))


def test_large_run_figure_redraws_from_the_csv():
    from pe_lib.course.real_text.experiment import read_results
    from pe_lib.course.real_text.results import draw_bits_by_length

    metadata, rows = read_results(LARGE_CSV)
    assert metadata["command"].startswith("python3 tasks.py experiment real-text")
    config = CONFIGS["large"]
    assert metadata["seeds"] == " ".join(map(str, config.seeds))
    fig, ax = plt.subplots()
    drawn = draw_bits_by_length(ax, rows, ["sinusoidal", "rope", "alibi", "t5"], train_length=config.train_length)
    plt.close(fig)
    with open(LARGE_CSV) as handle:
        plain = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    for method, (lengths, means) in drawn.items():
        assert lengths.tolist() == list(config.lengths)
        for length, mean in zip(lengths, means):
            values = [float(r["bits_per_character"]) for r in plain
                      if r["method"] == method and int(r["length"]) == length]
            assert len(values) == len(config.seeds)
            assert mean == pytest.approx(statistics.fmean(values), abs=1e-12)


SMALL_CSV = ROOT / "chapters" / "data" / "real_text_small.csv"


def test_the_recorded_small_run_is_the_chapters_configuration():
    """The seeds the chapter checks its claims on were made with its code and settings.

    Only exact things are compared (the command, the configuration, the rows
    present); trained numbers from another machine never are: the chapter's
    live run is one more sample, held to the same claims as these seeds.
    """
    import dataclasses
    import json

    from pe_lib.course.real_text.experiment import read_results
    from pe_lib.course.real_text.training import ROPE_VARIANTS

    metadata, rows = read_results(SMALL_CSV)
    methods, seeds = ("none", "sinusoidal", "rope", "alibi"), (0, 1, 2, 3, 4)
    assert metadata["command"] == ("python3 tasks.py experiment real-text --config small --seeds 0 1 2 3 4 "
                                   "--methods none sinusoidal rope alibi --backend tensorflow --quiet")
    config = dataclasses.replace(CONFIGS["small"], methods=methods, seeds=seeds)
    assert json.loads(metadata["config"]) == json.loads(json.dumps(dataclasses.asdict(config)))
    assert metadata["split"] == "test" and metadata["backend"] == "tensorflow"
    found = sorted((row["method"], row["seed"], row["length"]) for row in rows)
    wanted = sorted([(m, s, n) for m in methods for s in seeds for n in config.lengths]
                    + [(v, s, n) for v in ROPE_VARIANTS for s in seeds for n in config.lengths[1:]])
    assert found == wanted
