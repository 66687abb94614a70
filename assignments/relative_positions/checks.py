"""Grading spec of Assignment 2, read by the grader only (never by the sandbox).

``shift_matrix`` is right when it matches the reference or is built
correctly from the student's own ``rotation_block``; question 3 is judged
on the student's own ``shift_matrix(7, 16)`` and ``shifted``.
"""

import numpy as np

from classroom.expect import close, difference, rule, shape

LIBRARY = True
#: The references of the hidden checks: students may not call them.
FORBIDDEN = ("pe_lib.course.rotation", "pe_lib.course.similarity")
SECONDS = 20.0

ANGLES = [0.3, -2.0, 2.5, 1.0]
SHIFT_CASES = [(1, 4, 10000.0), (7, 16, 10000.0), (-5, 8, 10000.0), (3, 6, 100.0)]
DOT_CASES = [(0, 8), (5, 16), (-13, 64), (19, 10)]

PROBES = {f"block_{a:g}": f"rotation_block({a!r})" for a in ANGLES}
for offset, depth, base in SHIFT_CASES:
    key = f"{offset}_{depth}_{base:g}"
    PROBES[f"shift_{key}"] = f"shift_matrix({offset}, {depth}, base={base!r})"
    PROBES[f"blocks_{key}"] = ("import pe_lib\nanswer = [rotation_block({o} * rate) for rate in "
                               "pe_lib.angle_rates({d}, base={b!r})]").format(o=offset, d=depth, b=base)
PROBES["own_shift_7_16"] = "shift_matrix(7, 16)"
for offset, depth in DOT_CASES:
    PROBES[f"dot_{offset}_{depth}"] = f"offset_dot({offset}, {depth})"
for name in ("shifted", "shift_error", "wavelength_100", "chord_22_60"):
    PROBES[name] = name


def built_from_blocks(key):
    """The block-diagonal matrix of the student's own blocks."""
    def expected(answers):
        blocks = [np.asarray(block, dtype=np.float64) for block in answers[f"blocks_{key}"]]
        if not all(block.shape == (2, 2) for block in blocks):
            return None
        matrix = np.zeros((2 * len(blocks), 2 * len(blocks)))
        for pair, block in enumerate(blocks):
            matrix[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = block
        return matrix
    return expected


def _table():
    """The float64 encoding of 100 positions, depth 16 (the table the question gives)."""
    angles = np.arange(100.0)[:, None] * 10000.0 ** (-np.arange(0, 16, 2) / 16)
    table = np.empty((100, 16))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def shifted_from_own_matrix(answers):
    matrix = np.asarray(answers["own_shift_7_16"], dtype=np.float64)
    return _table()[:-7] @ matrix.T if matrix.shape == (16, 16) else None


def error_of_own_shifted(answers, references):
    shifted = answers.get("shifted")
    if not isinstance(shifted, np.ndarray) or shifted.shape != (93, 16):
        return "cannot be checked without a (93, 16) shifted"
    return difference(answers["shift_error"], float(np.abs(shifted - _table()[7:]).max()),
                      rtol=1e-6, atol=1e-12)


QUESTIONS = {
    "q1": [shape("block_0.3", "rotation_block(0.3) shape", (2, 2))]
    + [close(f"block_{a:g}", f"rotation_block({a:g})", rtol=1e-9, atol=1e-12) for a in ANGLES],
    "q2": [shape("shift_7_16_10000", "shift_matrix(7, 16) shape", (16, 16))]
    + [close(f"shift_{o}_{d}_{b:g}", f"shift_matrix({o}, {d}, base={b:g})", rtol=1e-9, atol=1e-12,
             accept=built_from_blocks(f"{o}_{d}_{b:g}")) for o, d, b in SHIFT_CASES],
    "q3": [shape("shifted", "shifted shape", (93, 16)),
           close("shifted", "shifted", rtol=1e-9, atol=1e-12, accept=shifted_from_own_matrix),
           rule("shift_error", 1.0, error_of_own_shifted)],
    "q4": [close(f"dot_{o}_{d}", f"offset_dot({o}, {d})", rtol=1e-9, atol=1e-12) for o, d in DOT_CASES],
    "q5": [close("wavelength_100", "wavelength_100", rtol=1e-9),
           close("chord_22_60", "chord_22_60", rtol=1e-6)],
}
