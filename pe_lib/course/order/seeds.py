r"""``python3 tasks.py experiment order-seeds``: the order experiments once per seed, written to CSV.

Two chapters train small classifiers on marker tasks with one seed and say
what held for others. This program reruns their experiments with the
chapters' settings for each seed and writes what those sentences are about:

- ``order_seeds.csv`` (Learned or fixed): one row per seed and position
  table, its accuracy at each test length, and at the longest with both
  markers in the first or the last training-length steps (and the share of
  those sequences it answers "A first"), and how alike its
  table's trained rows are, neighbours and rows far apart (:func:`order_rows`);
- ``mixing_seeds.csv`` (What attention sees): one row per seed and front
  end, its accuracy (:func:`mixing_rows`);
- ``attention_heads_seeds.csv`` (What attention sees): one row per seed and
  head of the model with the code added, the measures of
  :func:`pe_lib.course.order.trained_terms.head_measures`;
- ``attention_adjacent_seeds.csv`` (What attention sees): the same model
  trained on whether the markers are neighbours, one row per seed and head:
  its accuracy, the share of each head's :math:`W_Q W_K^\top` in scaled
  rotations, and the position-position term's measures (:func:`adjacent_rows`).

Each file starts with ``#`` lines naming the command that made it;
:func:`read_rows` reads it back. Options: ``--seeds 0 1 2 3 4`` (the
default), ``--out FOLDER`` (default ``chapters/data``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from pe_lib.course.real_text.experiment import read_results, write_results

#: The settings of Learned or fixed's run (its cell's arguments).
ORDER_METHODS = ("sinusoidal", "learned")
ORDER_TRAIN_LENGTH, ORDER_LONGEST = 12, 24
ORDER_TEST_LENGTHS = tuple(range(ORDER_TRAIN_LENGTH, ORDER_LONGEST + 1, 2))
#: Rows at least this far apart count as far apart in the table's similarity (half the training length).
ORDER_FAR_OFFSET = ORDER_TRAIN_LENGTH // 2
#: How many pairs the control draws, and from which seed (see :func:`control_sequences`).
ORDER_CONTROL = dict(pairs=500, seed=99)
#: The settings of What attention sees' run (its cell's arguments).
MIXING_WIDTH = 32
MIXING_VARIANTS = {
    "add": dict(mixing="add", token_depth=MIXING_WIDTH),
    "concatenate_half": dict(mixing="concatenate", token_depth=MIXING_WIDTH // 2,
                             position_depth=MIXING_WIDTH // 2),
}
MIXING_TRAINING = dict(length=12, pairs=1024, epochs=6)
#: The sequences whose scores the chapter splits into terms.
HEAD_SEQUENCES = dict(pairs=50, seed=5)
#: The settings of What attention sees' run on the neighbours task, with the
#: code added and trained longer (the task is harder).
ADJACENT_TRAINING = dict(length=12, pairs=1024, epochs=40)

DEFAULT_FOLDER = Path(__file__).resolve().parents[3] / "chapters" / "data"


def order_rows(seed: int) -> list[dict]:
    """Learned or fixed's experiment with ``seed``: one row per position table."""
    import keras
    import numpy as np

    from pe_lib.course.order.classifier import order_accuracy, run_order_experiments
    from pe_lib.course.order.table_similarity import near_and_far_similarity

    runs = run_order_experiments(ORDER_METHODS, train_length=ORDER_TRAIN_LENGTH,
                                 test_lengths=ORDER_TEST_LENGTHS, max_length=ORDER_LONGEST, seed=seed)
    controls = control_sequences()
    return [{"seed": seed, "method": method,
             **{f"accuracy_{length}": run.test_accuracy[length] for length in ORDER_TEST_LENGTHS},
             **{f"accuracy_{ORDER_LONGEST}_{where}": order_accuracy(run.model, tokens, labels)
                for where, (tokens, labels) in controls.items()},
             # the share of the control's sequences answered "A first" (a positive logit)
             **{f"a_first_{ORDER_LONGEST}_{where}": order_accuracy(run.model, tokens, np.ones_like(labels))
                for where, (tokens, labels) in controls.items()},
             **dict(zip(("similarity_near", "similarity_far"), near_and_far_similarity(
                 keras.ops.convert_to_numpy(run.model.get_layer("embedding").position_embedding.table),
                 rows=ORDER_TRAIN_LENGTH, far=ORDER_FAR_OFFSET)))}
            for method, run in runs.items()]


def control_sequences() -> dict[str, tuple]:
    """Sequences of the longest length whose markers lie in the first (``"early"``) or last
    (``"late"``) training-length steps, the same markers in both: what separates the
    markers' new positions from a longer sequence."""
    from pe_lib.course.order.tasks import marker_order_task, with_fillers

    tokens, labels = marker_order_task(ORDER_CONTROL["pairs"], ORDER_TRAIN_LENGTH, seed=ORDER_CONTROL["seed"])
    steps = ORDER_LONGEST - ORDER_TRAIN_LENGTH
    return {where: (with_fillers(tokens, steps, before=where == "late", seed=ORDER_CONTROL["seed"]), labels)
            for where in ("early", "late")}


