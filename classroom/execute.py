"""Run a student's cells and the probes in the sandbox; bring back the answers only.

The grader and the runner (:mod:`classroom.runner`) talk over two pipes, so
nothing of the job is ever a file the sandbox could read: first the cells go
in and their report comes out, and only then the probes go in and the
answers come out, one line each. Every read has a deadline and a size limit.

While the sandbox runs, a watch (:class:`Watch`) measures, ten times a
second, the memory of all its processes together with the files in its
writable folders, and the number of those files, and stops the sandbox when
either passes its budget. Each process also has a hard cap on its address
space (:func:`classroom.sandbox.limits`), each folder a hard size, and the
sandbox a hard number of processes. When time is up, the grader kills the
sandbox's whole process tree; its processes cannot outlive it (bubblewrap's
process namespace dies with it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from classroom import answers as decoding
from classroom import sandbox, seccomp

#: A submission's memory budget (its processes and its files), unless the spec sets MEMORY_GIB.
MEMORY_BYTES = 4 << 30
#: Seconds between two measurements of a running sandbox.
WATCH_SECONDS = 0.1
#: Longest report of the cells' errors, in bytes.
REPORT_LIMIT = 1 << 20
#: What :attr:`Outcome.fault` says: the result may be the machine's doing, not the code's.
TIMED_OUT = ("a time limit was reached: on a busy machine honest code can take that long, "
             "so the next run grades it again (grade with --jobs 1 on a quiet machine to be fair)")
KILLED = ("the run was killed from outside the sandbox, not by the grader's limits: "
          "the next run grades it again")
NOT_STARTED = ("the sandbox could not start: the grader's fault, not the notebook's; "
               "the next run grades it again")


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What came back from one run: answers, cell errors, or why there are none.

    ``raw`` holds the answers as the runner encoded them (references are stored so).
    """

    answers: dict
    cell_errors: list
    problem: str = ""
    raw: dict | None = None
    #: Why the result may be the machine's doing rather than the code's (a time-out, a run
    #: killed from outside the sandbox, a sandbox that did not start), or ``""``.
    fault: str = ""


def _gib(value: int) -> str:
    return f"{value / (1 << 30):.3g} GiB" if value >= 1 << 30 else f"{value >> 20} MiB"


