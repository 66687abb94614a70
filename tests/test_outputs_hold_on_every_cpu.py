"""No committed output shows round-off: what a chapter prints or glues holds on every processor.

OpenBLAS picks its kernels for the processor it runs on, and NumPy dispatches
its ``sin``, ``exp``, ``power`` and ``log`` loops by the processor's vector
instructions, so the last bits of a result differ from one machine to
another. A chapter that prints such a difference ("largest error 1.8e-14")
passes nbval on the machine that made it and fails on the next one. This test
reads every chapter's committed outputs, printed text and glued values alike,
and fails on any number smaller than :data:`NOISE_BELOW` in magnitude, which at
that size can only be round-off: below float32's machine epsilon (1.2e-7), a
difference between two computations of one value is noise, in float32 as in
float64.

A stated tolerance is not noise: a bare power of ten ("10⁻¹²", written by
``glue_number(name, 1e-12, "bound")``, or ``1e-12``) passes, and so does a
constant of the number format, a power of two to the digits shown (float32's
step 2⁻²⁴ written as "6.0 × 10⁻⁸"). So does a cell
tagged ``machine-dependent``, for the rare output that is about the machine
itself (and is then also tagged ``nbval-ignore-output``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
NOISE_BELOW = 1e-7
EXEMPT_TAG = "machine-dependent"
GLUE = "application/papermill.record/"
TEXT_TYPES = ("text/plain", "text/markdown", "text/html", "text/latex")

_SUPERSCRIPT = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")
NUMBER = re.compile(
    r"(?<![\w.])(?P<mantissa>\d+(?:\.\d+)?)"
    r"(?:[eE](?P<exponent>[-+]?\d+)|\s*[×x·]\s*10(?P<superscript>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
    r"|(?<![\w.])(?P<decimal>0\.\d+)"
)

ADVICE = (
    "a number this small is round-off, whose digits change from one processor to another. "
    "Show what holds on every machine instead: the tolerance an assertion enforces "
    "(glue_number(name, 1e-12, 'bound') writes '10⁻¹²'; print 'below 1e-12'), or 'exactly "
    "equal' where that is exact by construction, and keep the exact assertion in a "
    "remove-cell cell (CONTRIBUTING.md, 'Outputs that hold on every processor')."
)


def numbers_in(text: str):
    """Yield ``(written, value)`` for each number in ``text`` written in digits."""
    for found in NUMBER.finditer(text):
        if found["decimal"]:
            yield found[0], float(found["decimal"])
            continue
        exponent = found["exponent"] or found["superscript"].translate(_SUPERSCRIPT)
        yield found[0], float(found["mantissa"]) * 10.0 ** int(exponent)


def is_power_of_ten(value: float) -> bool:
    exponent = round(math.log10(value))
    return math.isclose(value, 10.0**exponent, rel_tol=1e-12)


def is_power_of_two_as_written(written: str, value: float) -> bool:
    """True when ``written`` is a float32 constant, a power of two from 2⁻³⁰ up, to the digits
    it shows. Smaller powers of two are float64 steps, and a float64 difference of one step is
    round-off (4.4e-16 is 2⁻⁵¹)."""
    if value < 2.0**-30:
        return False
    mantissa = re.match(r"\d+(?:\.(\d+))?", written)
    digits = len(mantissa.group(0).replace(".", "").lstrip("0")) or 1
    power = 2.0 ** round(math.log2(value))
    return f"{power:.{digits - 1}e}" == f"{value:.{digits - 1}e}"


def noise_in(text: str) -> list[str]:
    """The numbers in ``text`` that can only be round-off."""
    return [
        written for written, value in numbers_in(text)
        if 0 < abs(value) < NOISE_BELOW
        and not is_power_of_ten(abs(value))
        and not is_power_of_two_as_written(written, abs(value))
    ]


def output_texts(output) -> list[str]:
    texts = ["".join(output["text"])] if "text" in output else []
    for key, value in output.get("data", {}).items():
        if key.removeprefix(GLUE) in TEXT_TYPES:
            texts.append("".join(value) if isinstance(value, list) else str(value))
    return texts


def noisy_outputs(notebook) -> list[str]:
    """One line per output of ``notebook`` that shows round-off, naming its cell."""
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or EXEMPT_TAG in cell.metadata.get("tags", []):
            continue
        for output in cell.get("outputs", []):
            for text in output_texts(output):
                for written in noise_in(text):
                    found.append(f"cell {index} shows {written!r}")
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_committed_output_shows_round_off(chapter):
    found = noisy_outputs(nbformat.read(chapter, as_version=4))
    assert not found, f"{chapter.name}: " + "; ".join(found) + f".\n{ADVICE}"


@pytest.mark.parametrize(
    ("text", "noise"),
    [
        ("largest difference from the full score: 1.8e-14", ["1.8e-14"]),
        ("spread over 40 shifts: 1.4E-12", ["1.4E-12"]),
        ("'3.2 × 10⁻¹⁵'", ["3.2 × 10⁻¹⁵"]),
        ("     1     6.4e-08               0.110", ["6.4e-08"]),
        ("difference 0.0000000000183", ["0.0000000000183"]),
        ("agree to within 10⁻¹²", []),
        ("below 1e-12, checked", []),
        ("a rate of 7.2 × 10⁻⁴ and 3.0e-06", []),
        ("the same to 1e-5: True", []),
        ("exactly 0 and 0.0e+00", []),
        ("float32's step 2⁻²⁴ ≈ '6.0 × 10⁻⁸', half of it 3.0e-08", []),
        ("largest error 6.1e-08", ["6.1e-08"]),
        ("complex form vs pe_lib.rope: 4.4e-16", ["4.4e-16"]),
        ("position 131072, angle 0.5403", []),
    ],
)
def test_the_guard_tells_round_off_from_bounds_and_values(text, noise):
    assert noise_in(text) == noise


def test_the_guard_fails_a_noisy_notebook_and_spares_an_exempt_cell():
    noisy = nbformat.v4.new_code_cell("print(err)", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="largest error: 1.9e-14\n")])
    glued = nbformat.v4.new_code_cell("glue_number('err', err, 'tiny')", outputs=[
        nbformat.v4.new_output("display_data", data={GLUE + "text/plain": "'1.9 × 10⁻¹⁴'"})])
    exempt = nbformat.v4.new_code_cell("print(err)", metadata={"tags": [EXEMPT_TAG]}, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="on this machine: 1.9e-14\n")])
    notebook = nbformat.v4.new_notebook(cells=[noisy, glued, exempt])
    assert noisy_outputs(notebook) == ["cell 0 shows '1.9e-14'", "cell 1 shows '1.9 × 10⁻¹⁴'"]