def mixing_rows(seed: int) -> tuple[list[dict], list[dict]]:
    """What attention sees' experiment with ``seed``: rows per front end, and per head of ``add``."""
    from pe_lib.course.order.mixing import run_mixing_experiment
    from pe_lib.course.order.tasks import marker_order_task
    from pe_lib.course.order.trained_terms import head_measures, head_terms

    runs = run_mixing_experiment(MIXING_VARIANTS, **MIXING_TRAINING, seed=seed)
    accuracy = [{"seed": seed, "front_end": name, "accuracy": run.test_accuracy} for name, run in runs.items()]
    sequences, _ = marker_order_task(HEAD_SEQUENCES["pairs"], MIXING_TRAINING["length"],
                                     seed=HEAD_SEQUENCES["seed"])
    model = runs["add"].model
    heads = model.get_layer("attention").get_config()["num_heads"]
    measures = [{"seed": seed, "head": head, **head_measures(head_terms(model, sequences, head), sequences)}
                for head in range(heads)]
    return accuracy, measures


def adjacent_rows(seed: int) -> list[dict]:
    """What attention sees' neighbours run with ``seed``: one row per head of the model with the code added."""
    import keras

    from pe_lib.course.lessons import attention_terms
    from pe_lib.course.order.mixing import run_mixing_experiment
    from pe_lib.course.order.tasks import adjacent_markers_task
    from pe_lib.course.order.trained_terms import head_measures, head_terms

    run = run_mixing_experiment({"add": MIXING_VARIANTS["add"]}, **ADJACENT_TRAINING, seed=seed,
                                task=adjacent_markers_task)["add"]
    attention = run.model.get_layer("attention")
    query_kernels, key_kernels = (keras.ops.convert_to_numpy(dense.kernel)
                                  for dense in (attention.query_dense, attention.key_dense))
    sequences, _ = adjacent_markers_task(HEAD_SEQUENCES["pairs"], ADJACENT_TRAINING["length"],
                                         seed=HEAD_SEQUENCES["seed"])
    rows = []
    for head in range(query_kernels.shape[1]):
        matrix = query_kernels[:, head] @ key_kernels[:, head].T
        measures = head_measures(head_terms(run.model, sequences, head), sequences)
        rows.append({"seed": seed, "head": head, "accuracy": run.test_accuracy,
                     "rotation_share": attention_terms.rotation_share(matrix),
                     "pp_rho": measures["pp_rho"], "pp_by_key": measures["pp_by_key"]})
    return rows


def read_rows(path) -> list[dict]:
    """The rows of a file this program wrote, numbers as ``int`` or ``float``.

    The files have the form of the real-text experiment's
    (:func:`pe_lib.course.real_text.experiment.write_results`).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.csv"
    >>> write_results(path, [{"seed": 0, "method": "learned", "accuracy": 0.5}],
    ...               {"seeds": "0"}, columns=("seed", "method", "accuracy"))
    >>> read_rows(path)
    [{'seed': 0, 'method': 'learned', 'accuracy': 0.5}]
    """
    return read_results(path)[1]


def _write(path: Path, rows: list[dict], header: dict[str, str]) -> None:
    write_results(path, rows, header, columns=list(rows[0]))


def main(argv=None, *, command: str | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python3 tasks.py experiment order-seeds",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--only", choices=("order", "mixing", "adjacent"), help="run one of the three experiments")
    parser.add_argument("--out", type=Path, default=DEFAULT_FOLDER, help="folder of the CSV files")
    args = parser.parse_args(argv)
    # As the chapters' kernels run: TensorFlow, on the CPU.
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    header = {"command": command or "python -m pe_lib.course.order.seeds " + shlex.join(argv),
              "seeds": " ".join(map(str, args.seeds))}
    began = time.perf_counter()
    if args.only in (None, "order"):
        rows = [row for seed in args.seeds for row in order_rows(seed)]
        _write(args.out / "order_seeds.csv", rows, header)
        print(f"order: {time.perf_counter() - began:.0f} s", flush=True)
    if args.only in (None, "mixing"):
        accuracy, measures = [], []
        for seed in args.seeds:
            seed_accuracy, seed_measures = mixing_rows(seed)
            accuracy += seed_accuracy
            measures += seed_measures
        _write(args.out / "mixing_seeds.csv", accuracy, header)
        _write(args.out / "attention_heads_seeds.csv", measures, header)
        print(f"mixing: {time.perf_counter() - began:.0f} s", flush=True)
    if args.only in (None, "adjacent"):
        rows = [row for seed in args.seeds for row in adjacent_rows(seed)]
        _write(args.out / "attention_adjacent_seeds.csv", rows, header)
        print(f"all: {time.perf_counter() - began:.0f} s", flush=True)


if __name__ == "__main__":
    main(command=os.environ.get("PE_COURSE_COMMAND"))