class Watch(threading.Thread):
    """Measures one sandbox from outside and stops it when it passes its budget.

    Memory is the resident anonymous and shared memory of every process in
    the sandbox's process namespace, read from the sandbox's own ``/proc``,
    plus what its writable folders hold; files are those folders' inodes;
    tasks are its processes and threads (a hard limit too, set by the
    runner, except when grading as root, which the kernel exempts).
    """

    def __init__(self, process: subprocess.Popen, info_fd: int, memory_bytes: int):
        super().__init__(daemon=True)
        self.process, self.info_fd, self.memory_bytes = process, info_fd, memory_bytes
        self.reason = ""
        self.peak = 0
        self.done = threading.Event()
        #: Set once bubblewrap has said whether the sandbox started (``started``).
        self.reported = threading.Event()
        self.started = False

    def _first_process(self) -> int | None:
        """The sandbox's first process, as bubblewrap reports it on its info pipe.

        The pipe is read to its end: bubblewrap writes its report in several
        pieces, and dies of SIGPIPE if the reader has gone.
        """
        data = b""
        while not self.done.is_set() and len(data) < 65536:
            ready, _, _ = select.select([self.info_fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(self.info_fd, 4096)
            if not chunk:
                break
            data += chunk
            if data.rstrip().endswith(b"}"):
                break
        found = re.search(rb'"child-pid"\s*:\s*(\d+)', data)
        return int(found.group(1)) if found else None

    @staticmethod
    def measure(root: str) -> tuple[int, int, int]:
        """Bytes of memory, files, and processes and threads of the sandbox whose root is ``root``.

        ``(0, 0, 0)`` until the sandbox's own folders are in place at ``root``.
        """
        used = files = tasks = 0
        for folder, size in sandbox.FOLDERS.items():
            try:
                info = os.statvfs(root + folder)
            except OSError:
                return 0, 0, 0
            if info.f_blocks * info.f_frsize != size:
                return 0, 0, 0  # not the sandbox's folders (yet): bubblewrap is still setting up
            used += (info.f_blocks - info.f_bfree) * info.f_frsize
            files += info.f_files - info.f_ffree
        try:
            names = os.listdir(root + "/proc")
        except OSError:
            return used, files, tasks
        for name in names:
            if not name.isdigit():
                continue
            try:
                with open(f"{root}/proc/{name}/status", "rb") as handle:
                    status = handle.read()
            except OSError:
                continue
            for field in (rb"RssAnon:\s+(\d+)", rb"RssShmem:\s+(\d+)"):
                found = re.search(field, status)
                if found:
                    used += int(found.group(1)) << 10
            found = re.search(rb"Threads:\s+(\d+)", status)
            tasks += int(found.group(1)) if found else 1
        return used, files, tasks

    def run(self) -> None:
        try:
            first = self._first_process()
        finally:
            self.reported.set()
        self.started = first is not None
        if first is None:
            return
        root = f"/proc/{first}/root"
        while not self.done.wait(WATCH_SECONDS):
            used, files, tasks = self.measure(root)
            self.peak = max(self.peak, used)
            if used > self.memory_bytes:
                self.reason = (f"used more than {_gib(self.memory_bytes)} of memory "
                               "(its processes and files together) and was stopped")
            elif files > sandbox.FILE_COUNT:
                self.reason = f"created more than {sandbox.FILE_COUNT} files and was stopped"
            elif tasks > sandbox.TASKS + 1:  # bubblewrap's own first process is one
                self.reason = (f"started more than {sandbox.TASKS} processes and threads "
                               "and was stopped")
            if self.reason:
                _kill(self.process)
                return

    def stop(self) -> None:
        self.done.set()
        self.join(timeout=5)
        os.close(self.info_fd)


class _Pipe:
    """Lines from a pipe, each read with a deadline and a size limit."""

    def __init__(self, fd: int):
        self.fd, self.buffer, self.closed, self.skipping = fd, bytearray(), False, False
        os.set_blocking(fd, False)

    def line(self, limit: int, deadline: float) -> tuple[bytes | None, str]:
        """``(line, "")``, or ``(start of the line, "long")``, or ``(None, "end" | "time")``."""
        while True:
            end = self.buffer.find(b"\n")
            if self.skipping and end >= 0:
                del self.buffer[: end + 1]
                self.skipping = False
                continue
            if self.skipping:
                self.buffer.clear()
            elif end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                if len(line) > limit:
                    return line[:200], "long"
                return line, ""
            elif len(self.buffer) > limit:
                start = bytes(self.buffer[:200])
                self.buffer.clear()
                self.skipping = True
                return start, "long"
            if self.closed:
                return None, "end"
            left = deadline - time.monotonic()
            if left <= 0:
                return None, "time"
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.fd, 1 << 20)
                except BlockingIOError:
                    continue
                if chunk:
                    self.buffer += chunk
                else:
                    self.closed = True


def _send(fd: int, item, deadline: float) -> bool:
    """Write one line of JSON to ``fd`` before ``deadline``; False if it could not be."""
    data = memoryview((json.dumps(item) + "\n").encode())
    os.set_blocking(fd, False)
    while data:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        _, ready, _ = select.select([], [fd], [], min(left, 1.0))
        if ready:
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:
                continue
            except OSError:  # the runner is gone
                return False
    return True


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _ended(process: subprocess.Popen, confined: bool = False) -> tuple[str, bool]:
    """How the process ended, in words, and whether a signal killed it (it is killed first if still running).

    bubblewrap reports a sandboxed process killed by signal N as exit status 128 + N.
    """
    _kill(process)
    code = process.returncode
    if code is None:
        return "it was stopped", False
    if code < 0:
        return f"it was killed ({_signal_name(-code)})", True
    if confined and 128 < code < 128 + 65:
        return f"it was killed ({_signal_name(code - 128)})", True
    return f"exit status {code}", False


def _key(start: bytes) -> str | None:
    found = re.match(rb'\["([A-Za-z0-9_.\-]{1,100})",', start)
    return found.group(1).decode() if found else None


def _converse(process, job_fd, report, cells, probes, cell_seconds, deadline, timeout, watch):
    """The exchange with the runner: cells, their report, probes, answers."""
    fault = []

    def stopped(what: str) -> str:
        if watch is not None and watch.reason:
            return watch.reason
        if time.monotonic() >= deadline:
            fault.append(TIMED_OUT)
            return f"timed out: still running after {timeout:g} s, stopped"
        how, killed = _ended(process, confined=watch is not None)
        if watch is not None:
            watch.reported.wait(5)
            if not watch.started:
                fault.append(NOT_STARTED)
                return f"not graded: the sandbox did not start ({how})"
        if killed:
            fault.append(KILLED)
        return f"no answers came back: the run ended ({how}) {what}"

    def outcome(answers, errors, problem, raw=None):
        if any(kind == "OutOfTime" for _, kind, _ in errors) or any(
                isinstance(value, decoding.Raised) and value.kind == "OutOfTime" for value in answers.values()):
            fault.append(TIMED_OUT)
        return Outcome(answers, errors, problem, raw, fault[0] if fault else "")

    job = {"cells": cells, "cell_seconds": cell_seconds,
           "limits": {"tasks": sandbox.TASKS, "open_files": sandbox.OPEN_FILES}}
    if not _send(job_fd, job, deadline):
        return outcome({}, [], stopped("before it took its cells"))
    line, status = report.line(REPORT_LIMIT, deadline)
    if status:
        return outcome({}, [], stopped("before its cells finished") if status != "long"
                       else "no answers came back: the cells' report is too long")
    try:
        errors = decoding.cell_errors(decoding.parse_line(line) if len(line) <= REPORT_LIMIT else None)
    except decoding.Malformed as error:
        return outcome({}, [], f"no answers came back: {error}")
    if not _send(job_fd, {"probes": list(probes.items())}, deadline):
        return outcome({}, errors, stopped("before it took the probes"))
    found, raw, total, items, problem = {}, {}, 0, 0, ""
    while True:
        line, status = report.line(decoding.LINE_LIMIT, deadline)
        if status in ("end", "time"):
            if len(found) < len(probes):
                problem = stopped(f"after {len(found)} of {len(probes)} answers")
            break
        total += len(line) if status == "" else decoding.LINE_LIMIT
        if total > decoding.TOTAL_LIMIT:
            problem = f"sent more than {decoding.TOTAL_LIMIT >> 20} MiB of answers; the rest was not read"
            break
        if status == "long":
            key = _key(line)
            if key in probes and key not in found:
                found[key] = decoding.Unreadable(f"is larger than {decoding.LINE_LIMIT >> 20} MiB")
            continue
        count = decoding.items(line)
        items += count
        try:
            if items > decoding.TOTAL_ITEMS:
                raise decoding.Malformed(f"arrived after {decoding.TOTAL_ITEMS} items in all")
            value = decoding.parse_line(line)
        except decoding.Malformed as error:
            key = _key(line)
            if key in probes and key not in found:
                found[key] = decoding.Unreadable(str(error))
            continue
        if isinstance(value, dict) and set(value) == {"end"}:
            break
        if not (isinstance(value, list) and len(value) == 2 and value[0] in probes):
            continue
        key, encoded = value
        if key in found:
            continue
        try:
            found[key] = decoding.decode(encoded)
            raw[key] = encoded
        except decoding.Malformed as error:
            found[key] = decoding.Unreadable(str(error))
    if watch is not None and watch.reason:
        problem = watch.reason
    return outcome(found, errors, problem, raw)


def run(cells: list, probes: dict, *, library: bool, timeout: float, cell_seconds: float,
        confined: bool = True, memory_bytes: int = MEMORY_BYTES,
        address_bytes: int | None = None) -> Outcome:
    """Execute ``cells`` then ``probes`` in a fresh sandbox and read the answers.

    ``memory_bytes`` is the budget of all the sandbox's processes and files
    together; ``address_bytes`` caps each process's address space (default:
    the same number).
    """
    deadline = time.monotonic() + timeout
    job_in, job_out = os.pipe()
    report_in, report_out = os.pipe()
    given = [job_in, report_out]
    info_in = workdir = None
    argv = [sandbox.PYTHON, "-s"]
    if confined:
        info_in, info_out = os.pipe()
        given.append(info_out)
        program, seccomp_fd = seccomp.program(), None
        if program:
            seccomp_fd, seccomp_out = os.pipe()
            os.write(seccomp_out, program)  # a few hundred bytes: the pipe holds them
            os.close(seccomp_out)
            given.append(seccomp_fd)
        data_fds = {}
        for path, content in sandbox.proc_files(memory_bytes).items():
            data_in, data_out = os.pipe()
            os.write(data_out, content)  # a few hundred bytes: the pipe holds them
            os.close(data_out)
            given.append(data_in)
            data_fds[path] = data_in
        argv += [sandbox.RUNNER_INSIDE, str(job_in), str(report_out)]
        options, command = sandbox.bwrap_options(argv, library=library, seccomp_fd=seccomp_fd,
                                                 info_fd=info_out, data_fds=data_fds)
        # The options go on a pipe, not the command line: the sandbox can read
        # its first process's command line, and the options name host folders.
        args_in, args_out = os.pipe()
        # A few KiB (at most some ten paths of PATH_MAX bytes): an empty pipe holds 64 KiB.
        os.write(args_out, b"".join(option.encode() + b"\0" for option in options))
        os.close(args_out)
        given.append(args_in)
        command = command[:1] + ["--args", str(args_in)] + command[1:]
        env, cwd = {}, "/"
    else:
        workdir = tempfile.mkdtemp(prefix="sandbox-")
        command = argv + [str(sandbox.RUNNER), str(job_in), str(report_out)]
        env = dict(sandbox.ENVIRONMENT, HOME=workdir, TMPDIR=workdir,
                   PYTHONPATH=str(sandbox.LIBRARY.parent) if library else "")
        cwd = workdir
    process = watch = None
    try:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True, pass_fds=given,
                                   preexec_fn=sandbox.limits(address_bytes or memory_bytes))
    finally:
        for fd in given:
            os.close(fd)
        if process is None:
            for fd in (job_out, report_in, info_in):
                if fd is not None:
                    os.close(fd)
            if workdir:
                shutil.rmtree(workdir, ignore_errors=True)
    with _RUNNING_LOCK:
        _RUNNING.add(process)
    try:
        if confined:
            watch = Watch(process, info_in, memory_bytes)
            watch.start()
        return _converse(process, job_out, _Pipe(report_in), cells, probes, cell_seconds,
                         deadline, timeout, watch)
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(process)
        _kill(process)  # anything it left behind goes too
        if watch is not None:
            watch.stop()
        for fd in (job_out, report_in):
            try:
                os.close(fd)
            except OSError:
                pass
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)


#: The runs in progress, so that an interrupted grader can stop them at once.
_RUNNING: set = set()
_RUNNING_LOCK = threading.Lock()


def stop_all() -> None:
    """Kill every run in progress (grading was interrupted); each ends as a stopped run."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for process in running:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _kill(process: subprocess.Popen) -> None:
    """Kill the process group of ``process`` and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
