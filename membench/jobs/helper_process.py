"""A helper process (the local model's server, the workflow's fork server) that never outlives its parent.

Its parent stops it at the end (`end`); a SIGKILL skips that, so the child also asks Linux for a parent-death
signal: pass `die_with_parent` as `subprocess.Popen`'s `preexec_fn` (it runs in the child, before exec) and the
kernel sends the child SIGTERM when the thread that started it dies.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def end(process: subprocess.Popen | None, grace: float = 10) -> None:
    """Stop a helper that is still running: SIGTERM, then SIGKILL after `grace` seconds."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
