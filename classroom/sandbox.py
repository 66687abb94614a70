"""The bubblewrap command line that confines one submission, and its fixed limits.

The sandbox sees, read-only, the system's ``/usr``, the Python installation,
the course's virtual environment, the runner (``/opt/grader/runner.py``) and
(when the assignment allows it) the ``pe_lib`` package folder alone, at
``/opt/course/pe_lib``. The runner and the library are copies (:func:`staged`),
not the checkout's own folders, and bubblewrap reads its options from a pipe,
so neither the mount table (``/proc/self/mountinfo``) nor the command line of
the sandbox's first process names the checkout's folder. Everything else is a
fresh, read-only root. It can
write only to three memory-backed folders of fixed size, :data:`FOLDERS`
(``/scratch``, its working folder, ``/tmp`` and ``/dev/shm``); it has no
network, no capabilities, its own process, user, IPC, mount and host-name
namespaces (its host name is :data:`HOSTNAME`), cannot create further user
namespaces, and dies with the grader. Its ``/proc/loadavg`` and
``/proc/meminfo`` are its own (:func:`proc_files`): no load, and the memory
of its budget, not the host's. A seccomp
filter (:mod:`classroom.seccomp`) refuses the calls that hold memory outside
those folders. The limits of one process are set by :func:`limits` and by the
runner; :mod:`classroom.execute` watches the whole. What stays in view: where
Python and the course's environment are installed (the mount table lists them,
and their own files, compiled modules and scripts, name those folders).

>>> command = bwrap_command(["python3", "-c", "pass"])
>>> command[0].endswith("bwrap"), "--unshare-all" in command, "--disable-userns" in command
(True, True, True)
>>> command[command.index("/scratch") - 3 : command.index("/scratch") + 1]
['--size', '134217728', '--tmpfs', '/scratch']
>>> options, argv = bwrap_options(["python3", "-c", "pass"])
>>> argv[1:]
['--', 'python3', '-c', 'pass']
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: Where the scratch folder appears inside the sandbox.
SCRATCH = "/scratch"
#: Where the library's package folder appears inside the sandbox.
COURSE = "/opt/course"
#: Where the runner appears inside the sandbox.
RUNNER_INSIDE = "/opt/grader/runner.py"
#: The library's package folder on this machine.
LIBRARY = Path(__file__).resolve().parents[1] / "pe_lib"
#: The runner on this machine.
RUNNER = Path(__file__).resolve().with_name("runner.py")
#: The course's Python, with links resolved (the sandbox binds the real folders).
PYTHON = os.path.realpath(sys.executable)
#: The writable folders, each a memory-backed file system of this many bytes.
FOLDERS = {SCRATCH: 128 << 20, "/tmp": 128 << 20, "/dev/shm": 32 << 20}
#: Largest single file (also the cap on what one process writes into one file).
FILE_BYTES = 128 << 20
#: Most files and folders in the writable folders together (each costs kernel memory).
FILE_COUNT = 20_000
#: Most processes and threads in one sandbox (set by the runner, inside its namespace).
TASKS = 256
#: Most open files of one process (set by the runner).
OPEN_FILES = 512
#: The oldest bubblewrap with ``--size`` and ``--disable-userns``.
BWRAP_NEEDED = (0, 8, 0)
#: The environment inside the sandbox: nothing else of the teacher's.
ENVIRONMENT = {
    "HOME": SCRATCH,
    "TMPDIR": "/tmp",
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "KERAS_BACKEND": "tensorflow",
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_ENABLE_ONEDNN_OPTS": "0",
    "CUDA_VISIBLE_DEVICES": "",
    "MPLBACKEND": "Agg",
    "OMP_NUM_THREADS": "1",
    "TF_NUM_INTEROP_THREADS": "2",
    "TF_NUM_INTRAOP_THREADS": "2",
}
#: The sandbox's host name, in place of the teacher's machine's.
HOSTNAME = "sandbox"
#: System files some libraries read; bound read-only where they exist.
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create namespaces on this machine."""


def bwrap_path() -> str | None:
    """The ``bwrap`` program, or ``None``."""
    return shutil.which("bwrap")


def folder_bytes() -> int:
    """What the writable folders can hold together, in bytes."""
    return sum(FOLDERS.values())


