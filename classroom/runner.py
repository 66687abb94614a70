"""What runs inside the sandbox: a student's cells, then the probes.

This file is copied into the sandbox's scratch folder and run there with the
course's Python, as ``python runner.py JOB ANSWERS``. It imports nothing from
the course. ``JOB`` is a JSON file written by the grader:

- ``cells``: the student's code cells, as ``[number, source]`` pairs;
- ``probes``: ``[id, code]`` pairs, each an expression (or statements that
  set ``answer``) evaluated in the student's namespace after the cells ran;
- ``cell_seconds``: how long one cell or probe may run.

It writes ``ANSWERS``, a JSON object with the errors of the cells and, per
probe, either the value (plain JSON; NumPy arrays as
``{"__ndarray__": [dtype, shape, flat values]}``) or the error raised. It
writes answers only, never scores: the grader decides those in its own
process, and treats everything in this file as untrusted.
"""

import json
import signal
import sys

#: Longest text kept from an error message or a string answer.
TEXT_LIMIT = 200
#: Most numbers kept in one answer.
SIZE_LIMIT = 200_000


class OutOfTime(BaseException):
    """Raised in a cell or probe that ran past its time."""


def _alarm(signum, frame):
    raise OutOfTime()


def _text(value):
    return str(value)[:TEXT_LIMIT]


def _error(error):
    if isinstance(error, OutOfTime):
        return {"__error__": ["OutOfTime", "ran past its time and was stopped"]}
    return {"__error__": [type(error).__name__[:60], _text(error)]}


def encode(value, depth=0):
    """A JSON-safe copy of ``value``: numbers, text, lists, dicts and arrays."""
    if depth > 6:
        raise TypeError("nested too deeply")
    if value is None or isinstance(value, (bool, int, float)):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**63:
            raise TypeError("integer too large")
        return value
    if isinstance(value, str):
        return value[:TEXT_LIMIT]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.generic):
            value = numpy.asarray(value)
        if isinstance(value, numpy.ndarray):
            if value.dtype.kind not in "biuf":
                raise TypeError(f"an array of {value.dtype} is not a numeric answer")
            if value.size > SIZE_LIMIT:
                raise TypeError(f"an array of {value.size} numbers is too large")
            return {"__ndarray__": [str(value.dtype), list(value.shape),
                                    value.ravel().tolist()]}
    if isinstance(value, (list, tuple)):
        if len(value) > SIZE_LIMIT:
            raise TypeError("a list too long")
        tag = "__tuple__" if isinstance(value, tuple) else "__list__"
        return {tag: [encode(item, depth + 1) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"__dict__": {key[:TEXT_LIMIT]: encode(item, depth + 1)
                             for key, item in list(value.items())[:1000]}}
    if value is Ellipsis:
        raise TypeError("still ... (not answered)")
    raise TypeError(f"an answer of type {type(value).__name__} is not data")


class _Quiet:
    """Stands in for otter's ``grader`` and IPython's ``get_ipython()``."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def main(job_path, answers_path):
    with open(job_path) as handle:
        job = json.load(handle)
    seconds = float(job["cell_seconds"])
    signal.signal(signal.SIGALRM, _alarm)
    quiet = _Quiet()
    namespace = {"__name__": "__main__", "grader": quiet,
                 "get_ipython": lambda: quiet}
    cell_errors = []
    for number, source in job["cells"]:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            exec(compile(source, f"<cell {number}>", "exec"), namespace)
        except BaseException as error:  # the student's error is data
            cell_errors.append([number, *_error(error)["__error__"]])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    answers = {}
    for key, code in job["probes"]:
        scope = dict(namespace)
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            if "\n" in code or "answer =" in code:
                exec(compile(code, "<grader>", "exec"), scope)
                value = scope["answer"]
            else:
                value = eval(compile(code, "<grader>", "eval"), scope)
            signal.setitimer(signal.ITIMER_REAL, 0)
            answers[key] = encode(value)
        except BaseException as error:
            signal.setitimer(signal.ITIMER_REAL, 0)
            answers[key] = _error(error)
    text = json.dumps({"cell_errors": cell_errors, "answers": answers})
    with open(answers_path, "w") as handle:
        handle.write(text)
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
