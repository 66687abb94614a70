r"""``python3 tasks.py experiment real-text``: the real-text run at a larger scale, written to CSV.

It runs :func:`pe_lib.course.real_text.training.run_real_text`, the function the
chapter runs live, with a configuration of :data:`pe_lib.course.real_text.training.CONFIGS`
(``--config large`` by default, ``--config small`` for the chapter's), shows
a progress bar with the time left (Keras's ``Progbar``), and writes two CSV
files:

- ``OUT`` (default ``chapters/data/real_text_<config>.csv``): one row per
  method, seed and test length, with bits per character on all of the test
  text (``--split development`` scores the development text instead);
- ``OUT`` with ``_positions`` before ``.csv``: the mean loss over each run
  of 16 positions (``--bin-width``) of the longest windows, per method and
  seed.

Both start with ``#`` lines that record the command, the configuration, the
seeds, the stretching recipes tested, the text scored and how many of its characters, the versions of Python and the libraries, the Keras backend and the
device. :func:`read_results` reads them back.

The backend is Keras's JAX on a GPU when JAX sees one, TensorFlow on the CPU
otherwise (the chapter's backend, so that ``--config small`` reproduces the
chapter's numbers on the same machine); ``--backend`` forces either. The
backend must be chosen before Keras is imported, so run this module as a
program (``python -m pe_lib.course.real_text.experiment --help``).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib.metadata
import io
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

#: Where the results go, relative to the repository root.
DEFAULT_FOLDER = Path("chapters") / "data"

#: The columns of the results file.
COLUMNS = ("method", "trained", "seed", "length", "scale", "bits_per_character", "parameters", "steps",
           "final_loss")

#: The columns of the positions file.
POSITION_COLUMNS = ("method", "seed", "start", "stop", "bits_per_character")

_PACKAGES = ("keras", "tensorflow", "jax", "jaxlib", "numpy")


def gpu_visible() -> bool:
    """True when JAX is installed and sees a GPU."""
    try:
        import jax
    except ImportError:
        return False
    try:
        return any(device.platform == "gpu" for device in jax.devices())
    except RuntimeError:
        return False


def choose_backend(requested: str | None = None) -> str:
    """``requested``, else ``"jax"`` when a GPU is visible to JAX, else ``"tensorflow"``.

    >>> choose_backend("tensorflow")
    'tensorflow'
    """
    if requested is not None:
        if requested not in ("tensorflow", "jax"):
            raise ValueError(f"backend must be 'tensorflow' or 'jax', got {requested!r}")
        return requested
    return "jax" if gpu_visible() else "tensorflow"


def device_description(backend: str) -> str:
    """The processor or GPU the run used, in words."""
    if backend == "jax":
        import jax

        device = jax.devices()[0]
        if device.platform == "gpu":
            return f"GPU: {device.device_kind}"
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"CPU: {name}, {os.cpu_count()} logical cores"


def versions() -> str:
    """Python's version and those of the libraries the run depends on."""
    found = [f"python {platform.python_version()}"]
    for package in _PACKAGES:
        try:
            found.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def position_bins(curve, width: int) -> list[tuple[int, int, float]]:
    """``(start, stop, mean)`` of ``curve`` over runs of ``width`` positions.

    >>> position_bins([1.0, 3.0, 2.0, 2.0], 2)
    [(0, 2, 2.0), (2, 4, 2.0)]
    """
    import numpy as np

    curve = np.asarray(curve, dtype=np.float64)
    if isinstance(width, bool) or not isinstance(width, int) or width < 1 or curve.size % width:
        raise ValueError(f"width must be a whole number of positions dividing {curve.size}, got {width!r}")
    return [(start, start + width, float(curve[start:start + width].mean()))
            for start in range(0, curve.size, width)]


def _header(metadata: dict) -> str:
    return "".join(f"# {key}: {value}\n" for key, value in metadata.items())


def write_results(path, rows, metadata: dict, columns=COLUMNS) -> None:
    """Write ``rows`` (dicts) under ``#`` lines of ``metadata``; ``None`` becomes an empty cell."""
    buffer = io.StringIO()
    buffer.write(_header(metadata))
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: ("" if row[key] is None else row[key]) for key in columns})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(buffer.getvalue())


def read_results(path) -> tuple[dict, list[dict]]:
    """The metadata and the rows of a file written by :func:`write_results`.

    Numbers come back as ``int`` or ``float``, empty cells as ``None``.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = Path(folder) / "r.csv"
        ...     write_results(path, [{"method": "alibi", "seed": 0, "bits": None}], {"seeds": "0"},
        ...                   columns=("method", "seed", "bits"))
        ...     read_results(path)
        ({'seeds': '0'}, [{'method': 'alibi', 'seed': 0, 'bits': None}])
    """
    metadata, lines = {}, []
    for line in Path(path).read_text().splitlines():
        if line.startswith("# "):
            key, _, value = line[2:].partition(": ")
            metadata[key] = value
        else:
            lines.append(line)
    rows = []
    for row in csv.DictReader(lines):
        rows.append({key: _number(value) for key, value in row.items()})
    return metadata, rows


