"""Work done once per test run, whichever pytest-xdist worker asks for it first.

A session-scoped fixture runs once per worker: with two workers, the book would be
built twice and every assignment built twice. :func:`once` keeps the result in a
folder that every worker of the run sees, and a file lock makes the others wait
for the first instead of doing the work again. A failure is kept too, so a worker
that asks later fails with the same message rather than trying again.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path


def run_folder(tmp_path_factory) -> Path:
    """The folder every worker of this run sees (a worker's own base folder's parent)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "once-per-run"
    folder.mkdir(exist_ok=True)
    return folder


@contextmanager
def exclusively(folder: Path):
    """Hold the lock of ``folder`` (a file in it) for the ``with`` block."""
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def once(folder: Path, name: str, make: Callable[[], object]):
    """``make()``'s result, computed by the first caller of this run; the others read it.

    The result is pickled into ``folder``; an exception is kept and raised again to
    each later caller, as :class:`AssertionError` with the first one's message.

    >>> import tempfile
    >>> calls = []
    >>> folder = Path(tempfile.mkdtemp())
    >>> once(folder, "answer", lambda: calls.append(1) or 42), once(folder, "answer", lambda: 0)
    (42, 42)
    >>> len(calls)
    1
    """
    kept = folder / f"{name}.pickle"
    with exclusively(folder):
        if not kept.exists():
            try:
                result = ("made", make())
            except Exception as error:  # kept for the workers that ask later
                result = ("failed", f"{type(error).__name__}: {error}")
                kept.write_bytes(pickle.dumps(result))
                raise
            kept.write_bytes(pickle.dumps(result))
        outcome, value = pickle.loads(kept.read_bytes())
    if outcome == "failed":
        raise AssertionError(f"{name} failed in another worker of this run: {value}")
    return value
