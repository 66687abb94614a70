#!/usr/bin/env python3
"""The course's front door. Needs only Python 3; everything else it installs.

    python3 tasks.py book        build the HTML book into _build/html
    python3 tasks.py pdf         the whole book as one PDF, _build/pdf/book.pdf (printed by Chromium)
    python3 tasks.py test        unit, property and doc tests, then every chapter under nbval,
                                 then the layer tests again on Keras's JAX backend
                                 [--quick: unit, property and doc tests only, for the edit-test loop]
                                 [--other-cpu: the tests and chapters (not the browser's) with
                                 the BLAS kernels, NumPy's SIMD loops and TensorFlow's matrix
                                 kernels of another processor]
                                 [--order reverse | --order shuffle[:SEED]: the same suite in
                                 another order (modules and tests; a notebook's cells stay in order)]
                                 [--lowest: the unit, property and doc tests in .venv-lowest, made
                                 from the lowest versions requirements.txt allows]
    python3 tasks.py lock        recompile requirements.lock from requirements.txt
                                 [--upgrade | --upgrade-package NAME ...]
    python3 tasks.py notebooks   re-execute the chapters in place (after editing one)
    python3 tasks.py lab         open JupyterLab on a working copy of the chapters (lab/, made on
                                 first use), in the course's environment; Ctrl-C stops it
                                 [extra options go to jupyter lab, e.g. --no-browser --port 8890]
                                 [--reset CHAPTER.ipynb: put the course's version back in lab/]
    python3 tasks.py bench       print the benchmark figures (speed, accuracy, run times)
    python3 tasks.py experiment real-text
                                 the real-text language models at a larger scale, into
                                 chapters/data/real_text_large.csv [--config small|large],
                                 or RoPE, NoPE and the hybrid of Released models into
                                 chapters/data/real_text_per_layer.csv [--config per_layer]
                                 [--seeds 0 1 2] [--methods ...] [--backend jax|tensorflow]
    python3 tasks.py experiment order-seeds
                                 the order classifiers of What attention sees and Learned or
                                 fixed for seeds 0 to 4, into chapters/data/order_seeds.csv,
                                 mixing_seeds.csv, attention_heads_seeds.csv [--seeds ...]
    python3 tasks.py experiment encoder-decoder-seeds
                                 the encoder-decoder chapter's three models for seeds 0 to 4,
                                 into chapters/data/encoder_decoder_seeds.csv [--seeds ...]
    python3 tasks.py experiment extrapolation-seeds
                                 Train short, test long's five models for
                                 seeds 0 to 4, into chapters/data/extrapolation_seeds.csv
    python3 tasks.py assignments build every student notebook, autograder bundle and
                                 reference answer into assignments/_build
    python3 tasks.py grade DIR   grade a folder of submitted notebooks, each in a
                                 bubblewrap sandbox, into scores.csv
                                 [--out FILE.csv] [--feedback DIR] [--timeout SECONDS]
                                 [--jobs N] [--assignment NAME]

Each command creates the virtual environment ``.venv`` on first use and
(re)installs the exact versions of ``requirements.lock`` whenever it,
``requirements.txt`` or ``pyproject.toml`` changes. The lock is compiled for
CPython 3.11 on x86-64 Linux; elsewhere the ranges of ``requirements.txt`` are
installed instead (see the README).
Extra arguments after ``test`` go to pytest, e.g. ``python3 tasks.py test -k rotation``
(the TensorFlow pass only; run the JAX pass by hand with
``KERAS_BACKEND=jax .venv/bin/python -m pytest tests/test_layers.py pe_lib/layers``).
``grade`` takes relative paths from the folder you run it in, and never writes
into the submissions folder; the Classroom chapter of the book explains both.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
STAMP = VENV / "requirements.sha256"
REQUIREMENTS = ROOT / "requirements.txt"
LOCK = ROOT / "requirements.lock"
# The interpreter and platform the lock is compiled for (the course's reference machine).
LOCK_PYTHON = "3.11.7"
LOCK_PLATFORM = "x86_64-manylinux_2_28"
# The tests that run a second time on Keras's JAX backend: every layer, and the layers' doctests.
JAX_TESTS = ("tests/test_layers.py", "pe_lib/layers")
CHAPTERS = ROOT / "chapters"

# The same environment for every kernel that runs a chapter, so that outputs
# committed by `notebooks` are the outputs `test` expects.
KERNEL_ENV = {
    "PYTHONHASHSEED": "0",
    "KERAS_BACKEND": "tensorflow",
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_ENABLE_ONEDNN_OPTS": "0",
    "CUDA_VISIBLE_DEVICES": "",
}


def run(*command: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run(
        list(map(str, command)), cwd=cwd, check=True, env={**os.environ, **KERNEL_ENV, **(env or {})}
    )


def lock_fits_this_machine() -> bool:
    """True where the lock's wheels install: CPython 3.11 on x86-64 Linux."""
    return (
        sys.platform == "linux"
        and platform.machine() == "x86_64"
        and platform.python_implementation() == "CPython"
        and sys.version_info[:2] == tuple(map(int, LOCK_PYTHON.split(".")[:2]))
    )


