"""A seccomp filter that refuses the system calls a submission could hoard memory with.

Some kernel memory lies outside every limit the sandbox sets: a ``memfd``
or a System V shared-memory segment holds pages that no process maps, so
neither the address-space cap nor the sum of the processes' memory sees
them. The filter refuses those calls, and a few that only widen the
kernel's surface (``bpf``, ``perf_event_open``, ``io_uring_setup``,
``userfaultfd``, keyrings, reading another process's memory), and
``sysinfo``, which tells the host's load and memory, with ``EPERM``. System calls of a foreign ABI (32-bit calls on a 64-bit
kernel, x32) are refused whole, so that no other numbering slips past.

The program is classic BPF, written out here, for x86-64 and AArch64;
elsewhere :func:`program` returns ``None`` and the sandbox runs without it.

>>> code = program("x86_64")
>>> len(code) % 8, len(code) // 8 > len(REFUSED)
(0, True)
>>> program("sparc") is None
True
"""

from __future__ import annotations

import errno
import platform
import struct

#: System calls refused, by name (see the module's docstring for why).
REFUSED = ("memfd_create", "memfd_secret", "shmget", "userfaultfd", "io_uring_setup", "bpf",
           "perf_event_open", "keyctl", "add_key", "request_key", "ptrace",
           "process_vm_readv", "process_vm_writev", "sysinfo")

#: The audit architecture and the numbers of the refused calls, per machine
#: (from the kernel's ``asm/unistd_64.h`` and ``asm-generic/unistd.h``).
ARCHITECTURES = {
    "x86_64": (0xC000003E, {
        "memfd_create": 319, "memfd_secret": 447, "shmget": 29, "userfaultfd": 323,
        "io_uring_setup": 425, "bpf": 321, "perf_event_open": 298, "keyctl": 250,
        "add_key": 248, "request_key": 249, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "sysinfo": 99}),
    "aarch64": (0xC00000B7, {
        "memfd_create": 279, "memfd_secret": 447, "shmget": 194, "userfaultfd": 282,
        "io_uring_setup": 425, "bpf": 280, "perf_event_open": 241, "keyctl": 219,
        "add_key": 217, "request_key": 218, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "sysinfo": 179}),
}

_LOAD_WORD = 0x20   # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06      # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000


def _instruction(code: int, k: int, true: int = 0, false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, true, false, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one), as bytes for bubblewrap's ``--seccomp``."""
    machine = machine or platform.machine()
    if machine not in ARCHITECTURES:
        return None
    arch, numbers = ARCHITECTURES[machine]
    refuse = _ERRNO | errno.EPERM
    body = [_instruction(_LOAD_WORD, 4),                   # seccomp_data.arch
            _instruction(_JUMP_EQUAL, arch, true=1),
            _instruction(_RETURN, _ERRNO | errno.ENOSYS),  # a foreign ABI
            _instruction(_LOAD_WORD, 0)]                   # seccomp_data.nr
    if machine == "x86_64":
        body += [_instruction(_JUMP_AT_LEAST, _X32_BIT, false=1),
                 _instruction(_RETURN, _ERRNO | errno.ENOSYS)]
    calls = [numbers[name] for name in REFUSED]
    for index, number in enumerate(calls):
        # Jump over the remaining comparisons and the "allow" to the refusal.
        body.append(_instruction(_JUMP_EQUAL, number, true=len(calls) - index))
    body += [_instruction(_RETURN, _ALLOW), _instruction(_RETURN, refuse)]
    return b"".join(body)
