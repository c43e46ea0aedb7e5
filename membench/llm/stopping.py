"""Graceful stop: a flag every worker checks before each HTTP attempt, and the SIGTERM/SIGINT handler that sets it.

Why: Snakemake and SLURM stop a job with SIGTERM, a user with Ctrl-C. Either would kill the calls in flight, whose
answers are paid for; with :func:`stop_on_signals` the signal only sets the flag, so no new request is started, the
calls in flight finish and are cached, and the client raises :class:`~membench.llm.errors.StopRequested`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class StopFlag:
    """A stop request shared by the client's workers: set once, with the first reason given."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reason: str | None = None

    def set(self, reason: str) -> None:
        self.reason = self.reason or reason
        self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()


@contextmanager
def stop_on_signals(flag: StopFlag) -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT set ``flag`` instead of killing the process (SIGINT would otherwise
    raise KeyboardInterrupt wherever the main thread is).

    Installed only in the main thread (Python delivers signals there); the previous handlers are restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum, frame):  # noqa: ARG001 - signal handler signature
        # only set the flag (Event.set takes a lock the main thread never holds); complete_many's loop
        # cancels the queued requests, and a worker checks the flag before every HTTP attempt
        flag.set(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
