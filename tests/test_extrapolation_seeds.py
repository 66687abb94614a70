"""Beyond sinusoids' seeds (pe_lib.course.extrapolation.seeds) and their recorded file."""

from fractions import Fraction
from pathlib import Path

import pytest

from pe_lib.course.extrapolation import seeds
from pe_lib.course.real_text.experiment import read_results

RECORDED = Path(__file__).resolve().parents[1] / "chapters" / "data" / seeds.FILE_NAME
#: run_extrapolation's default test set: 300 mirror pairs, 600 sequences.
TEST_SEQUENCES = 600


@pytest.mark.parametrize("bad", [-1, 1.5, "0"])
def test_extrapolation_rows_refuses_a_bad_seed_before_training(bad):
    with pytest.raises((ValueError, TypeError), match="seed"):
        seeds.extrapolation_rows(bad)


def test_the_recorded_file_holds_every_seed_and_method_as_counts():
    metadata, rows = read_results(RECORDED)
    assert metadata["command"] == "python3 tasks.py experiment extrapolation-seeds"
    assert [int(s) for s in metadata["seeds"].split()] == [0, 1, 2, 3, 4]
    assert sorted((row["seed"], row["method"]) for row in rows) == sorted(
        (seed, method) for seed in range(5) for method in seeds.METHODS)
    for row in rows:
        for length in seeds.TEST_LENGTHS:
            accuracy = row[f"accuracy_{length}"]
            if row["method"] == "learned" and length > seeds.TRAIN_LENGTH:
                assert accuracy is None  # no rows past the training length
                continue
            # a share of 600 sequences, as written by Python's repr
            right = Fraction(accuracy).limit_denominator(1000) * TEST_SEQUENCES
            assert right.denominator == 1 and 0 <= right <= TEST_SEQUENCES
            if row["method"] == "none":  # mirror pairs get one answer
                assert accuracy == 0.5
