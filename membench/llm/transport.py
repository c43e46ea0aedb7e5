"""One paid completion over HTTP, retried on transient errors: the part of the client that talks to the server.

The retry loop is tenacity's (`Retrying`), its numbers the client's `CallPolicy`: HTTP 408/409/429/5xx, timeouts,
connection errors and unparsable bodies are retried up to ``max_retries`` times, waiting ``backoff * 2**(n-1)``
jittered to 50-100 % and capped at ``max_backoff``, or what a ``Retry-After`` / ``retry-after-ms`` header asks
(capped at ``max_retry_after``). What tenacity does not know stays here: the budget is checked before every attempt
(no paid call over budget), a stop request ends the loop before the next attempt and cuts a backoff short, and
401/403/404 or an endpoint that cannot be reached at all stop the stage at once (`LLMConfigError`, naming the
endpoint, never the key).
"""

from __future__ import annotations

import email.utils
import logging
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import tenacity

from membench.llm.errors import LLMConfigError
from membench.llm.policy import CallPolicy
from membench.llm.pricing import CostMeter
from membench.llm.stopping import StopFlag

if TYPE_CHECKING:
    import openai

log = logging.getLogger("membench.llm")

ENV_BASE_URL = "MEMBENCH_LLM_BASE_URL"
RETRY_STATUS = {408, 409, 429}
FATAL_STATUS = {401: ("the server rejected the API key", "check the key in ${env}"),
                403: ("the API key is not allowed to use this model", "check the key in ${env} and llm.model"),
                404: ("model or endpoint not found",
                      "check llm.model and that llm.base_url ends at the API root (e.g. .../v1)")}


@dataclass
class Outcome:
    """What one request's HTTP attempts came to."""

    text: str | None = None
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    cost: float = 0.0
    finish_reason: str | None = None
    attempts: int = 0
    error: str | None = None  # set when the request failed without a reply
    stopped: bool = False  # no (further) attempt was made because a stop was requested


