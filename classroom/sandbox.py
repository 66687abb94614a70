"""The bubblewrap command line that confines one submission.

The sandbox sees, read-only, the system's ``/usr``, the Python installation,
the course's virtual environment and (when the assignment allows it) the
``pe_lib`` package folder alone, bound at ``/opt/course/pe_lib``. It writes
only to its scratch folder (bound at ``/scratch``) and a private ``/tmp``,
has no network, no capabilities, its own process and user namespaces, dies
with the grader, and runs under a memory cap (``RLIMIT_AS``) and, from the
grader's side, a time limit that kills the whole process tree.

>>> command = bwrap_command(Path("/tmp/s"), ["python3", "-c", "pass"])
>>> command[0].endswith("bwrap"), "--unshare-all" in command
(True, True)
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

#: Where the scratch folder appears inside the sandbox.
SCRATCH = "/scratch"
#: Where the library's package folder appears inside the sandbox.
COURSE = "/opt/course"
#: The library's package folder on this machine.
LIBRARY = Path(__file__).resolve().parents[1] / "pe_lib"
#: The course's Python, with links resolved (the sandbox binds the real folders).
PYTHON = os.path.realpath(sys.executable)
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
}
#: System files some libraries read; bound read-only where they exist.
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create namespaces on this machine."""


def bwrap_path() -> str | None:
    """The ``bwrap`` program, or ``None``."""
    return shutil.which("bwrap")


def _python_roots() -> list[Path]:
    """The folders Python needs: its installation and the virtual environment."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    return sorted(roots)


def bwrap_command(scratch: Path, argv: list[str], *, library: bool = True) -> list[str]:
    """The full command that runs ``argv`` confined, with ``scratch`` as /scratch."""
    command = [bwrap_path() or "bwrap", "--unshare-all", "--unshare-user",
               "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL",
               "--die-with-parent", "--new-session", "--clearenv",
               "--ro-bind", "/usr", "/usr",
               # First the private /tmp, so that Python or the course's environment
               # living under /tmp (a fresh clone there, say) is bound on top of it.
               "--tmpfs", "/tmp"]
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
    if library:
        command += ["--ro-bind", str(LIBRARY), f"{COURSE}/pe_lib"]
        pythonpath.append(COURSE)
    command += ["--proc", "/proc", "--dev", "/dev",
                "--bind", str(scratch), SCRATCH, "--chdir", SCRATCH]
    environment = dict(ENVIRONMENT, PYTHONPATH=":".join(pythonpath))
    for key, value in environment.items():
        command += ["--setenv", key, value]
    return command + ["--", *argv]


def limits(memory_bytes: int | None):
    """A ``preexec_fn`` that caps the address space (and processes, where it can)."""
    def apply():
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))  # root is exempt
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


@functools.lru_cache(maxsize=1)
def check() -> str:
    """Why the sandbox cannot run here, or ``""`` when a trivial command runs in it."""
    if bwrap_path() is None:
        return ("bubblewrap (bwrap) is not installed: install it (Debian/Ubuntu: "
                "`sudo apt-get install bubblewrap`; `python3 tasks.py grade` does it "
                "when run as root)")
    scratch = Path(os.environ.get("TMPDIR", "/tmp"))
    try:
        done = subprocess.run(bwrap_command(scratch, [PYTHON, "-c", "pass"], library=False),
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not start: {error}"
    if done.returncode:
        message = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return ("bubblewrap cannot create its namespaces on this machine "
                f"({message}); enable unprivileged user namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1) or grade as root")
    return ""
