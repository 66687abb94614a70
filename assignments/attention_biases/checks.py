"""Grading spec of Assignment 4, read by the grader only (never by the sandbox).

Every value is compared with the reference first. ``alibi_bias`` is also
right when it is built correctly from the student's own slopes, and
``rope_score`` when it is the dot product of the student's own rotations;
each only when those earlier answers are sane (see
:func:`classroom.expect.plausible`): slopes that are right or a typical
mistake, rotations that turn each pair of features (interleaved or split in
halves) without changing its length. ``offset_gap`` counts only when the
student's ``rope_score`` really does not change on hidden positions.
"""

import numpy as np

from classroom.expect import close, dtype, numbers, plausible, rule, shape

#: NumPy only: the sandbox does not see pe_lib.
LIBRARY = False
FORBIDDEN = ("pe_lib",)
SECONDS = 20.0
#: Memory of the sandbox, its processes and files together (the solutions use a few dozen MiB).
MEMORY_GIB = 1.0

SLOPE_CASES = [1, 2, 4, 16]
BIAS_CASES = [(5, 2), (9, 8), (1, 4)]
ROPE_CASES = {
    "rows": ("numpy.random.default_rng(5).normal(size=(6, 8))", "numpy.arange(6)", 10000.0),
    "far": ("numpy.random.default_rng(6).normal(size=(4, 4))", "[100, 2000, 7, 0]", 10000.0),
    "base": ("numpy.random.default_rng(7).normal(size=(3, 6))", "[1, 2, 3]", 100.0),
}
SCORE_CASES = [(0, 4), (13, 2), (25, 25)]
#: (m, n) pairs and the shift applied to both, on which rope_score must not change.
SHIFT_CASES = [(3, 11), (17, 4), (0, 9), (40, 40)]
SHIFTS = [7, 30]
_Q = [0.3, 1.0, -0.2, 0.8]
_K = [-1.0, 0.4, 0.9, 0.6]
_VECTORS = f"q = numpy.array({_Q})\nk = numpy.array({_K})\n"

PROBES = {f"slopes_{h}": f"alibi_slopes({h})" for h in SLOPE_CASES}
for length, heads in BIAS_CASES:
    PROBES[f"bias_{length}_{heads}"] = f"alibi_bias({length}, {heads})"
    PROBES[f"own_slopes_{heads}"] = f"alibi_slopes({heads})"
for key, (x, positions, base) in ROPE_CASES.items():
    PROBES[f"rope_{key}"] = (f"import numpy\nanswer = rope_rotate({x}, numpy.asarray({positions}), "
                             f"base={base!r})")
for m, n in SCORE_CASES:
    PROBES[f"score_{m}_{n}"] = f"import numpy\n{_VECTORS}answer = rope_score(q, k, {m}, {n})"
    PROBES[f"own_rotations_{m}_{n}"] = (f"import numpy\n{_VECTORS}"
                                        f"answer = (rope_rotate(q[None, :], [{m}]), rope_rotate(k[None, :], [{n}]))")
PROBES["offset_gap"] = "offset_gap"
PROBES["shifted_scores"] = (f"import numpy\n{_VECTORS}answer = [[rope_score(q, k, m + s, n + s) "
                            f"for s in [0] + {SHIFTS}] for m, n in {SHIFT_CASES}]")


def slope_candidates(heads):
    """The right slopes, then typical mistakes: heads counted from 0, the 8 left out."""
    head = np.arange(1, heads + 1, dtype=np.float64)
    return [2.0 ** (-8.0 * head / heads), 2.0 ** (-8.0 * (head - 1) / heads), 2.0 ** (-head / heads)]


def bias_from_slopes(length, heads):
    """The bias the student's own slopes give, when they are sane."""
    def expected(answers):
        slopes = plausible(answers.get(f"own_slopes_{heads}"), (heads,), slope_candidates(heads),
                           rtol=1e-9, atol=0)
        if slopes is None:
            return None
        behind = (np.arange(length)[:, None] - np.arange(length)[None, :]).astype(np.float64)
        return np.where(behind < 0, -np.inf, 0.0 - slopes[:, None, None] * behind)
    return expected


def rotates_pairs(rotated, original) -> bool:
    """True when ``rotated`` turns each pair of ``original`` (interleaved or halves), keeping lengths."""
    rotated = numbers(rotated)
    if rotated is None or rotated.shape != (1, len(original)) or not np.isfinite(rotated).all():
        return False
    original, half = np.asarray(original, dtype=np.float64), len(original) // 2
    for pairs in ((slice(0, None, 2), slice(1, None, 2)), (slice(0, half), slice(half, None))):
        lengths = rotated[0][pairs[0]] ** 2 + rotated[0][pairs[1]] ** 2
        if np.allclose(lengths, original[pairs[0]] ** 2 + original[pairs[1]] ** 2, rtol=1e-9, atol=1e-12):
            return True
    return False


def score_from_rotations(m, n):
    """The score the student's own rotations give, when they are rotations."""
    def expected(answers):
        rotations = answers.get(f"own_rotations_{m}_{n}")
        if not (isinstance(rotations, tuple) and len(rotations) == 2
                and rotates_pairs(rotations[0], _Q) and rotates_pairs(rotations[1], _K)):
            return None
        return float(numbers(rotations[0])[0] @ numbers(rotations[1])[0])
    return expected


def small_gap(answers, references):
    gap = numbers(answers.get("offset_gap"))
    if gap is None or gap.shape != ():
        return "is not a number"
    if not (np.isfinite(gap) and 0 <= gap < 1e-9):
        return "is not below 1e-9: the score should not change"
    scores = numbers(answers.get("shifted_scores"))
    if scores is None or scores.shape != (len(SHIFT_CASES), len(SHIFTS) + 1) or not np.isfinite(scores).all():
        return "counts only once rope_score gives finite scores"
    if np.ptp(scores[:, 0]) < 1e-9:
        return "counts only once rope_score depends on the positions"
    if not np.allclose(scores, scores[:, :1], rtol=0, atol=1e-9):
        return "is not what rope_score gives: its scores change when both positions move"
    return ""


QUESTIONS = {
    "q1": [dtype("slopes_4", "alibi_slopes(4) dtype")]
    + [close(f"slopes_{h}", f"alibi_slopes({h})", rtol=1e-9, atol=0) for h in SLOPE_CASES],
    "q2": [dtype("bias_5_2", "alibi_bias(5, 2) dtype"), shape("bias_5_2", "alibi_bias(5, 2) shape", (2, 5, 5))]
    + [close(f"bias_{n}_{h}", f"alibi_bias({n}, {h})", rtol=1e-9, atol=1e-12,
             accept=bias_from_slopes(n, h)) for n, h in BIAS_CASES],
    "q3": [dtype("rope_rows", "rope_rotate dtype"), shape("rope_rows", "rope_rotate shape", (6, 8))]
    + [close(f"rope_{key}", f"rope_rotate({key} case)", rtol=1e-9, atol=1e-12) for key in ROPE_CASES],
    "q4": [close(f"score_{m}_{n}", f"rope_score(q, k, {m}, {n})", rtol=1e-9, atol=1e-12,
                 accept=score_from_rotations(m, n)) for m, n in SCORE_CASES]
    + [rule("offset_gap", 1.0, small_gap)],
}
