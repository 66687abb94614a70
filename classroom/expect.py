"""Checks an assignment's grading spec is written with, judged in the grader's process.

A :class:`Check` has a label (what it looks at), a weight, and a judge: a
function of the student's answers and the reference answers that returns
``""`` when the check passes and a short reason when it fails.

A reason says which way an answer is wrong and by how much, never what the
reference is, what the student's code returned, or the text of an exception
it raised (the probes' inputs are hidden, and a student's code could carry
them out in any of those). NaN never equals anything, and infinity only the
same infinity where the reference has one.

A check may accept, besides the reference, what the student's own earlier
answers imply (so that one mistake costs marks once), but only through
:func:`plausible`: the earlier answer must be numbers of the right shape,
finite, not constant, and close to the right one or to a known typical
mistake. Degenerate answers (all NaN, all zeros) therefore never make a
later check pass.

>>> import numpy as np
>>> check = close("m", "encoding_matrix(2, 3)")
>>> check.judge({"m": np.zeros((2, 3))}, {"m": np.eye(2, 3)})
'column 0 differs by up to 1'
>>> difference(np.array([np.nan]), np.array([np.nan]))
'has NaN values'
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

import numpy as np

from classroom.answers import NOT_DATA, Raised, Unreadable

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
        if answer.kind == "NotData":
            if answer.message == "ellipsis":
                return "not answered"
            return NOT_DATA.get(answer.message, "could not be sent as data")
        if answer.kind == "OutOfTime":
            return "ran past its time and was stopped"
        return f"raised {answer.kind}"
    if isinstance(answer, Unreadable):
        return f"could not be read: it {answer.reason}"
    if answer is None:
        return "gave None"
    if isinstance(answer, str) and answer == "__missing__":
        return "was not computed"
    return ""


def numbers(answer) -> np.ndarray | None:
    """``answer`` as a float64 array if it is real numbers (an array, a list, a number), else None.

    >>> numbers([1, 2.5]), numbers("text"), numbers(True)
    (array([1. , 2.5]), None, None)
    """
    if isinstance(answer, (str, bytes, bool, dict, Raised, Unreadable)) or answer is None:
        return None
    try:
        return np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None


def _kind(answer) -> str:
    if isinstance(answer, (list, tuple, dict, str)):
        return f"is a {type(answer).__name__}"
    return "is not numbers"


def difference(answer, expected, *, rtol: float = 1e-7, atol: float = 1e-9) -> str:
    """How ``answer`` differs from ``expected`` beyond the tolerances, or ``""``."""
    problem = missing(answer) if not isinstance(answer, np.ndarray) else ""
    if problem:
        return problem
    if isinstance(expected, np.ndarray) or isinstance(expected, float):
        got = numbers(answer)
        if got is None:
            return f"{_kind(answer)}, not numbers"
        want = np.asarray(expected, dtype=np.float64)
        if got.shape != want.shape:
            return f"has the wrong shape (expected {want.shape})"
        if np.isnan(got).any():
            return "has NaN values"
        finite = np.isfinite(want)
        if (np.isinf(got) & finite).any():
            return "has infinite values where finite ones are expected"
        if (got[~finite] != want[~finite]).any():
            return "has finite values where infinite ones are expected"
        error = np.where(finite, np.abs(got - np.where(finite, want, 0.0)), 0.0)
        bad = error > atol + rtol * np.abs(np.where(finite, want, 0.0))
        if not bad.any():
            return ""
        if want.ndim == 0:
            return f"differs by {_number(error)}"
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
        return "is an array, not a single value"
    if isinstance(expected, (bool, int, str)) or expected is None:
        if isinstance(expected, int) and not isinstance(expected, bool) and isinstance(answer, (int, float, np.ndarray)):
            if not isinstance(answer, bool) and np.ndim(answer) == 0:
                try:
                    if float(answer) == expected:
                        return ""
                except OverflowError:  # a forged number of hundreds of digits
                    return "is not the expected value"
        same = type(answer) is type(expected) and answer == expected
        return "" if same else "is not the expected value"
    return "cannot be compared"


def plausible(answer, shape: tuple, candidates: Iterable, *, rtol: float = 1e-6,
              atol: float = 1e-9) -> np.ndarray | None:
    """``answer`` as a float64 array if it is a sane earlier answer to build on, else None.

    Sane: real numbers of ``shape``, all finite, not all equal (when there is
    more than one), and within the tolerances of one of ``candidates``: the
    right answer first, then what known typical mistakes give.

    >>> right, halved = np.array([1.0, 0.1]), np.array([1.0, 0.01])
    >>> plausible([1.0, 0.01], (2,), [right, halved]) is not None
    True
    >>> plausible([0.0, 0.0], (2,), [right, halved]), plausible([np.nan] * 2, (2,), [right])
    (None, None)
    """
    array = numbers(answer)
    if array is None or array.shape != tuple(shape) or not np.isfinite(array).all():
        return None
    if array.size > 1 and (array == array.flat[0]).all():
        return None
    for candidate in candidates:
        if candidate is not None and not difference(array, np.asarray(candidate, dtype=np.float64),
                                                    rtol=rtol, atol=atol):
            return array
    return None


def close(probe: str, label: str, weight: float = 1.0, *, rtol: float = 1e-7,
          atol: float = 1e-9, accept: Callable[[dict], object] | None = None) -> Check:
    """The answer to ``probe`` equals the reference within the tolerances.

    ``accept``, if given, computes from the student's answers a second value
    that also counts as right (built on their own earlier answers, so that
    one mistake costs marks once); it returns ``None`` when those earlier
    answers are not :func:`plausible`.
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
            return f"{_kind(answer)}, expected a {wanted} NumPy array"
        return "" if answer.dtype == wanted else f"has dtype {answer.dtype}, expected {wanted}"
    return Check(label, weight, judge)


def shape(probe: str, label: str, wanted: tuple, weight: float = 0.5) -> Check:
    """The answer to ``probe`` has shape ``wanted``."""
    def judge(answers, references):
        answer = answers.get(probe, "__missing__")
        problem = missing(answer) if not isinstance(answer, np.ndarray) else ""
        if problem:
            return problem
        got = numbers(answer)
        return "" if got is not None and got.shape == tuple(wanted) else \
            f"does not have the shape {tuple(wanted)}"
    return Check(label, weight, judge)


def rule(label: str, weight: float, judge: Judge) -> Check:
    """A check with a judge of its own; an exception in it fails the check."""
    def safe(answers, references):
        try:
            return judge(answers, references)
        except Exception as error:
            return f"cannot be checked ({type(error).__name__})"
    return Check(label, weight, safe)