def _number(text: str):
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def positions_path(path) -> Path:
    """The positions file beside the results file ``path``.

    >>> positions_path("chapters/data/real_text_large.csv").name
    'real_text_large_positions.csv'
    """
    path = Path(path)
    return path.with_name(f"{path.stem}_positions{path.suffix}")


def parse_arguments(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 tasks.py experiment real-text",
        description="Train a character-level language model per position method on the Python "
                    "reference's text and score it at 1, 2, 4 and 8 times the training length.")
    parser.add_argument("--config", default="large", help="a configuration of pe_lib.course.real_text.training.CONFIGS")
    parser.add_argument("--seeds", type=int, nargs="+", help="seeds (default: the configuration's)")
    parser.add_argument("--methods", nargs="+", help="methods to train (default: the configuration's)")
    parser.add_argument("--steps", type=int, help="training steps per model (default: the configuration's)")
    parser.add_argument("--variants", nargs="+",
                        help="stretching recipes tested on the trained RoPE model: RoPE variants of the "
                             "registry or names of VARIANT_RECIPES, such as rope_yarn_no_factor "
                             "(default: ROPE_VARIANTS)")
    parser.add_argument("--split", choices=("test", "development"), default="test",
                        help="the text scored (default: test; development to compare configurations)")
    parser.add_argument("--backend", choices=("tensorflow", "jax"),
                        help="Keras backend (default: jax on a GPU, tensorflow otherwise)")
    parser.add_argument("--bin-width", type=int, default=16, help="positions per bin in the positions file")
    parser.add_argument("--out", type=Path, help="results file (default: chapters/data/real_text_CONFIG.csv)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def main(argv=None, *, command: str | None = None) -> Path:
    """Run the experiment; returns the path of the results file."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_arguments(argv)
    backend = choose_backend(args.backend)
    if "keras" in sys.modules:
        import keras

        if keras.backend.backend() != backend:
            raise ValueError(f"Keras is already running on {keras.backend.backend()!r}; "
                             f"run this module as a program to use backend={backend!r}")
    os.environ["KERAS_BACKEND"] = backend

    import keras

    from pe_lib.course.real_text.training import CONFIGS, ROPE_VARIANTS, run_real_text

    if args.config not in CONFIGS:
        raise ValueError(f"config must be one of {', '.join(map(repr, CONFIGS))}; got {args.config!r}")
    config = CONFIGS[args.config]
    if args.steps is not None:
        config = dataclasses.replace(config, steps=args.steps)
    methods = tuple(args.methods or config.methods)
    seeds = tuple(config.seeds if args.seeds is None else args.seeds)
    config = dataclasses.replace(config, methods=methods, seeds=seeds)
    out = args.out or DEFAULT_FOLDER / f"real_text_{config.name}.csv"

    total = len(methods) * len(seeds) * config.steps
    progress = None if args.quiet else keras.utils.Progbar(total, unit_name="step")
    finished = {"runs": 0}

    def on_step(method, seed, done, loss):
        if done == config.steps:
            finished["runs"] += 1
        if progress is not None and (done % 10 == 0 or done == config.steps):
            progress.update(finished["runs"] * config.steps if done == config.steps
                            else finished["runs"] * config.steps + done,
                            values=[("bits", loss() / 0.6931471805599453)])

    began = time.perf_counter()
    variants = tuple(args.variants or ROPE_VARIANTS)
    run = run_real_text(config, split=args.split, on_step=on_step, variants=variants)
    seconds = time.perf_counter() - began
    metadata = {
        "command": command or "python -m pe_lib.course.real_text.experiment " + shlex.join(argv),
        "config": json.dumps(dataclasses.asdict(config)),
        "seeds": " ".join(map(str, seeds)),
        "variants": " ".join(variants),
        "split": run.split,
        "scored": f"{run.scored} characters at every length, {run.left_out} left out",
        "versions": versions(),
        "backend": backend,
        "device": device_description(backend),
        "seconds": f"{seconds:.0f}",
    }
    write_results(out, run.rows, metadata)
    position_rows = [
        {"method": method, "seed": seed, "start": start, "stop": stop, "bits_per_character": bits}
        for (method, seed), curve in run.position_curves.items()
        for start, stop, bits in position_bins(curve, args.bin_width)
    ]
    write_results(positions_path(out), position_rows, metadata, columns=POSITION_COLUMNS)
    if not args.quiet:
        print(f"\nWrote {out} and {positions_path(out)} in {seconds / 60:.1f} minutes", flush=True)
    return Path(out)


if __name__ == "__main__":
    main(command=os.environ.get("PE_COURSE_COMMAND"))
