"""What runs inside the sandbox: a student's cells, then the probes.

This file is bound read-only into the sandbox and run there with the
course's Python, as ``python runner.py JOB_FD REPORT_FD``. It imports nothing
from the course. It talks with the grader over two pipes, one line of JSON at
a time, in this order:

1. it reads ``{"cells": [[number, source], ...], "cell_seconds": s, "limits": {...}}``
   from ``JOB_FD``, caps its processes and open files, and runs the cells;
2. it writes ``{"cell_errors": [[number, kind, message], ...]}`` to ``REPORT_FD``;
3. only then does the grader send ``{"probes": [[id, code], ...]}``: each an
   expression (or statements that set ``answer``) evaluated in the student's
   namespace. Nothing of the probes is ever written where the cells could read
   it, and the cells' report is sealed before the probes exist;
4. it writes one line ``[id, answer]`` per probe, as soon as it has the answer,
   then ``{"end": count}``.

An answer is plain JSON, a NumPy array as ``{"__ndarray__": [dtype, shape,
base64 of its little-endian bytes]}`` (any real dtype, byte order or width is
converted to a standard one: ``longdouble`` to ``float64``, ``>f8`` to
``float64``), or ``{"__error__": [kind]}`` when the probe raised (``["NotData", code]``
when the answer cannot be sent as data). The grader treats everything that comes from here as
untrusted: it decides the scores in its own process.
"""

import base64
import json
import numbers
import os
import resource
import signal
import sys

#: Longest text kept from an error message or a string answer.
TEXT_LIMIT = 200
#: Most numbers in one answer.
SIZE_LIMIT = 200_000
#: Most items (lists, tuples, dicts and what they hold) in one answer.
ITEM_LIMIT = 20_000
#: Most cell errors reported.
ERROR_LIMIT = 50
#: Longest line read from the grader.
LINE_LIMIT = 64 << 20


class OutOfTime(BaseException):
    """Raised in a cell or probe that ran past its time."""


class NotData(TypeError):
    """The answer cannot be sent as data; the message is a code the grader explains."""


def _alarm(signum, frame):
    # Raised again every second until the cell ends: code that catches the
    # first (IPython's run_cell catches everything) meets the next.
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    raise OutOfTime()


def _standard(array, numpy):
    """``array`` with a standard, native dtype of its kind, or NotData saying why not."""
    kind = array.dtype.kind
    if kind == "O":
        try:
            converted = numpy.array(array.tolist())
        except Exception:
            raise NotData("objects") from None
        if converted.dtype.kind == "O" or converted.shape != array.shape:
            raise NotData("objects")
        array, kind = converted, converted.dtype.kind
    if kind == "c":
        raise NotData("complex")
    if kind not in "biuf":
        raise NotData("dtype")
    if kind == "f" and array.dtype.itemsize > 8:
        wide = array
        with numpy.errstate(over="ignore"):
            array = array.astype(numpy.float64)
        if bool((numpy.isfinite(wide) & ~numpy.isfinite(array)).any()):
            raise NotData("range")
    return array.astype(array.dtype.newbyteorder("<"), copy=False)


