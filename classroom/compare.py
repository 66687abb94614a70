"""Score answers against the references, in the grader's own process.

Each question's score is its points times the weight of the checks that
passed over the weight of all its checks, never more than its points. Every
failed check is named with its reason, and a question that scores zero
always says why.

>>> from classroom.expect import close
>>> import numpy as np
>>> result = score_question(2.0, [close("r", "angle_rates(4)")],
...                         {"r": np.array([1.0, 0.1])}, {"r": np.array([1.0, 0.01])})
>>> result.score, result.failures
(0.0, ['angle_rates(4): entry 1 differs by up to 0.09'])
"""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class QuestionResult:
    """The score of one question and the reasons for every point lost."""

    score: float
    failures: list[str]


def score_question(points: float, checks: list, answers: dict, references: dict) -> QuestionResult:
    """Judge one question's checks; the score is capped at ``points``."""
    total = sum(check.weight for check in checks)
    passed, failures = 0.0, []
    for check in checks:
        try:
            reason = check.judge(answers, references)
        except Exception as error:  # a forged answer (a 400-digit number) costs this check only
            reason = f"cannot be checked ({type(error).__name__})"
        if reason:
            failures.append(f"{check.label}: {reason}")
        else:
            passed += check.weight
    score = points * passed / total if total > 0 else 0.0
    score = min(points, max(0.0, score)) if math.isfinite(score) else 0.0
    return QuestionResult(round(score, 4), failures)


def score_all(questions: dict, points: dict, answers: dict, references: dict) -> dict[str, QuestionResult]:
    """:func:`score_question` for every question of an assignment, in order."""
    return {name: score_question(points[name], questions.get(name, []), answers, references)
            for name in points}
