"""Grading spec of Assignment 1, read by the grader only (never by the sandbox).

Each question is judged on inputs of its own, and every value is compared
with the reference first. ``encoding_matrix`` is also right when it is built
correctly from the student's own ``angle_rates`` (any rates of the course's
form: the first 1, then decreasing), the base case of
``angle_rates`` when it is the student's own formula with that base, and
question 3's norms and largest entry when they are those of the student's
own table; each only when that earlier answer is sane (see
:func:`classroom.expect.plausible`): right, or a known typical mistake. A
shape or dtype check weighs half a value check.
"""

import math

import numpy as np

from classroom.expect import close, difference, dtype, numbers, plausible, rule, shape

#: The sandbox does not see pe_lib: this assignment is NumPy only.
LIBRARY = False
FORBIDDEN = ("pe_lib",)
#: Seconds one cell or probe may run.
SECONDS = 20.0
#: Memory of the sandbox, its processes and files together (the solutions use a few dozen MiB).
MEMORY_GIB = 1.0

RATE_CASES = [(4, 10000.0), (3, 10000.0), (12, 100.0), (7, 10000.0)]
#: The case that checks the base is used; judged on the student's own formula at base 10000.
BASE_CASE = (12, 100.0)
#: (length, depth, base). No case's answer is all zeros (every row 0 is [0, 1, 0, 1, ...], so a
#: single position would be), so that an answer of zeros earns no value case.
MATRIX_CASES = [(5, 7, 10000.0), (12, 16, 10000.0), (2, 1, 10000.0), (9, 6, 100.0)]
CLOSEST_CASES = {
    "points": "[[0.0, 0.0], [3.0, 4.0], [0.3, 0.1], [2.9, 4.05]]",
    "wave": "numpy.sin(numpy.arange(40.0) * 0.5)",
    "codes": "numpy.random.default_rng(11).normal(size=(30, 3))",
}

PROBES = {}
for depth, base in RATE_CASES:
    PROBES[f"rates_{depth}_{base:g}"] = f"angle_rates({depth}, base={base!r})"
PROBES["own_rates_12_10000"] = "angle_rates(12, base=10000.0)"
for length, depth, base in MATRIX_CASES:
    PROBES[f"matrix_{length}_{depth}_{base:g}"] = f"encoding_matrix({length}, {depth}, base={base!r})"
    PROBES[f"own_rates_{depth}_{base:g}"] = f"angle_rates({depth}, base={base!r})"
PROBES["own_matrix_200_16"] = "encoding_matrix(200, 16)"
for name in ("table", "norms_squared", "largest_entry", "fast_wave_pair"):
    PROBES[name] = name
for key, data in CLOSEST_CASES.items():
    PROBES[f"closest_{key}"] = f"import numpy\nanswer = closest_rows(numpy.asarray({data}))"


def rate_candidates(depth, base):
    """The right rates, then those of the typical mistake: exponent -i/D in place of -2i/D."""
    pair_index = np.arange((depth + 1) // 2, dtype=np.float64)
    return [base ** (-2.0 * pair_index / depth), base ** (-pair_index / depth)]


def own_rates(answers, depth, base):
    """The student's own rates for ``depth`` and ``base`` if they are sane, else None."""
    answer = answers.get(f"own_rates_{depth}_{base:g}")
    return plausible(answer, ((depth + 1) // 2,),
                     rate_candidates(depth, base), rtol=1e-6, atol=0)


def rates_to_build_on(answers, depth, base):
    """The student's own rates for q2: sane ones (:func:`own_rates`), or any rates of the
    course's form, whatever their formula: the first 1, then strictly decreasing and positive.

    q2 asks whether ``encoding_matrix`` is built right from ``angle_rates``; rates that are
    wrong for some depths (an odd one, say) already cost their marks in q1. Degenerate rates
    (zeros, NaN, all equal) are never built on.
    """
    rates = own_rates(answers, depth, base)
    if rates is not None:
        return rates
    rates = numbers(answers.get(f"own_rates_{depth}_{base:g}"))
    if rates is None or rates.shape != ((depth + 1) // 2,) or not np.isfinite(rates).all():
        return None
    if rates[0] != 1.0 or (rates <= 0).any() or (np.diff(rates) >= 0).any():
        return None
    return rates


def rates_with_own_formula(answers):
    """The base case's rates under the student's own formula: their base-10000 rates, rebased."""
    depth, base = BASE_CASE
    rates = own_rates(answers, depth, 10000.0)
    return None if rates is None else rates ** (math.log(base) / math.log(10000.0))


def built_from_rates(length, depth, base):
    """The matrix the student's own rates give, so that a wrong q1 costs q2 nothing."""
    def expected(answers):
        rates = rates_to_build_on(answers, depth, base)
        if rates is None:
            return None
        angles = np.arange(length, dtype=np.float64)[:, None] * rates
        matrix = np.empty((length, depth))
        matrix[:, 0::2] = np.sin(angles)
        matrix[:, 1::2] = np.cos(angles[:, : depth // 2])
        return matrix
    return expected


def sinusoidal(matrix):
    """True when ``matrix`` is a table of sine-cosine pairs of distinct positions.

    What any encoding_matrix gives, right or with a typical mistake (an
    offset, swapped columns, other rates): finite, unit pairs, distinct rows.
    """
    return (np.isfinite(matrix).all() and np.abs(matrix).max() <= 1 + 1e-9
            and np.allclose(matrix[:, 0::2] ** 2 + matrix[:, 1::2] ** 2, 1.0, atol=1e-6)
            and len(np.unique(matrix.round(9), axis=0)) == len(matrix))


def _own_table(answers, references):
    """The student's table if it is sane: right, or their own sinusoidal encoding_matrix(200, 16)."""
    own_matrix = numbers(answers.get("own_matrix_200_16"))
    candidates = [references["table"]]
    if own_matrix is not None and own_matrix.shape == (200, 16) and sinusoidal(own_matrix):
        candidates.append(own_matrix)
    return plausible(answers.get("table"), (200, 16), candidates, rtol=1e-6, atol=1e-6)


def norms_of_own_table(answers, references):
    problem = difference(answers.get("norms_squared", "__missing__"), references["norms_squared"],
                         rtol=1e-6, atol=1e-9)
    table = _own_table(answers, references) if problem else None
    if table is None:
        return problem
    return difference(answers["norms_squared"], (table**2).sum(axis=1), rtol=1e-6, atol=1e-9)


def largest_of_own_table(answers, references):
    problem = difference(answers.get("largest_entry", "__missing__"), references["largest_entry"],
                         rtol=1e-9, atol=1e-12)
    table = _own_table(answers, references) if problem else None
    if table is None:
        return problem
    return difference(answers["largest_entry"], float(np.abs(table).max()), rtol=1e-9, atol=1e-12)


QUESTIONS = {
    "q1": [dtype("rates_4_10000", "angle_rates(4) dtype")]
    + [close(f"rates_{d}_{b:g}", f"angle_rates({d}, base={b:g})", rtol=1e-6, atol=0,
             accept=rates_with_own_formula if (d, b) == BASE_CASE else None)
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
