"""A child process that ends when the process that started it ends, however that one ends.

A helper server (the local model's, the workflow's fork server) is stopped by its parent's exit hooks; a SIGKILL
skips those. Linux's parent-death signal covers that case: the kernel sends the child a signal when its parent
thread dies. Pass `die_with_parent` as `preexec_fn` to `subprocess.Popen`: it runs in the child, before exec.
"""

from __future__ import annotations

import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