def encode(value, budget=None, depth=0):
    """A JSON-safe copy of ``value``: numbers, text, lists, tuples, dicts and arrays."""
    budget = budget if budget is not None else {"items": ITEM_LIMIT, "numbers": SIZE_LIMIT}
    budget["items"] -= 1
    if depth > 6:
        raise NotData("nested")
    if budget["items"] < 0:
        raise NotData("items")
    if value is None or isinstance(value, (bool, str)):
        return value[:TEXT_LIMIT] if isinstance(value, str) else value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else encode(float(value), budget, depth)
    if isinstance(value, float):
        return value
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.generic) or (not isinstance(value, numpy.ndarray)
                                                and hasattr(value, "__array__")
                                                and not isinstance(value, (list, tuple, dict))):
            try:
                value = numpy.asarray(value)
            except Exception:
                raise NotData("type") from None
        if isinstance(value, numpy.ndarray):
            array = _standard(numpy.asarray(value), numpy)
            budget["numbers"] -= array.size
            if budget["numbers"] < 0:
                raise NotData("size")
            data = base64.b64encode(numpy.ascontiguousarray(array).tobytes()).decode("ascii")
            return {"__ndarray__": [array.dtype.name, list(array.shape), data]}
    if isinstance(value, numbers.Real):  # Fraction, Decimal and their kin
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            raise NotData("type") from None
    if isinstance(value, numbers.Complex):
        raise NotData("complex")
    if isinstance(value, (list, tuple)):
        tag = "__tuple__" if isinstance(value, tuple) else "__list__"
        return {tag: [encode(item, budget, depth + 1) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"__dict__": {key[:TEXT_LIMIT]: encode(item, budget, depth + 1)
                             for key, item in value.items()}}
    if value is Ellipsis:
        raise NotData("ellipsis")
    raise NotData("type")


def _error(kind):
    return {"__error__": [str(kind)[:60]]}


class _Quiet:
    """Stands in for otter's ``grader``: its checks are the grader's business, not the cells'."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class _Shell:
    """IPython's own shell, made on first use, running in the student's namespace.

    The grader turns a cell's magics into the calls IPython makes for them
    (``get_ipython().run_cell_magic("time", "", body)``); those calls reach a
    real ``InteractiveShell`` here, so ``%%time``, ``%%capture``, ``%timeit``
    or ``%matplotlib`` do what they do in Jupyter. IPython is imported only
    by a notebook that uses it (it costs a few tenths of a second).
    """

    def __init__(self, namespace):
        self.namespace, self.shell = namespace, None

    def __call__(self):
        if self.shell is None:
            from IPython.core.interactiveshell import InteractiveShell
            from traitlets.config import Config

            class Shell(InteractiveShell):
                def enable_gui(self, gui=None):
                    """No window opens here: ``%matplotlib`` draws off screen, as in a kernel."""

            config = Config()
            config.HistoryManager.enabled = False  # no history database in the scratch folder
            self.shell = Shell.instance(config=config, user_ns=self.namespace)
            self.namespace["get_ipython"] = self
        return self.shell


def _display(*objects, **options):
    """IPython's ``display``, which Jupyter puts in every namespace (imported when first called)."""
    from IPython.display import display

    return display(*objects, **options)


def _send(descriptor, item):
    data = (json.dumps(item) + "\n").encode()
    while data:
        data = data[os.write(descriptor, data):]


def _limit(which, wanted):
    soft, hard = resource.getrlimit(which)
    wanted = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(which, (wanted, wanted))


def main(job_fd, report_fd):
    job_in = os.fdopen(job_fd, "rb")
    job = json.loads(job_in.readline(LINE_LIMIT))
    limits = job.get("limits", {})
    if limits.get("tasks"):
        _limit(resource.RLIMIT_NPROC, int(limits["tasks"]))
    if limits.get("open_files"):
        _limit(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    seconds = float(job["cell_seconds"])
    signal.signal(signal.SIGALRM, _alarm)
    namespace = {"__name__": "__main__", "grader": _Quiet(), "display": _display}
    namespace["get_ipython"] = _Shell(namespace)
    cell_errors = []
    for number, source in job["cells"]:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            exec(compile(source, f"<cell {number}>", "exec"), namespace)
        except BaseException as error:  # the student's error is data
            signal.setitimer(signal.ITIMER_REAL, 0)
            if len(cell_errors) < ERROR_LIMIT:
                kind = "OutOfTime" if isinstance(error, OutOfTime) else type(error).__name__
                message = "ran past its time and was stopped" if isinstance(error, OutOfTime) else str(error)
                cell_errors.append([number, kind[:60], message[:TEXT_LIMIT]])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    del job
    _send(report_fd, {"cell_errors": cell_errors})
    probes = json.loads(job_in.readline(LINE_LIMIT))["probes"]
    job_in.close()
    for key, code in probes:
        scope = dict(namespace)
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            if "\n" in code or "answer =" in code:
                exec(compile(code, "<grader>", "exec"), scope)
                value = scope["answer"]
            else:
                value = eval(compile(code, "<grader>", "eval"), scope)
            signal.setitimer(signal.ITIMER_REAL, 0)
        except BaseException as error:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _send(report_fd, [key, _error("OutOfTime" if isinstance(error, OutOfTime) else type(error).__name__)])
            continue
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            line = [key, encode(value)]
            json.dumps(line)
        except NotData as error:
            line = [key, {"__error__": ["NotData", str(error)[:20]]}]
        except BaseException as error:
            line = [key, _error("OutOfTime" if isinstance(error, OutOfTime) else "NotData")]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        _send(report_fd, line)
    _send(report_fd, {"end": len(probes)})


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
