"""The errors a model call can stop a stage with; each message says everything in one line."""

from __future__ import annotations


class LLMError(RuntimeError):
    """A model-call problem that stops the stage; its message says everything in one line."""

    exit_quietly = True  # membench.logs.log_to: one error line and exit 1, no traceback


class LLMConfigError(LLMError):
    """Wrong key, model, URL or missing configuration: every call would fail the same way."""


class StopRequested(LLMError):
    """A stop was requested (SIGTERM, SIGINT or `LLMClient.request_stop`): no new call was started.

    ``results`` (set by ``complete_many``): the replies in input order, ``None`` for requests not made.
    Everything that was answered is in the cache, so a rerun continues without repaying.
    """

    def __init__(self, message: str | None = None, results: list | None = None, reason: str = "stop requested"):
        self.message = message or stop_message(reason)
        self.results = results
        super().__init__(self.message)


def stop_message(reason: str) -> str:
    """What a stop keeps and what it does not, in one line."""
    return (f"stop requested ({reason}): no new model calls were started; the calls in flight finished and are "
            f"kept in the call cache, so a rerun repays nothing")