def _python_roots() -> list[Path]:
    """The folders Python needs: its installation and the virtual environment."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    return sorted(roots)


def proc_files(memory_bytes: int) -> dict[str, bytes]:
    """What the sandbox reads in place of the host's load and memory in ``/proc``.

    >>> print(proc_files(1 << 30)["/proc/meminfo"].decode().splitlines()[0])
    MemTotal:        1048576 kB
    """
    kib = memory_bytes >> 10
    meminfo = "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in (
        ("MemTotal", kib), ("MemFree", kib), ("MemAvailable", kib), ("Buffers", 0), ("Cached", 0),
        ("SwapTotal", 0), ("SwapFree", 0)))
    return {"/proc/loadavg": b"0.00 0.00 0.00 1/1 1\n", "/proc/meminfo": meminfo.encode()}


#: The start of the name of :func:`staged`'s folder; the grader's process id follows.
STAGE_PREFIX = "pe-course-sandbox-"
_STAGE_LOCK = threading.Lock()
_STAGE: list[Path] = []


def _sweep() -> None:
    """Remove the staged folders of this account's graders that are no longer running."""
    for folder in Path(tempfile.gettempdir()).glob(f"{STAGE_PREFIX}*-*"):
        try:
            pid = int(folder.name[len(STAGE_PREFIX):].split("-")[0])
            if folder.is_symlink() or folder.lstat().st_uid != os.getuid() or pid == os.getpid():
                continue
            os.kill(pid, 0)
        except ProcessLookupError:  # its grader is gone (killed before it could clean up)
            shutil.rmtree(folder, ignore_errors=True)
        except (ValueError, OSError):  # not one of ours, or its grader runs under another account
            continue


def staged() -> Path:
    """A folder holding copies of the runner and the library, made once per process.

    A bind mount names its source in the sandbox's mount table: binding the
    checkout's own ``pe_lib`` would show the checkout's path (and its compiled
    files, which name it too). The copy, without compiled files, lives in a
    fresh temporary folder that is removed when the grader exits; one left
    by a grader that was killed is removed by the next (:func:`_sweep`).

    >>> sorted(path.name for path in staged().iterdir())
    ['pe_lib', 'runner.py']
    """
    with _STAGE_LOCK:
        if not _STAGE or not (_STAGE[0] / "runner.py").is_file():
            _sweep()
            folder = None
            try:
                folder = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-"))
                atexit.register(shutil.rmtree, folder, ignore_errors=True)
                shutil.copytree(LIBRARY, folder / "pe_lib", ignore=_COMPILED)
                shutil.copyfile(RUNNER, folder / "runner.py")
            except OSError as error:
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)
                raise SandboxUnavailable(_no_room(error)) from None
            _STAGE[:] = [folder]
        return _STAGE[0]


_COMPILED = shutil.ignore_patterns("__pycache__", "*.pyc")


def stage_bytes() -> int:
    """What :func:`staged` copies, in bytes: the library without compiled files, and the runner."""
    total = RUNNER.stat().st_size
    for folder, names, files in os.walk(LIBRARY):
        names[:] = [name for name in names if name != "__pycache__"]
        total += sum(os.path.getsize(os.path.join(folder, name)) for name in files if not name.endswith(".pyc"))
    return total


def _no_room(error: OSError) -> str:
    """What went wrong copying the library into the temporary folder, and how to fix it, in one line."""
    where = tempfile.gettempdir()
    if isinstance(error, shutil.Error) and error.args and isinstance(error.args[0], list) and error.args[0]:
        why = str(error.args[0][0][-1])  # copytree's list of (source, target, why): the first says enough
    else:
        why = error.strerror or str(error)
    try:
        free = f"{shutil.disk_usage(where).free >> 10} KiB free"
    except OSError:
        free = "free space unknown"
    return (f"the sandbox's copy of the course library could not be made in the temporary folder "
            f"{where} ({why}; {free}, {stage_bytes() >> 10} KiB needed): free space there, "
            f"or set TMPDIR to a folder with room (TMPDIR=/var/tmp python3 tasks.py grade ...)")


def bwrap_command(argv: list[str], *, library: bool = True, seccomp_fd: int | None = None,
                  info_fd: int | None = None, data_fds: dict[str, int] | None = None) -> list[str]:
    """The full command that runs ``argv`` confined, in ``/scratch``.

    ``seccomp_fd`` is a descriptor to read the seccomp program from;
    ``info_fd`` one on which bubblewrap reports the sandbox's first process;
    ``data_fds`` maps files inside (those of :func:`proc_files`) to
    descriptors their contents are read from.
    """
    options, command = bwrap_options(argv, library=library, seccomp_fd=seccomp_fd, info_fd=info_fd,
                                     data_fds=data_fds)
    return command[:1] + options + command[1:]


