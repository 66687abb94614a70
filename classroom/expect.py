"""Checks an assignment's grading spec is written with, judged in the grader's process.

A :class:`Check` has a label (what it looks at), a weight, and a judge: a
function of the student's answers and the reference answers that returns
``""`` when the check passes and a short reason when it fails.

>>> import numpy as np
>>> check = close("m", "encoding_matrix(2, 3)")
>>> check.judge({"m": np.zeros((2, 3))}, {"m": np.eye(2, 3)})
'column 0 differs by up to 1'
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from classroom.answers import Raised, clean

Judge = Callable[[dict, dict], str]


@dataclasses.dataclass(frozen=True)
class Check:
    """One weighted test case of a question."""

    label: str
    weight: float
    judge: Judge


def _number(value: float) -> str:
    return f"{float(value):.2g}"


def missing(answer) -> str:
    """Why ``answer`` is no answer at all, or ``""``."""
    if isinstance(answer, Raised):
        if answer.message.startswith("still ... "):
            return "not answered"
        return f"raised {answer.kind}: {answer.message}".rstrip(": ")
    if answer is None:
        return "gave None"
    if isinstance(answer, str) and answer == "__missing__":
        return "was not computed"
    return ""


def difference(answer, expected, *, rtol: float = 1e-7, atol: float = 1e-9) -> str:
    """How ``answer`` differs from ``expected`` beyond the tolerances, or ``""``."""
    problem = missing(answer) if not isinstance(answer, np.ndarray) else ""
    if problem:
        return problem
    if isinstance(expected, np.ndarray) or isinstance(expected, float):
        try:
            got = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError):
            return f"is a {type(answer).__name__}, not numbers"
        want = np.asarray(expected, dtype=np.float64)
        if got.shape != want.shape:
            return f"has shape {got.shape}, expected {want.shape}"
        if not np.all(np.isfinite(got) == np.isfinite(want)):
            return "has NaN or infinite values where none are expected"
        with np.errstate(invalid="ignore", over="ignore"):
            error = np.where(np.isfinite(want), np.abs(got - want), 0.0)
        bad = error > atol + rtol * np.abs(np.where(np.isfinite(want), want, 0.0))
        if not bad.any():
            return ""
        if want.ndim == 0:
            return f"is {_number(got)}, expected {_number(want)}"
        if want.ndim == 1:
            index = int(np.argmax(np.where(bad, error, -1)))
            return f"entry {index} differs by up to {_number(error.max())}"
        columns = np.where(bad, error, -1).reshape(-1, want.shape[-1]).max(axis=0)
        column = int(np.argmax(columns))
        return f"column {column} differs by up to {_number(columns[column])}"
    if isinstance(expected, (tuple, list)):
        if not isinstance(answer, (tuple, list)) or len(answer) != len(expected):
            return f"is not a sequence of {len(expected)} items"
        for index, (got, want) in enumerate(zip(answer, expected)):
            problem = difference(got, want, rtol=rtol, atol=atol)
            if problem:
                return f"item {index} {problem}"
        return ""
    if isinstance(answer, np.ndarray) and answer.ndim > 0:
        return f"is an array, expected {clean(repr(expected), 40)}"
    if isinstance(expected, (bool, int, str)) or expected is None:
        if isinstance(expected, int) and not isinstance(expected, bool) and isinstance(answer, (int, float, np.ndarray)):
            if np.ndim(answer) == 0 and float(answer) == expected:
                return ""
        return "" if answer == expected else f"is {clean(repr(answer), 40)}, expected {clean(repr(expected), 40)}"
    return "cannot be compared"


def close(probe: str, label: str, weight: float = 1.0, *, rtol: float = 1e-7,
          atol: float = 1e-9, accept: Callable[[dict], object] | None = None) -> Check:
    """The answer to ``probe`` equals the reference within the tolerances.

    ``accept``, if given, computes from the student's answers a second value
    that also counts as right (their own earlier answers, so that one mistake
    costs marks once).
    """
    def judge(answers, references):
        answer = answers.get(probe, "__missing__")
        problem = difference(answer, references[probe], rtol=rtol, atol=atol)
        if problem and accept is not None and not missing(answer):
            try:
                alternative = accept(answers)
            except Exception:
                alternative = None
            if alternative is not None and not difference(answer, alternative, rtol=rtol, atol=atol):
                return ""
        return problem
    return Check(label, weight, judge)


def dtype(probe: str, label: str, wanted: str = "float64", weight: float = 0.5) -> Check:
    """The answer to ``probe`` is a NumPy array of dtype ``wanted``."""
    def judge(answers, references):
        answer = answers.get(probe, "__missing__")
        problem = missing(answer) if not isinstance(answer, np.ndarray) else ""
        if problem:
            return problem
        if not isinstance(answer, np.ndarray):
            return f"is a {type(answer).__name__}, expected a {wanted} NumPy array"
        return "" if answer.dtype == wanted else f"has dtype {answer.dtype}, expected {wanted}"
    return Check(label, weight, judge)


def shape(probe: str, label: str, wanted: tuple, weight: float = 0.5) -> Check:
    """The answer to ``probe`` has shape ``wanted``."""
    def judge(answers, references):
        answer = answers.get(probe, "__missing__")
        problem = missing(answer) if not isinstance(answer, np.ndarray) else ""
        if problem:
            return problem
        got = np.shape(answer) if isinstance(answer, (np.ndarray, list, tuple)) else None
        return "" if got == tuple(wanted) else f"has shape {got}, expected {tuple(wanted)}"
    return Check(label, weight, judge)


def rule(label: str, weight: float, judge: Judge) -> Check:
    """A check with a judge of its own; an exception in it fails the check."""
    def safe(answers, references):
        try:
            return judge(answers, references)
        except Exception as error:
            return f"cannot be checked ({type(error).__name__})"
    return Check(label, weight, safe)
