r"""``python3 tasks.py experiment extrapolation-seeds``: train short, test long, once per seed.

Train short, test long trains five models (sinusoidal, learned, RoPE, ALiBi, no
positions) at one length with seed 0 and tests them at that length and
longer ones. This program reruns that experiment with the chapter's settings
for each seed, and for Shaw's and T5's methods too, with two settings each
(:data:`RECORDED_ONLY`), and writes ``extrapolation_seeds.csv``: one row per
seed and model, its accuracy at each test length, empty where the model
refuses the input (:func:`extrapolation_rows`). The file starts with ``#`` lines naming
the command that made it; :func:`pe_lib.course.order.seeds.read_rows` reads
it back. Options: ``--seeds 0 1 2 3 4`` (the default), ``--out FOLDER``
(default ``chapters/data``), ``--recipes``: instead, train the RoPE model of
each seed and test it with every context-extension recipe of Longer
contexts (:func:`recipe_rows`), into ``context_extension_seeds.csv``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from pe_lib.course.real_text.experiment import write_results

#: The settings of Train short, test long's run (its cell's arguments).
METHODS = ("sinusoidal", "learned", "rope", "alibi", "none")
#: Models trained with the same settings for the recorded seeds only (the
#: chapter's live run leaves them out, to run quickly): a row label, its
#: method and the method's options. Shaw's and T5's learned terms with their
#: usual settings, under which offsets past training reach parameters that
#: training never moved, and set so that training reaches all of them (Shaw
#: clipped at 8 offsets; T5's buckets ending at 16, the last one reached).
RECORDED_ONLY = {
    "shaw": ("shaw", {}),
    "t5": ("t5", {}),
    "shaw_clip_8": ("shaw", {"max_distance": 8}),
    "t5_to_16": ("t5", {"num_buckets": 16, "max_distance": 16}),
}
TRAIN_LENGTH, TEST_LENGTHS = 16, (16, 32, 64)

DEFAULT_FOLDER = Path(__file__).resolve().parents[3] / "chapters" / "data"
FILE_NAME = "extrapolation_seeds.csv"
RECIPES_FILE_NAME = "context_extension_seeds.csv"
#: The recipes of Longer contexts with a fixed scale (4, chosen for 64 steps).
FIXED_RECIPES = ("rope_pi", "rope_ntk", "rope_yarn", "rope_yarn_paper")
#: The scale of the fixed recipes.
RECIPE_SCALE = 4.0
#: Every recipe tested, plain RoPE first; dynamic NTK keeps its default factor 1
#: and takes its scale from the length.
RECIPES = ("rope", *FIXED_RECIPES, "rope_dynamic")


def extrapolation_rows(seed: int) -> list[dict]:
    """The chapter's experiment with ``seed``: one row per method.

    Each row holds ``seed``, ``method`` and ``accuracy_L`` for each test
    length ``L``; ``None`` where the model refuses inputs of that length.
    """
    from pe_lib.course.extrapolation.experiment import run_extrapolation

    rows = []
    models = {**{method: (method, {}) for method in METHODS}, **RECORDED_ONLY}
    for label, (method, options) in models.items():
        run = run_extrapolation(method, train_length=TRAIN_LENGTH, test_lengths=TEST_LENGTHS, seed=seed,
                                method_options=options or None)
        rows.append({"seed": seed, "method": label,
                     **{f"accuracy_{length}": run.accuracy[length] for length in TEST_LENGTHS}})
    return rows


def recipe_rows(seed: int) -> list[dict]:
    """Longer contexts' experiment with ``seed``: one row per recipe.

    The RoPE model of :func:`extrapolation_rows` is trained once and tested
    with each recipe of :data:`RECIPES`; each row holds ``seed``,
    ``recipe`` and ``accuracy_L`` for each test length ``L``.
    """
    from pe_lib.course.extrapolation.experiment import evaluate_with_scaling, run_extrapolation

    run = run_extrapolation("rope", train_length=TRAIN_LENGTH, test_lengths=TEST_LENGTHS, seed=seed)
    accuracy = {"rope": run.accuracy}
    for recipe in FIXED_RECIPES:
        accuracy[recipe] = evaluate_with_scaling(run, recipe, TEST_LENGTHS, scale=RECIPE_SCALE)
    accuracy["rope_dynamic"] = evaluate_with_scaling(run, "rope_dynamic", TEST_LENGTHS)
    return [{"seed": seed, "recipe": recipe,
             **{f"accuracy_{length}": accuracy[recipe][length] for length in TEST_LENGTHS}}
            for recipe in RECIPES]


def main(argv=None, *, command: str | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python3 tasks.py experiment extrapolation-seeds",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--out", type=Path, default=DEFAULT_FOLDER, help="folder of the CSV file")
    parser.add_argument("--recipes", action="store_true",
                        help=f"test each seed's RoPE model with every recipe, into {RECIPES_FILE_NAME}")
    args = parser.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds must be distinct, got {args.seeds}")
    # As the chapter's kernel runs: TensorFlow, on the CPU.
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    header = {"command": command or "python -m pe_lib.course.extrapolation.seeds " + shlex.join(argv),
              "seeds": " ".join(map(str, args.seeds))}
    began = time.perf_counter()
    rows = []
    make_rows = recipe_rows if args.recipes else extrapolation_rows
    for seed in args.seeds:
        rows += make_rows(seed)
        print(f"seed {seed}: {time.perf_counter() - began:.0f} s", flush=True)
    name = RECIPES_FILE_NAME if args.recipes else FILE_NAME
    write_results(args.out / name, rows, header, columns=list(rows[0]))


if __name__ == "__main__":
    main(command=os.environ.get("PE_COURSE_COMMAND"))
