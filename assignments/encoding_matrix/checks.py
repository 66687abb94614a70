"""Grading spec of Assignment 1, read by the grader only (never by the sandbox).

Each question is judged on inputs of its own: ``encoding_matrix`` is right
when it matches the reference or is built correctly from the student's own
``angle_rates``; question 3 is judged on the student's own ``table``. A
shape or dtype check weighs half a value check.
"""

import numpy as np

from classroom.expect import close, difference, dtype, rule, shape

#: The sandbox does not see pe_lib: this assignment is NumPy only.
LIBRARY = False
FORBIDDEN = ("pe_lib",)
#: Seconds one cell or probe may run.
SECONDS = 20.0

RATE_CASES = [(4, 10000.0), (3, 10000.0), (12, 100.0), (7, 10000.0)]
MATRIX_CASES = [(5, 7, 10000.0), (12, 16, 10000.0), (1, 1, 10000.0), (9, 6, 100.0)]
CLOSEST_CASES = {
    "points": "[[0.0, 0.0], [3.0, 4.0], [0.3, 0.1], [2.9, 4.05]]",
    "wave": "numpy.sin(numpy.arange(40.0) * 0.5)",
    "codes": "numpy.random.default_rng(11).normal(size=(30, 3))",
}

PROBES = {}
for depth, base in RATE_CASES:
    PROBES[f"rates_{depth}_{base:g}"] = f"angle_rates({depth}, base={base!r})"
for length, depth, base in MATRIX_CASES:
    PROBES[f"matrix_{length}_{depth}_{base:g}"] = f"encoding_matrix({length}, {depth}, base={base!r})"
    PROBES[f"own_rates_{depth}_{base:g}"] = f"angle_rates({depth}, base={base!r})"
for name in ("table", "norms_squared", "largest_entry", "fast_wave_pair"):
    PROBES[name] = name
for key, data in CLOSEST_CASES.items():
    PROBES[f"closest_{key}"] = f"import numpy\nanswer = closest_rows(numpy.asarray({data}))"


def built_from_rates(length, depth, base):
    """The matrix the student's own rates give, so that a wrong q1 costs q2 nothing."""
    def expected(answers):
        rates = np.asarray(answers[f"own_rates_{depth}_{base:g}"], dtype=np.float64)
        if rates.shape != ((depth + 1) // 2,):
            return None
        angles = np.arange(length, dtype=np.float64)[:, None] * rates
        matrix = np.empty((length, depth))
        matrix[:, 0::2] = np.sin(angles)
        matrix[:, 1::2] = np.cos(angles[:, : depth // 2])
        return matrix
    return expected


def _own_table(answers):
    """The student's table, or None when it is not a (200, 16) array."""
    table = answers.get("table")
    if not isinstance(table, np.ndarray) or table.shape != (200, 16):
        return None
    return table.astype(np.float64)


def norms_of_own_table(answers, references):
    table = _own_table(answers)
    if table is None:
        return "cannot be checked without a (200, 16) table"
    return difference(answers["norms_squared"], (table**2).sum(axis=1), rtol=1e-6, atol=1e-9)


def largest_of_own_table(answers, references):
    table = _own_table(answers)
    if table is None:
        return "cannot be checked without a (200, 16) table"
    return difference(answers["largest_entry"], float(np.abs(table).max()), rtol=1e-9, atol=1e-12)


QUESTIONS = {
    "q1": [dtype("rates_4_10000", "angle_rates(4) dtype")]
    + [close(f"rates_{d}_{b:g}", f"angle_rates({d}, base={b:g})", rtol=1e-6, atol=0)
       for d, b in RATE_CASES],
    "q2": [dtype("matrix_5_7_10000", "encoding_matrix(5, 7) dtype"),
           shape("matrix_5_7_10000", "encoding_matrix(5, 7) shape", (5, 7))]
    + [close(f"matrix_{n}_{d}_{b:g}", f"encoding_matrix({n}, {d}, base={b:g})", rtol=1e-6, atol=1e-6,
             accept=built_from_rates(n, d, b)) for n, d, b in MATRIX_CASES],
    "q3": [shape("table", "table shape", (200, 16)),
           rule("norms_squared", 1.0, norms_of_own_table),
           rule("largest_entry", 1.0, largest_of_own_table)],
    "q4": [close(f"closest_{key}", f"closest_rows({key} table)", rtol=1e-9, atol=1e-12)
           for key in CLOSEST_CASES]
    + [close("fast_wave_pair", "fast_wave_pair", rtol=1e-9, atol=1e-12)],
}
