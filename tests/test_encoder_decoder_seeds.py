"""The encoder-decoder chapter's seeds (pe_lib.course.encoder_decoder.seeds) and their recorded file."""

from fractions import Fraction
from pathlib import Path

import pytest

from pe_lib.course.encoder_decoder import model as seq2seq
from pe_lib.course.encoder_decoder import seeds
from pe_lib.course.real_text.experiment import read_results

RECORDED = Path(__file__).resolve().parents[1] / "chapters" / "data" / "encoder_decoder_seeds.csv"


@pytest.mark.parametrize("bad", [[0, 0], [], [-1], [1.5]])
def test_seed_rows_refuses_bad_seeds_before_training(bad):
    with pytest.raises((ValueError, TypeError), match="seed"):
        seeds.seed_rows(bad)


def test_a_learned_table_is_refused_past_its_rows_and_scored_at_them():
    model = seq2seq.encoder_decoder("learned", max_length=8, feed_forward=False)
    small = {8: seq2seq.reversal_task(5, 8, seed=1), 12: seq2seq.reversal_task(5, 12, seed=2)}
    scores = seeds.score(model, small)
    assert scores[12] is None
    exact, tokens = scores[8]
    assert 0 <= exact <= tokens <= 1


def test_the_recorded_file_holds_every_seed_method_and_length_as_counts():
    metadata, rows = read_results(RECORDED)
    assert metadata["command"] == "python3 tasks.py experiment encoder-decoder-seeds"
    assert [int(s) for s in metadata["seeds"].split()] == [0, 1, 2, 3, 4]
    lengths = (seeds.SETTINGS["train_length"], *seeds.LONG_LENGTHS)
    keys = [(row["seed"], row["method"], row["length"]) for row in rows]
    assert sorted(keys) == sorted((s, m, n) for s in range(5) for m in seeds.METHODS for n in lengths)
    for row in rows:
        if row["method"] == "learned" and row["length"] > seeds.SETTINGS["train_length"]:
            assert row["exact_match"] is None and row["token_accuracy"] is None
            continue
        # shares of 200 sequences and of 200 * length tokens, as written by Python's repr
        sequences = Fraction(row["exact_match"]).limit_denominator(1000) * seeds.TEST_COUNT
        tokens = Fraction(row["token_accuracy"]).limit_denominator(10**5) * seeds.TEST_COUNT * row["length"]
        assert sequences.denominator == 1 and tokens.denominator == 1
        assert 0 <= sequences * row["length"] <= tokens <= seeds.TEST_COUNT * row["length"]
