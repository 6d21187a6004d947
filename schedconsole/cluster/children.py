"""Child processes the console starts for a job (a benchmark run): tied to the process that started
them, so a console that stops or is killed does not leave them running. On Linux the child asks
the kernel for SIGTERM when its parent thread ends (`PR_SET_PDEATHSIG`); the job's thread waits for
the child, so that is when the console ends."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from typing import Any

PR_SET_PDEATHSIG = 1

_libc: Any = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:  # no C library to ask: children are then not tied
        _libc = None


def _tie_to_parent(parent: int) -> None:
    """In the child, before exec: SIGTERM when the parent ends, and at once if it already has."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def popen_tied(command: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    """`subprocess.Popen(command, text=True, **kwargs)` whose child ends with the caller."""
    if _libc is None:
        return subprocess.Popen(command, text=True, **kwargs)
    parent = os.getpid()
    return subprocess.Popen(command, text=True, preexec_fn=lambda: _tie_to_parent(parent), **kwargs)
