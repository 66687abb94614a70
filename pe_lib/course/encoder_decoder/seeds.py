"""The encoder-decoder chapter's reversal run, repeated for several seeds.

:func:`seed_rows` trains the chapter's three models (sinusoidal, learned and
no positions) once per seed, with the chapter's settings, and scores each on
the chapter's test sets: :data:`TEST_COUNT` fresh sources of the training
length and of each of :data:`LONG_LENGTHS`. Run as a program it writes the
rows to ``chapters/data/encoder_decoder_seeds.csv``::

    python3 tasks.py experiment encoder-decoder-seeds [--seeds 0 1 2 3 4]

One row per seed, model and test length: ``exact_match`` and
``token_accuracy`` as :func:`~pe_lib.course.encoder_decoder.model.exact_match`
and :func:`~pe_lib.course.encoder_decoder.model.token_accuracy` give them,
both empty where the model refuses the length (a learned table past its rows).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from pe_lib._checks import require_int
from pe_lib.course.encoder_decoder import model as seq2seq

#: The chapter's settings, passed to :func:`~.model.train_encoder_decoders`.
SETTINGS = dict(train_length=8, vocabulary_size=16, feed_forward=False,
                sequences=2048, epochs=4, batch_size=64, learning_rate=3e-3)
METHODS = ("sinusoidal", "learned", "none")
#: Test sources per length.
TEST_COUNT = 200
#: The test lengths past the training length.
LONG_LENGTHS = (12, 16)
COLUMNS = ("seed", "method", "length", "exact_match", "token_accuracy")
DEFAULT_OUT = Path(__file__).resolve().parents[3] / "chapters" / "data" / "encoder_decoder_seeds.csv"


def evaluation_sets(train_length: int = SETTINGS["train_length"]) -> dict[int, seq2seq.ReversalData]:
    """The chapter's test sources by length: seed 1000 at the training length, ``1000 + length`` past it.

    >>> {length: data.sources.shape for length, data in evaluation_sets().items()}
    {8: (200, 8), 12: (200, 12), 16: (200, 16)}
    """
    train_length = require_int("train_length", train_length, minimum=1)
    sets = {train_length: seq2seq.reversal_task(TEST_COUNT, train_length, seed=1000)}
    for length in LONG_LENGTHS:
        sets[length] = seq2seq.reversal_task(TEST_COUNT, length, seed=1000 + length)
    return sets


def score(model, tests: dict[int, seq2seq.ReversalData]) -> dict[int, tuple[float, float] | None]:
    """``(exact match, token accuracy)`` of greedy decoding per length; ``None`` where refused."""
    scores = {}
    for length, data in tests.items():
        try:
            written = seq2seq.greedy_decode(model, data.sources)
        except ValueError:
            scores[length] = None  # a learned table has no row past its length
            continue
        scores[length] = (seq2seq.exact_match(written, data.targets),
                          seq2seq.token_accuracy(written, data.targets))
    return scores


def seed_rows(seeds: Iterable[int]) -> list[dict]:
    """Train the three models once per seed and score them: one row per seed, method and length."""
    seeds = [require_int("seeds", seed, minimum=0) for seed in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must name each seed at most once, and at least one; got {seeds!r}")
    tests = evaluation_sets()
    rows = []
    for seed in seeds:
        models = seq2seq.train_encoder_decoders(METHODS, seed=seed, **SETTINGS)
        for method, model in models.items():
            for length, result in score(model, tests).items():
                exact, tokens = (None, None) if result is None else result
                rows.append({"seed": seed, "method": method, "length": length,
                             "exact_match": exact, "token_accuracy": tokens})
    return rows


def main(argv=None, *, command: str | None = None) -> Path:
    """Train and score the given seeds; returns the path of the file written."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python3 tasks.py experiment encoder-decoder-seeds",
        description="Train the encoder-decoder chapter's three reversal models once per seed "
                    "and score them at 8, 12 and 16 tokens.")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4],
                        help="seeds (default: 0 1 2 3 4)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results file")
    args = parser.parse_args(argv)

    import keras

    from pe_lib.course.real_text.experiment import versions, write_results

    if keras.backend.backend() != "tensorflow":
        raise ValueError(f"the chapter runs on TensorFlow; Keras is on {keras.backend.backend()!r}")
    began = time.perf_counter()
    rows = seed_rows(args.seeds)
    seconds = time.perf_counter() - began
    metadata = {
        "command": command or "python -m pe_lib.course.encoder_decoder.seeds " + shlex.join(argv),
        "seeds": " ".join(map(str, args.seeds)),
        "versions": versions(),
        "processor": platform.machine(),
        "seconds": f"{seconds:.0f}",
    }
    write_results(args.out, rows, metadata, columns=COLUMNS)
    print(f"Wrote {args.out} in {seconds / 60:.1f} minutes", flush=True)
    return Path(args.out)


if __name__ == "__main__":
    main(command=os.environ.get("PE_COURSE_COMMAND"))
