"""Grading spec of Assignment 2, read by the grader only (never by the sandbox).

Every value is compared with the reference first. ``shift_matrix`` is also
right when it is built correctly from the student's own ``rotation_block``,
and question 3 when it follows from the student's own ``shift_matrix(7, 16)``
and ``shifted``; each only when that earlier answer is sane (see
:func:`classroom.expect.plausible`): right, or the typical mistake of a
block that turns the other way (the transpose).
"""

import numpy as np

from classroom.expect import close, difference, plausible, rule, shape

LIBRARY = True
#: The references of the hidden checks: students may not call them.
FORBIDDEN = ("pe_lib.course.lessons.rotation", "pe_lib.similarity")
SECONDS = 20.0
#: Memory of the sandbox, its processes and files together (the solutions use a few dozen MiB).
MEMORY_GIB = 1.0

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


def _rates(depth, base):
    return base ** (-np.arange(0, depth, 2, dtype=np.float64) / depth)


def _rotation(angle):
    """The block that moves (sin a, cos a) to (sin(a + angle), cos(a + angle))."""
    cos, sin = np.cos(angle), np.sin(angle)
    return np.array([[cos, sin], [-sin, cos]])


def _block_diagonal(blocks):
    matrix = np.zeros((2 * len(blocks), 2 * len(blocks)))
    for pair, block in enumerate(blocks):
        matrix[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = block
    return matrix


def _right_shift(offset, depth, base=10000.0):
    return _block_diagonal([_rotation(offset * rate) for rate in _rates(depth, base)])


def own_blocks(answers, offset, depth, base):
    """The student's blocks for this case if each is sane: the right rotation or its transpose."""
    blocks = answers.get(f"blocks_{offset}_{depth}_{base:g}")
    rates = _rates(depth, base)
    if not isinstance(blocks, (list, tuple)) or len(blocks) != len(rates):
        return None
    sane = [plausible(block, (2, 2), [_rotation(offset * rate), _rotation(offset * rate).T],
                      rtol=1e-9, atol=1e-12) for block, rate in zip(blocks, rates)]
    return None if any(block is None for block in sane) else sane


def built_from_blocks(offset, depth, base):
    """The block-diagonal matrix of the student's own blocks."""
    def expected(answers):
        blocks = own_blocks(answers, offset, depth, base)
        return None if blocks is None else _block_diagonal(blocks)
    return expected


def _table():
    """The float64 encoding of 100 positions, depth 16 (the table the question gives)."""
    angles = np.arange(100.0)[:, None] * 10000.0 ** (-np.arange(0, 16, 2) / 16)
    table = np.empty((100, 16))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def own_matrix(answers):
    """The student's shift_matrix(7, 16) if sane: right, transposed, or built from sane blocks."""
    right = _right_shift(7, 16)
    return plausible(answers.get("own_shift_7_16"), (16, 16),
                     [right, right.T, built_from_blocks(7, 16, 10000.0)(answers)],
                     rtol=1e-9, atol=1e-12)


def shifted_from_own_matrix(answers):
    matrix = own_matrix(answers)
    return None if matrix is None else _table()[:-7] @ matrix.T


def error_of_own_shifted(answers, references):
    problem = difference(answers.get("shift_error", "__missing__"), references["shift_error"],
                         rtol=1e-6, atol=1e-12)
    if not problem:
        return ""
    shifted = plausible(answers.get("shifted"), (93, 16),
                        [references["shifted"], shifted_from_own_matrix(answers)], rtol=1e-9, atol=1e-12)
    if shifted is None:
        return problem
    return difference(answers["shift_error"], float(np.abs(shifted - _table()[7:]).max()),
                      rtol=1e-6, atol=1e-12)


QUESTIONS = {
    "q1": [shape("block_0.3", "rotation_block(0.3) shape", (2, 2))]
    + [close(f"block_{a:g}", f"rotation_block({a:g})", rtol=1e-9, atol=1e-12) for a in ANGLES],
    "q2": [shape("shift_7_16_10000", "shift_matrix(7, 16) shape", (16, 16))]
    + [close(f"shift_{o}_{d}_{b:g}", f"shift_matrix({o}, {d}, base={b:g})", rtol=1e-9, atol=1e-12,
             accept=built_from_blocks(o, d, b)) for o, d, b in SHIFT_CASES],
    "q3": [shape("shifted", "shifted shape", (93, 16)),
           close("shifted", "shifted", rtol=1e-9, atol=1e-12, accept=shifted_from_own_matrix),
           rule("shift_error", 1.0, error_of_own_shifted)],
    "q4": [close(f"dot_{o}_{d}", f"offset_dot({o}, {d})", rtol=1e-9, atol=1e-12) for o, d in DOT_CASES],
    "q5": [close("wavelength_100", "wavelength_100", rtol=1e-9),
           close("chord_22_60", "chord_22_60", rtol=1e-6)],
}
