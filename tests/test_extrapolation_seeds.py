"""Train short, test long's seeds (pe_lib.course.extrapolation.seeds) and their recorded file."""

from fractions import Fraction
from pathlib import Path

import pytest

from pe_lib.course.extrapolation import seeds
from pe_lib.course.real_text.experiment import read_results

RECORDED = Path(__file__).resolve().parents[1] / "chapters" / "data" / seeds.FILE_NAME
#: run_extrapolation's default test set: 300 mirror pairs, 600 sequences.
TEST_SEQUENCES = 600


def assert_a_share_of_the_test_sequences(accuracy):
    """A share of 600 sequences, as written by Python's repr."""
    right = Fraction(accuracy).limit_denominator(1000) * TEST_SEQUENCES
    assert right.denominator == 1 and 0 <= right <= TEST_SEQUENCES


@pytest.mark.parametrize("rows", [seeds.extrapolation_rows, seeds.recipe_rows], ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", [-1, 1.5, "0"])
def test_rows_refuse_a_bad_seed_before_training(rows, bad):
    with pytest.raises((ValueError, TypeError), match="seed"):
        rows(bad)


def test_the_recorded_file_holds_every_seed_and_method_as_counts():
    metadata, rows = read_results(RECORDED)
    assert metadata["command"] == "python3 tasks.py experiment extrapolation-seeds"
    assert [int(s) for s in metadata["seeds"].split()] == [0, 1, 2, 3, 4]
    assert sorted((row["seed"], row["method"]) for row in rows) == sorted(
        (seed, method) for seed in range(5) for method in seeds.METHODS + tuple(seeds.RECORDED_ONLY))
    for row in rows:
        for length in seeds.TEST_LENGTHS:
            accuracy = row[f"accuracy_{length}"]
            if row["method"] == "learned" and length > seeds.TRAIN_LENGTH:
                assert accuracy is None  # no rows past the training length
                continue
            assert_a_share_of_the_test_sequences(accuracy)
            if row["method"] == "none":  # mirror pairs get one answer
                assert accuracy == 0.5


RECIPES_RECORDED = RECORDED.with_name(seeds.RECIPES_FILE_NAME)


def test_the_recorded_recipes_hold_every_seed_and_recipe_as_counts():
    metadata, rows = read_results(RECIPES_RECORDED)
    assert metadata["command"] == "python3 tasks.py experiment extrapolation-seeds --recipes"
    assert [int(s) for s in metadata["seeds"].split()] == [0, 1, 2, 3, 4]
    assert seeds.RECIPES == ("rope", "rope_pi", "rope_ntk", "rope_yarn", "rope_yarn_paper", "rope_dynamic")
    assert sorted((row["seed"], row["recipe"]) for row in rows) == sorted(
        (seed, recipe) for seed in range(5) for recipe in seeds.RECIPES)
    found = {(row["seed"], row["recipe"]): row for row in rows}
    for row in rows:
        for length in seeds.TEST_LENGTHS:
            assert_a_share_of_the_test_sequences(row[f"accuracy_{length}"])
    for seed in range(5):
        # exact identities, whatever the training: dynamic NTK (factor 1) is
        # plain RoPE up to L and NTK-aware scaling with s = 64 / 16 at 64 steps
        assert found[seed, "rope_dynamic"]["accuracy_16"] == found[seed, "rope"]["accuracy_16"]
        assert found[seed, "rope_dynamic"]["accuracy_64"] == found[seed, "rope_ntk"]["accuracy_64"]


def test_the_rope_rows_of_both_files_are_one_model():
    """Both files train the same RoPE model per seed, so its plain accuracies agree exactly."""
    _, plain = read_results(RECORDED)
    _, recipes = read_results(RECIPES_RECORDED)
    for seed in range(5):
        one = next(row for row in plain if row["seed"] == seed and row["method"] == "rope")
        other = next(row for row in recipes if row["seed"] == seed and row["recipe"] == "rope")
        assert [one[f"accuracy_{n}"] for n in seeds.TEST_LENGTHS] == [
            other[f"accuracy_{n}"] for n in seeds.TEST_LENGTHS]