def bwrap_options(argv: list[str], *, library: bool = True, seccomp_fd: int | None = None,
                  info_fd: int | None = None, data_fds: dict[str, int] | None = None
                  ) -> tuple[list[str], list[str]]:
    """The options of :func:`bwrap_command`, and the rest of its command line.

    The options can be handed to bubblewrap on a descriptor (``--args FD``
    in place of them), so that the sandbox's first process, a copy of
    bubblewrap whose command line the sandbox can read, does not show them.
    """
    command = ["--unshare-all", "--unshare-user", "--disable-userns",
               "--hostname", HOSTNAME,
               "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL",
               "--die-with-parent", "--new-session", "--clearenv",
               "--ro-bind", "/usr", "/usr",
               # First the private /tmp, so that Python or the course's environment
               # living under /tmp (a fresh clone there, say) is bound on top of it.
               "--size", str(FOLDERS["/tmp"]), "--tmpfs", "/tmp"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/") / name
        if top.is_symlink():
            command += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            command += ["--ro-bind", str(top), str(top)]
    for path in ETC_FILES:
        if Path(path).exists():
            command += ["--ro-bind", path, path]
    for root in _python_roots():
        command += ["--ro-bind", str(root), str(root)]
    pythonpath = []
    stage = staged()
    if library:
        command += ["--ro-bind", str(stage / "pe_lib"), f"{COURSE}/pe_lib"]
        pythonpath.append(COURSE)
    command += ["--ro-bind", str(stage / "runner.py"), RUNNER_INSIDE,
                "--proc", "/proc", "--dev", "/dev"]
    for path, fd in (data_fds or {}).items():
        command += ["--ro-bind-data", str(fd), path]
    command += ["--size", str(FOLDERS["/dev/shm"]), "--tmpfs", "/dev/shm",
                "--size", str(FOLDERS[SCRATCH]), "--tmpfs", SCRATCH,
                # Nothing else is writable: not /dev, not the sandbox's own root.
                "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SCRATCH]
    if seccomp_fd is not None:
        command += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        command += ["--info-fd", str(info_fd)]
    environment = dict(ENVIRONMENT, PYTHONPATH=":".join(pythonpath))
    for key, value in environment.items():
        command += ["--setenv", key, value]
    return command, [bwrap_path() or "bwrap", "--", *argv]


def limits(address_bytes: int | None):
    """A ``preexec_fn`` that caps one process's address space, file size and core dumps.

    The process count is capped by the runner inside the sandbox, where the
    count is the sandbox's own (set here, it would count every process of
    the teacher's account, and refuse bubblewrap itself on a busy desktop).
    """
    def apply():
        if address_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (address_bytes, address_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def bwrap_version() -> tuple[int, ...] | None:
    """bubblewrap's version, e.g. ``(0, 8, 0)``, or ``None`` when it cannot be read."""
    try:
        text = subprocess.run([bwrap_path() or "bwrap", "--version"], capture_output=True,
                              text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(part) for part in found.groups()) if found else None


@functools.lru_cache(maxsize=1)
def check() -> str:
    """Why the sandbox cannot run here, or ``""`` when a trivial command runs in it."""
    if bwrap_path() is None:
        return ("bubblewrap (bwrap) is not installed: install it (Debian/Ubuntu: "
                "`sudo apt-get install bubblewrap`; `python3 tasks.py grade` does it "
                "when run as root)")
    version = bwrap_version()
    if version is None or version < BWRAP_NEEDED:
        found = ".".join(map(str, version)) if version else "of unknown version"
        return (f"bubblewrap {found} cannot cap the size of the sandbox's folders; "
                f"version {'.'.join(map(str, BWRAP_NEEDED))} or later is needed "
                "(Debian 12, Ubuntu 24.04 and later ship one)")
    try:
        staged()
    except SandboxUnavailable as error:
        return str(error)
    message = ""
    for _ in range(2):  # a second try, in case the machine was too busy the first time
        try:
            done = subprocess.run(bwrap_command([PYTHON, "-c", "pass"], library=False),
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            message = f"bubblewrap could not start: {error}"
            continue
        if not done.returncode:
            return ""
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        message = ("bubblewrap cannot create its namespaces on this machine "
                   f"({last}); enable unprivileged user namespaces "
                   "(sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 "
                   "kernel.apparmor_restrict_unprivileged_userns=0) or grade as root")
    return message
