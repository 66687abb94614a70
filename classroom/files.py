"""Read a file from a folder the grader does not trust: regular files only, bounded, timed.

A submissions folder may hold anything a student (or a mistake) put there: a
FIFO that blocks whoever opens it, a link to a file elsewhere, a device, a
file far too large, or a file on a network share that hangs. :func:`read`
opens without following links and without blocking, refuses anything but a
regular file, reads at most ``limit`` bytes, and gives up after ``seconds``.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> os.mkfifo(os.path.join(folder, "pipe"))
>>> read(os.path.join(folder, "pipe"), limit=10, seconds=1)
Traceback (most recent call last):
...
classroom.files.NotReadable: is a FIFO, not a regular file
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path


class NotReadable(OSError):
    """The file is not a regular file, too large, or did not answer in time."""


def kind(mode: int) -> str:
    """What a file of ``mode`` is, in words.

    >>> kind(stat.S_IFIFO), kind(stat.S_IFLNK), kind(stat.S_IFREG)
    ('a FIFO', 'a symbolic link', 'a regular file')
    """
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device")):
        if test(mode):
            return name
    return "not a regular file"


def _read(path: Path, limit: int, result: dict) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if os.path.islink(path):
            result["error"] = "is a symbolic link, not a regular file"
        else:
            result["error"] = f"cannot be opened ({error.strerror})"
        return
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            result["error"] = f"is {kind(info.st_mode)}, not a regular file"
            return
        if info.st_size > limit:
            result["error"] = f"is larger than {limit >> 20} MiB"
            return
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            result["error"] = f"is larger than {limit >> 20} MiB"
            return
        result["data"] = b"".join(chunks)
    except OSError as error:
        result["error"] = f"cannot be read ({error.strerror})"
    finally:
        os.close(descriptor)


def read(path: Path, *, limit: int, seconds: float) -> bytes:
    """The bytes of the regular file at ``path``, or :class:`NotReadable` saying why not."""
    result: dict = {}
    # A daemon thread: a read stuck in the kernel (a hung network share) is left behind,
    # and never keeps the grader from finishing.
    reader = threading.Thread(target=_read, args=(Path(path), limit, result), daemon=True)
    reader.start()
    reader.join(seconds)
    if reader.is_alive():
        raise NotReadable(f"could not be read within {seconds:g} s")
    if "error" in result:
        raise NotReadable(result["error"])
    return result["data"]