def ensure_environment() -> None:
    """Create .venv and install the locked requirements, unless that is already done."""
    requirements = LOCK if lock_fits_this_machine() else REQUIREMENTS
    wanted = hashlib.sha256(
        b"".join(path.read_bytes() for path in (REQUIREMENTS, LOCK, ROOT / "pyproject.toml"))
        + str(requirements.name).encode()
    ).hexdigest()
    if not PYTHON.exists():
        print(f"Creating the virtual environment {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    if requirements is REQUIREMENTS:
        print(f"requirements.lock is compiled for CPython {LOCK_PYTHON[:4]} on x86-64 Linux; "
              f"installing the ranges of requirements.txt instead (see the README).", flush=True)
    run(PYTHON, "-m", "pip", "install", "--upgrade", "pip")
    # The lock's first line, `-e .`, installs pe_lib itself as an editable package.
    run(PYTHON, "-m", "pip", "install", "-r", requirements.name)
    STAMP.write_text(wanted + "\n")


def lock(*extra: str) -> None:
    """Recompile requirements.lock; pinned versions are kept unless asked to upgrade."""
    for output, resolution in ((LOCK, ()), (LOWEST_LOCK, ("--resolution", "lowest-direct"))):
        run(
            PYTHON.parent / "uv", "pip", "compile", REQUIREMENTS.name, "--output-file", output.name,
            "--python-version", LOCK_PYTHON, "--python-platform", LOCK_PLATFORM, *resolution,
            "--custom-compile-command", "python3 tasks.py lock", "--quiet", *extra,
        )
    print(f"Wrote {LOCK.name}, which the next command installs, and {LOWEST_LOCK.name}, "
          "which `test --lowest` does.", flush=True)


#: How the book is built, here and by the tests that read it: every warning and
#: every broken reference is an error, and all of them are reported at once.
BOOK_BUILD_OPTIONS = ("-W", "-n", "--keep-going")


def book(*extra: str) -> None:
    run(PYTHON.parent / "jupyter-book", "build", ".", *BOOK_BUILD_OPTIONS, *extra)
    print(f"The book is at {ROOT / '_build' / 'html' / 'index.html'}")


def pdf(*extra: str) -> None:
    """The whole book as one PDF: Sphinx's single-page HTML book, printed by Chromium."""
    ensure_browser()
    run(PYTHON.parent / "jupyter-book", "build", ".", "--builder", "singlehtml", *BOOK_BUILD_OPTIONS, *extra)
    run(PYTHON, ROOT / "_ext" / "book_pdf.py", ROOT / "_build" / "singlehtml" / "index.html",
        ROOT / "_build" / "pdf" / "book.pdf")


def cpu_flags() -> set[str]:
    """The processor's feature flags (Linux), empty where they cannot be read."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def other_cpu_environment(flags: set[str] | None = None) -> dict[str, str]:
    """Settings that make this machine compute like a processor of another generation.

    OpenBLAS is told to use another core's kernels (``OPENBLAS_CORETYPE``), and NumPy
    is told not to use its highest group of vector instructions
    (``NPY_DISABLE_CPU_FEATURES``): AVX-512 on a machine that has it, AVX2 and FMA
    otherwise. Both change results in the last bits, as a student's laptop would.

    >>> other_cpu_environment({"avx2", "avx512f"})["OPENBLAS_CORETYPE"]
    'Haswell'
    >>> other_cpu_environment({"avx2"})["NPY_DISABLE_CPU_FEATURES"]
    'X86_V3 AVX2 FMA3'

    TensorFlow computes its matrix products with oneDNN instead of its own kernels
    (the default on Intel processors), and XLA compiles for a narrower instruction set:

    >>> other_cpu_environment({"avx2"})["TF_ENABLE_ONEDNN_OPTS"]
    '1'
    """
    flags = cpu_flags() if flags is None else flags
    if "avx512f" in flags:
        return {
            "OPENBLAS_CORETYPE": "Haswell",
            # NumPy 2.4 groups features (X86_V4); older releases name them one by one.
            "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_SKX "
                                        "AVX512_CLX AVX512_CNL",
            **OTHER_TENSORFLOW_ARITHMETIC, "XLA_FLAGS": "--xla_cpu_max_isa=AVX2",
        }
    return {"OPENBLAS_CORETYPE": "Sandybridge", "NPY_DISABLE_CPU_FEATURES": "X86_V3 AVX2 FMA3",
            **OTHER_TENSORFLOW_ARITHMETIC, "XLA_FLAGS": "--xla_cpu_max_isa=SSE4_2"}


#: TensorFlow's other matrix kernels. The chapters' kernels run with oneDNN's
#: optimisations off (KERNEL_ENV), TensorFlow's own Eigen kernels; switched on, the
#: products of training go through oneDNN's kernels, which sum in another order, as
#: they do by default on an Intel machine with AVX-512 or AMX. Training amplifies that
#: last-bit difference into other accuracies, so a trained claim that holds only for
#: the numbers one machine recorded fails here too.
OTHER_TENSORFLOW_ARITHMETIC = {"TF_ENABLE_ONEDNN_OPTS": "1"}


_SHOW_CPU_PATHS = (
    "import os, numpy; "
    "from numpy._core._multiarray_umath import __cpu_features__ as f; "
    "print('NumPy vector groups in use:', ', '.join(k for k in ('X86_V3', 'X86_V4') if f.get(k)) or 'none', "
    "'| OPENBLAS_CORETYPE =', os.environ.get('OPENBLAS_CORETYPE'))"
)


#: The end-to-end tests: the built book in a browser, the PDF, the lab, the
#: grading sandbox's runs and otter's Gradescope bundles. ``test --quick`` and
#: ``test --lowest`` leave them out.
SLOW_TESTS = ("tests/test_book.py", "tests/test_pdf.py", "tests/test_lab.py",
              "tests/test_assignments.py", "tests/test_fairness.py", "tests/test_red_team.py",
              "tests/test_grading_as_a_user.py", "tests/test_grading_folders.py",
              "tests/test_grading_parts.py", "tests/test_grading_habits.py", "tests/test_grading_reruns.py",
              "tests/test_gradescope_bundle.py")
#: The tests and doctests that train the course's small models (a few seconds to a
#: minute each). ``test --quick`` leaves them out; ``test --lowest`` runs them.
TRAINING_TESTS = ("tests/test_real_text.py", "tests/test_order_classifier.py", "tests/test_seq2seq.py",
                  "tests/test_extrapolation.py", "pe_lib/course/order/classifier.py",
                  "pe_lib/course/order/mixing.py", "pe_lib/course/encoder_decoder/model.py",
                  "pe_lib/course/extrapolation/experiment.py", "pe_lib/course/real_text/model.py",
                  "pe_lib/course/real_text/training.py")


def quick_selection(training: bool = False) -> list[str]:
    """pytest arguments that select the unit, property and doc tests: the folders
    they live in, without :data:`SLOW_TESTS`, and without :data:`TRAINING_TESTS`
    unless ``training``. The chapters are left out by naming the other folders (a
    folder of ``testpaths`` is collected even when ``--ignore`` names it).

    >>> quick_selection()[:4]
    ['tests', 'pe_lib', 'classroom', '--ignore=tests/test_book.py']
    >>> len(quick_selection()) - len(quick_selection(training=True)) == len(TRAINING_TESTS)
    True
    """
    left_out = SLOW_TESTS + (() if training else TRAINING_TESTS)
    return ["tests", "pe_lib", "classroom", *[f"--ignore={path}" for path in left_out]]


def order_options(order: str) -> list[str]:
    """pytest options that run the suite in a seeded shuffled order.

    ``shuffle`` (seed 1) or ``shuffle:SEED`` shuffles the test modules and the tests
    inside each (pytest-random-order); a notebook's cells keep their order (conftest.py).

    >>> order_options("shuffle:7")
    ['--random-order-bucket=module', '--random-order-seed=7']
    """
    kind, _, seed = order.partition(":")
    if kind != "shuffle" or (seed and not seed.isdigit()):
        raise SystemExit(f"--order takes shuffle or shuffle:SEED (a whole number), not {order!r}")
    return ["--random-order-bucket=module", f"--random-order-seed={seed or 1}"]


def test(*extra: str) -> None:
    """Everything on TensorFlow, then the layer tests on JAX; extra arguments: TensorFlow only.

    ``--quick`` runs the unit, property and doc tests that train no model (:func:`quick_selection`).
    ``--order shuffle:SEED`` runs the suite in a seeded shuffled order, to show that no
    test depends on another having run first. ``--lowest`` runs the unit, property and
    doc tests at the lowest versions that ``requirements.txt`` allows (:func:`lowest`).

    ``--other-cpu`` runs the unit, property and doc tests and every chapter under
    nbval (all but the browser's reading of the built book), computing as another
    processor would (:func:`other_cpu_environment`): the proof that neither a
    test nor a committed output depends on the processor that made it. On a
    machine with AVX-512 it runs without it, so the plain run and this one
    cover both sides of the AVX-512 / AVX2 split; it can only switch vector
    instructions off, never on. TensorFlow's oneDNN kernels stand in for another
    processor's matrix products, so the trained chapters run on other numbers.
    """
    rest = list(extra)
    options = []
    if "--order" in rest:
        at = rest.index("--order")
        if at + 1 >= len(rest):
            raise SystemExit("--order takes shuffle or shuffle:SEED")
        options += order_options(rest[at + 1])
        del rest[at:at + 2]
    quick = "--quick" in rest
    if quick:
        rest.remove("--quick")
    selection = quick_selection() if quick else []
    if "--lowest" in rest:
        rest.remove("--lowest")
        lowest(*options, *selection, *rest)
        return
    # Two workers use both cores; --dist loadscope keeps each notebook (one kernel,
    # cells in order) and each test module on one worker.
    pytest = [PYTHON, "-m", "pytest", "-n", "2", "--dist", "loadscope", "--durations=10"]
    if "--other-cpu" in rest:
        rest.remove("--other-cpu")
        environment = other_cpu_environment()
        ensure_bubblewrap()
        print("Running the tests and chapters as another processor would:", environment, flush=True)
        run(PYTHON, "-c", _SHOW_CPU_PATHS, env=environment)
        run(*pytest, "--ignore=tests/test_book.py", "--ignore=tests/test_pdf.py", "--ignore=tests/test_lab.py",
            *options, *selection, *rest, env=environment)
        return
    if not quick:
        ensure_browser()
        ensure_axe()
        ensure_bubblewrap()
    run(*pytest, *options, *selection, *rest)
    # The layers again on JAX: their tests alone (never the quick selection, most of
    # which is TensorFlow's), and not in the quick loop, which stays under two minutes.
    if not rest and not quick:
        run(PYTHON, "-m", "pytest", "-q", "-n", "2", *JAX_TESTS, *options, env={"KERAS_BACKEND": "jax"})


#: The environment of the lowest allowed versions, and the lock it installs.
LOWEST_VENV = ROOT / ".venv-lowest"
LOWEST_LOCK = ROOT / "requirements-lowest.lock"


def lowest(*extra: str) -> None:
    """The unit, property and doc tests at the lowest versions requirements.txt allows.

    ``requirements-lowest.lock`` pins every direct requirement at the lowest version
    its range allows (``tasks.py lock`` compiles it with uv's ``--resolution
    lowest-direct``); it is installed into ``.venv-lowest``. A lower bound the tests
    fail with is a bound to raise. The chapters are left out: their outputs are the
    locked versions' (a figure's bytes, a library's repr).
    """
    python = LOWEST_VENV / PYTHON.relative_to(VENV)
    if not python.exists():
        venv.create(LOWEST_VENV, with_pip=True)
    if not (LOWEST_VENV / "installed.lock").exists() or \
            (LOWEST_VENV / "installed.lock").read_text() != LOWEST_LOCK.read_text():
        run(python, "-m", "pip", "install", "--quiet", "-r", LOWEST_LOCK)
        (LOWEST_VENV / "installed.lock").write_text(LOWEST_LOCK.read_text())
    run(python, "-c", "import numpy, keras, tensorflow, jax, mpmath, hypothesis; "
                      "print('lowest versions:', *(f'{m.__name__} {m.__version__}' for m in "
                      "(numpy, keras, tensorflow, jax, mpmath, hypothesis)))")
    # test_notebook_regression checks nbval and glue on the locked versions the chapters use.
    run(python, "-m", "pytest", "-n", "2", "--dist", "loadscope", *quick_selection(training=True),
        "--ignore=tests/test_notebook_regression.py", *extra)


def ensure_debian_package(package: str, commands: tuple[str, ...], missing: str) -> None:
    """Install Debian's ``package`` when none of ``commands`` is found and apt can run as root."""
    if any(shutil.which(name) for name in commands):
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        os.environ["DEBIAN_FRONTEND"] = "noninteractive"
        run("apt-get", "update", "-qq")
        run("apt-get", "install", "-y", "-qq", "--no-install-recommends", package)
    else:
        print(missing, flush=True)


def ensure_browser() -> None:
    """tests/test_book.py reads the book in Chromium: install Debian's if none is found."""
    ensure_debian_package(
        "chromium", ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"),
        "No Chromium found and it cannot be installed here: the browser tests will fail. "
        "Install chromium, or set PE_COURSE_SKIP_BROWSER=1 to skip them on purpose.",
    )


#: axe-core, the accessibility checker tests/test_book.py runs on every page.
AXE_CORE = ("axe-core", "4.14.1")
AXE_FOLDER = ROOT / ".axe"


def ensure_axe() -> None:
    """Install axe-core from npm into .axe (git-ignored) unless that version is there."""
    import json

    package = AXE_FOLDER / "node_modules" / AXE_CORE[0] / "package.json"
    if package.is_file() and json.loads(package.read_text()).get("version") == AXE_CORE[1]:
        return
    ensure_debian_package(
        "npm", ("npm",),
        "No npm found and it cannot be installed here: the accessibility test will fail. "
        "Install npm (Debian/Ubuntu: apt-get install npm).",
    )
    if shutil.which("npm"):
        run("npm", "install", "--prefix", AXE_FOLDER, "--no-save", "--no-audit", "--no-fund", "@".join(AXE_CORE))


def ensure_bubblewrap() -> None:
    """Grading runs each submission in bubblewrap: install Debian's if it is missing."""
    ensure_debian_package(
        "bubblewrap", ("bwrap",),
        "No bubblewrap (bwrap) found and it cannot be installed here: grading will refuse "
        "to run. Install it (Debian/Ubuntu: sudo apt-get install bubblewrap).",
    )


def notebooks(*names: str) -> None:
    """Execute chapters top to bottom in a fresh kernel and save their outputs."""
    paths = [CHAPTERS / name for name in names] or sorted(CHAPTERS.glob("*.ipynb"))
    run(PYTHON, "-c", _EXECUTE_IN_PLACE, *paths)


#: The learner's working copy of the chapters: made by ``lab`` on first use, never
#: committed (.gitignore), so that running and editing a chapter leaves the course's
#: notebooks in chapters/ as they are. ``PE_COURSE_LAB`` puts it elsewhere.
LAB = Path(os.environ.get("PE_COURSE_LAB") or ROOT / "lab")
#: JupyterLab settings the course starts with (a learner may change them in Settings):
#: no prompt about Jupyter's news; every cell of a chapter drawn when it opens, not only
#: those in view, so that Run All evaluates the {eval} numbers of the whole prose
#: (jupyterlab-myst finds a cell's expressions in what it has drawn).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}


def lab_copy(names: tuple[str, ...] = (), *, reset: bool = False) -> list[Path]:
    """Copy the chapters (and their data) into LAB: those missing, or ``names`` again when ``reset``.

    A chapter already in the working copy is the learner's and is kept; a chapter the
    course adds later is copied on the next start. A chapter's copy reads in JupyterLab
    as its page does (``for_the_lab`` in pe_lib.course.display.lab_view: figure captions,
    tables and text the book pastes from glue). Returns the files copied.
    """
    if reset:
        unknown = [name for name in names if not (CHAPTERS / name).is_file()]
        if not names or unknown:
            raise SystemExit(f"usage: python3 tasks.py lab --reset CHAPTER.ipynb ...; no such chapter in "
                             f"{CHAPTERS}: {', '.join(unknown) or '(none given)'}")
        sources = [CHAPTERS / name for name in names]
    else:
        sources = [path for path in sorted(CHAPTERS.rglob("*")) if path.is_file()
                   and ".ipynb_checkpoints" not in path.parts and "__pycache__" not in path.parts]
    copied, notebooks = [], []
    for source in sources:
        target = LAB / source.relative_to(CHAPTERS)
        if target.exists() and not reset:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.suffix == ".ipynb":
            notebooks.append(source.relative_to(CHAPTERS))
        else:
            shutil.copy2(source, target)
        copied.append(target)
    if notebooks:
        # A chapter's copy shows in JupyterLab what the book pastes from glue (figure
        # captions, tables, text): see pe_lib.course.display.lab_view.for_the_lab.
        run(PYTHON, "-m", "pe_lib.course.display.lab_view", "--for-the-lab", CHAPTERS, LAB, *notebooks)
    for target in copied:
        # The copy is the learner's to edit, even where the course's files are read-only.
        target.chmod(target.stat().st_mode | 0o200)
    return copied


#: Kernel settings: what C++ libraries write straight to the process's stderr
#: (TensorFlow's start-up lines, which its log level does not reach) goes to the
#: terminal running the lab, as the server's own log does, not under a chapter's cells.
KERNEL_SETTINGS = {"IPKernelApp": {"capture_fd_output": False}}


def lab_settings() -> None:
    """Write the course's JupyterLab and kernel defaults into the environment (.venv)."""
    import json

    for path, settings in (
        (VENV / "share" / "jupyter" / "lab" / "settings" / "overrides.json", LAB_SETTINGS),
        (VENV / "etc" / "ipython" / "ipython_kernel_config.json", KERNEL_SETTINGS),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(settings, indent=2) + "\n"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def lab(*extra: str) -> None:
    """JupyterLab on the working copy LAB, its kernels in the environment the chapters are tested in.

    ``--reset CHAPTER.ipynb ...`` puts the course's version of those chapters back in
    the working copy (the learner's version is lost) and starts nothing.
    """
    if extra[:1] == ("--reset",):
        for path in lab_copy(extra[1:], reset=True):
            print(f"{path}: reset to the course's version", flush=True)
        return
    if subprocess.run([str(PYTHON), "-c", "import jupyterlab"], capture_output=True).returncode != 0:
        raise SystemExit(
            f"JupyterLab is not installed in {VENV}. It comes with requirements.txt: "
            "pull the latest requirements.txt and run this command again, or install it "
            f"yourself with {PYTHON} -m pip install jupyterlab."
        )
    copied = lab_copy()
    if copied:
        print(f"Copied {len(copied)} file(s) of the course into {LAB}: your runs and edits stay there.",
              flush=True)
    lab_settings()
    # Jupyter refuses to run as root unless told; containers (Binder, Docker) often are root.
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    # One Ctrl-C stops the server and its kernels, without asking to confirm.
    command = [str(PYTHON), "-m", "jupyterlab", f"--ServerApp.root_dir={LAB}", "--ServerApp.answer_yes=True",
               *as_root, *extra]
    # Kernels inherit the server's environment, so they run with KERNEL_ENV, which
    # is what `notebooks` and `test` use.
    env = {**os.environ, **KERNEL_ENV}
    print("+", " ".join(command), flush=True)
    if os.name == "posix":
        # The server takes this process's place: stopping this command (Ctrl-C, or
        # `kill` on its process id) stops the server, and no server is left behind.
        sys.stdout.flush()
        os.execve(command[0], command, env)
    subprocess.run(command, cwd=ROOT, check=True, env=env)


def bench(*extra: str) -> None:
    """Every benchmark, or one by name with its own options: ``bench timings --skip-suite``."""
    scripts = {path.stem.removeprefix("bench_"): path for path in sorted((ROOT / "benchmarks").glob("bench_*.py"))}
    if extra and extra[0] in scripts:
        run(PYTHON, scripts[extra[0]], *extra[1:])
        return
    for script in scripts.values():
        run(PYTHON, script, *extra)


#: The experiments ``experiment`` runs, by name: the module that runs each.
EXPERIMENTS = {"real-text": "pe_lib.course.real_text.experiment",
               "order-seeds": "pe_lib.course.order.seeds",
               "encoder-decoder-seeds": "pe_lib.course.encoder_decoder.seeds",
               "extrapolation-seeds": "pe_lib.course.extrapolation.seeds"}


def experiment(*extra: str) -> None:
    """A larger run of a chapter's experiment: ``experiment real-text [--config small] ...``.

    Keras's backend is left to the experiment (JAX on a GPU, TensorFlow on
    the CPU), so the kernel settings that hide GPUs are not applied; the
    others are, so that the CPU computes what a chapter's kernel computes.
    """
    if not extra or extra[0] not in EXPERIMENTS:
        raise SystemExit(f"usage: python3 tasks.py experiment {{{','.join(EXPERIMENTS)}}} [options]; "
                         f"'python3 tasks.py experiment real-text --help' lists the options")
    env = {**os.environ, **{key: KERNEL_ENV[key] for key in ("PYTHONHASHSEED", "TF_CPP_MIN_LOG_LEVEL",
                                                             "TF_ENABLE_ONEDNN_OPTS")},
           "PE_COURSE_COMMAND": "python3 tasks.py experiment " + " ".join(extra)}
    command = [str(PYTHON), "-m", EXPERIMENTS[extra[0]], *extra[1:]]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=ROOT, check=True, env=env)


def assignments(*extra: str) -> None:
    """Build the assignments from their masters; ``--no-run-tests`` skips checking the solutions."""
    ensure_bubblewrap()
    run(PYTHON, "-m", "classroom", "build", *extra)


def grade(*extra: str) -> None:
    """Grade a folder of submissions; relative paths are taken from the current folder."""
    ensure_bubblewrap()
    run(PYTHON, "-m", "classroom", "grade", *extra, cwd=Path.cwd())


# Run inside the virtual environment, where nbclient is installed.
_EXECUTE_IN_PLACE = """
import sys, time, nbformat
from nbclient import NotebookClient
from pe_lib.course.display.lab_view import convert
for path in sys.argv[1:]:
    notebook = nbformat.read(path, as_version=4)
    # Numbers quoted as {eval}, and JupyterLab's collapsed cells in step with the tags.
    convert(notebook)
    began = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}}).execute()
    # stderr holds library start-up messages that differ on every run and that
    # nbval does not compare; keeping them would only make every commit noisy.
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if o.get("name") != "stderr"]
    convert(notebook)  # again: the prose's numbers, as JupyterLab shows them, from the new outputs
    nbformat.write(notebook, path)
    print(f"{path}: executed in {time.perf_counter() - began:.1f} s", flush=True)
"""

COMMANDS = {
    "book": book,
    "pdf": pdf,
    "test": test,
    "lock": lock,
    "notebooks": notebooks,
    "lab": lab,
    "bench": bench,
    "experiment": experiment,
    "assignments": assignments,
    "grade": grade,
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        return 2
    ensure_environment()
    try:
        COMMANDS[argv[0]](*argv[1:])
    except subprocess.CalledProcessError as failure:
        return failure.returncode
    except KeyboardInterrupt:  # Ctrl-C is how one stops `lab`
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
