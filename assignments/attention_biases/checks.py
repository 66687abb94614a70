"""Grading spec of Assignment 4, read by the grader only (never by the sandbox).

``alibi_bias`` is right when it matches the reference or is built correctly
from the student's own slopes; ``rope_score`` when it matches the reference
or the student's own ``rope_rotate``.
"""

import numpy as np

from classroom.expect import close, dtype, rule, shape

#: NumPy only: the sandbox does not see pe_lib.
LIBRARY = False
FORBIDDEN = ("pe_lib",)
SECONDS = 20.0

SLOPE_CASES = [1, 2, 4, 16]
BIAS_CASES = [(5, 2), (9, 8), (1, 4)]
ROPE_CASES = {
    "rows": ("numpy.random.default_rng(5).normal(size=(6, 8))", "numpy.arange(6)", 10000.0),
    "far": ("numpy.random.default_rng(6).normal(size=(4, 4))", "[100, 2000, 7, 0]", 10000.0),
    "base": ("numpy.random.default_rng(7).normal(size=(3, 6))", "[1, 2, 3]", 100.0),
}
SCORE_CASES = [(0, 4), (13, 2), (25, 25)]
_VECTORS = ("q = numpy.array([0.3, 1.0, -0.2, 0.8])\n"
            "k = numpy.array([-1.0, 0.4, 0.9, 0.6])\n")

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


def bias_from_slopes(length, heads):
    """The bias the student's own slopes give."""
    def expected(answers):
        slopes = np.asarray(answers[f"own_slopes_{heads}"], dtype=np.float64)
        if slopes.shape != (heads,):
            return None
        behind = (np.arange(length)[:, None] - np.arange(length)[None, :]).astype(np.float64)
        return np.where(behind < 0, -np.inf, 0.0 - slopes[:, None, None] * behind)
    return expected


def score_from_rotations(m, n):
    """The score the student's own rotations give."""
    def expected(answers):
        rotated_q, rotated_k = answers[f"own_rotations_{m}_{n}"]
        return float(np.asarray(rotated_q, dtype=np.float64)[0] @ np.asarray(rotated_k, dtype=np.float64)[0])
    return expected


def small_gap(answers, references):
    gap = answers.get("offset_gap")
    if isinstance(gap, np.ndarray) and gap.ndim == 0:
        gap = float(gap)
    if not isinstance(gap, (int, float)) or isinstance(gap, bool):
        return "is not a number"
    return "" if 0 <= gap < 1e-9 else f"is {gap:.2g}: the score should not change"


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