def safe_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (those may carry credentials)."""
    if not url:
        return url
    try:
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "<unparsable url>"


def unreachable(exc: BaseException) -> str | None:
    """'connection refused' / 'host name not found' when the endpoint cannot be reached at all, else None
    (a dropped connection or a timeout is transient and retried)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ConnectionRefusedError):
            return "connection refused"
        if isinstance(exc, socket.gaierror):
            return "host name not found (DNS)"
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def retry_after(exc: BaseException) -> float | None:
    """The delay a server asks for in ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        try:
            return max(0.0, email.utils.parsedate_to_datetime(raw).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


class _Transient(Exception):
    """An attempt that failed in a way worth retrying."""

    def __init__(self, reason: str, delay: float | None = None):
        super().__init__(reason)
        self.reason, self.retry_after = reason, delay


class _Failed(Exception):
    """An attempt whose failure a retry would repeat (a 4xx other than the fatal and retried ones)."""


class _StoppedBefore(Exception):
    """No attempt was started: a stop was requested."""


@dataclass
class Transport:
    """Makes paid completions for one model at one endpoint, retrying transient errors (module docstring)."""

    openai_client: Callable[[], openai.OpenAI]  # built on the first attempt (llm.connection.OpenAIConnection)
    model: str
    base_url: str | None
    api_key_env: str
    meter: CostMeter
    stop: StopFlag
    redact: Callable[[Any], str]
    cache_path: Any
    policy: CallPolicy = field(default_factory=CallPolicy)
    sleep: Callable[[float], None] = time.sleep
    _warned_no_usage: bool = field(default=False, init=False)  # said once per transport

    def call(self, messages: list, params: dict, stage: str) -> Outcome:
        """One completion with retries. BudgetExceeded and LLMConfigError propagate."""
        attempts = 0

        def attempt() -> Outcome:
            nonlocal attempts
            if self.stop.is_set():
                raise _StoppedBefore()
            attempts += 1
            self.meter.check(stage)  # raises BudgetExceeded before any paid call
            return self._attempt(messages, params, stage, attempts)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Transient),
            stop=tenacity.stop_after_attempt(self.policy.max_retries + 1),
            wait=self._wait, sleep=self._pause, before_sleep=lambda state: self._before_sleep(state, stage),
            reraise=True)
        try:
            return retrying(attempt)
        except _StoppedBefore:
            return Outcome(attempts=attempts, stopped=True)
        except _Failed as exc:
            return Outcome(attempts=attempts, error=str(exc))
        except _Transient as exc:
            return Outcome(attempts=attempts, error=f"{exc.reason}; gave up after {attempts} attempts")

    def _attempt(self, messages: list, params: dict, stage: str, attempt: int) -> Outcome:
        import openai  # here, not at the top: a stage that the call cache answers never loads it (about 1 s)

        try:
            resp = self.openai_client().chat.completions.create(model=self.model, messages=messages, **params)
        except openai.APIStatusError as exc:
            self.meter.release()
            status, detail = exc.status_code, self.redact(getattr(exc, "message", "") or exc)
            if status in FATAL_STATUS:
                what, check = FATAL_STATUS[status]
                raise self.fatal(f"{what} (HTTP {status}: {detail[:120]})",
                                 check.replace("${env}", f"${self.api_key_env}")) from None
            if status not in RETRY_STATUS and status < 500:
                raise _Failed(f"HTTP {status}: {detail}") from None
            raise _Transient(f"HTTP {status} ({detail[:200]})", retry_after(exc)) from None
        except openai.APITimeoutError:
            self.meter.release()
            raise _Transient(f"timed out after {self.policy.timeout:g}s") from None
        except openai.APIConnectionError as exc:
            self.meter.release()
            cannot = unreachable(exc)
            if cannot:
                raise self.fatal(cannot, "check llm.base_url (or $" + ENV_BASE_URL + ") and that the server is "
                                 "running and reachable from this machine") from None
            raise _Transient(f"connection error ({type(exc.__cause__ or exc).__name__})") from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            self.meter.release()
            raise _Transient(f"unparsable response body ({type(exc).__name__})") from None
        except BaseException:
            self.meter.release()
            raise
        return self._outcome(resp, stage, attempt)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        asked = state.outcome.exception().retry_after
        if asked is not None:
            return min(asked, self.policy.max_retry_after)
        policy = self.policy
        return min(policy.max_backoff, policy.backoff * (2 ** (state.attempt_number - 1))) * random.uniform(0.5, 1.0)

    def _before_sleep(self, state: tenacity.RetryCallState, stage: str) -> None:
        exc = state.outcome.exception()
        self.meter.record_retry(stage)
        log.warning("stage %s: %s; retry %d/%d in %.2fs%s", stage, exc.reason, state.attempt_number,
                    self.policy.max_retries, state.next_action.sleep,
                    " (Retry-After)" if exc.retry_after is not None else "")

    def _pause(self, seconds: float) -> None:
        if self.sleep is time.sleep:
            self.stop.event.wait(seconds)  # a stop request cuts the backoff short
        else:
            self.sleep(seconds)

    def fatal(self, what: str, check: str) -> LLMConfigError:
        """The one-line error that stops a stage: endpoint (no credentials), model, what to check. No further
        request is started (the other workers see the stop flag)."""
        self.stop.set("unusable endpoint")
        endpoint = safe_url(self.base_url) or "https://api.openai.com/v1"
        return LLMConfigError(self.redact(f"{what} at {endpoint} for model {self.model!r}: {check}; nothing was "
                                          f"lost (answered calls are kept in the call cache {self.cache_path})"))

    def _outcome(self, resp: Any, stage: str, attempt: int) -> Outcome:
        usage_obj = getattr(resp, "usage", None)
        usage = {"prompt_tokens": int(getattr(usage_obj, "prompt_tokens", 0) or 0),
                 "completion_tokens": int(getattr(usage_obj, "completion_tokens", 0) or 0)}
        if usage_obj is None and not self._warned_no_usage:
            self._warned_no_usage = True
            log.warning("stage %s: the server reports no token usage; the cost meter counts these calls as $0",
                        stage)
        cost = self.meter.record_call(stage, self.model, usage["prompt_tokens"], usage["completion_tokens"])
        choices = getattr(resp, "choices", None) or []
        text = finish = None
        if choices:
            msg = getattr(choices[0], "message", None)
            text, finish = getattr(msg, "content", None), getattr(choices[0], "finish_reason", None)
        return Outcome(text=text, usage=usage, cost=cost, finish_reason=finish, attempts=attempt)
