"""One OpenAI-compatible chat client for every model call membench makes.

* **Cache first.** Every request is looked up in a :class:`~membench.llm.cache.CallCache` by the hash of
  model + messages + params; a hit costs nothing. Each paid completion is appended to the cache file
  (fsync'ed) the moment it arrives, so a killed run repays at most the calls that were in flight.
* **Retries** (our own loop, the ``openai`` client runs with ``max_retries=0``): HTTP 408/409/429/5xx,
  timeouts, connection errors and unparsable HTTP bodies are retried up to ``max_retries`` times with
  exponential backoff and jitter (``backoff * 2**(n-1)``, jittered to 50-100 %, capped at
  ``max_backoff``); a ``Retry-After``/``retry-after-ms`` header replaces the computed delay (capped at
  ``max_retry_after``). **Fail fast:** 401/403/404 and an endpoint that cannot be reached at all (connection
  refused, host name not found) stop the stage at once with one line naming the endpoint (never the key),
  the model and what to check (:class:`LLMConfigError`); other 4xx fail only that request.
* **Malformed replies.** With ``parse`` (e.g. :func:`~membench.llm.replies.json_object_parser`) a reply
  that does not validate is recorded as a ``failed`` cache line (it was paid for) and the request is asked
  again up to ``malformed_retries`` times. By default (``repair=True``) the re-ask is the original
  conversation plus the bad reply and a user message naming the problem: repeating the identical request
  at temperature 0 usually returns the identical bad reply. A repaired answer is stored under the
  *original* request's key (its ``repair_messages`` field keeps what was actually sent), so the next run
  hits. If every attempt is malformed the request ends as a failure (``Reply.status == "failed"``,
  ``value is None``) -- never as a parsed answer or score.
* **Cost and budget** via :class:`~membench.llm.pricing.CostMeter`; over budget, no new paid call is made,
  cache hits are still served, and :class:`BudgetExceeded` carries the clean stop message.
* **Graceful stop (SIGTERM, SIGINT).** While :meth:`LLMClient.complete_many` runs in the main thread (or
  inside :meth:`LLMClient.sigterm_guard`), SIGTERM -- how Snakemake and SLURM stop a job -- and SIGINT
  (Ctrl-C) do not kill the process: no new request is started (queued ones are cancelled, a retry or repair round is not begun),
  the HTTP calls in flight finish and are written to the cache, and :class:`StopRequested` is raised with
  the replies gathered so far (``None`` = not made). A rerun repays nothing. :meth:`request_stop` does
  the same from code.
* **Secrets.** The API key is only handed to the ``openai`` client. It is never part of a cache key or
  record, and it is redacted from every log message, error text and repr this module produces (including
  error bodies a server echoes back).
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from membench.config import config_section, section_keys
from membench.errors import InputError
from membench.llm.cache import CallCache, canonical_request, make_key
from membench.llm.pricing import BudgetExceeded, CostMeter
from membench.llm.replies import MalformedReply

log = logging.getLogger("membench.llm")

__all__ = ["LLMClient", "Reply", "LLMError", "LLMConfigError", "StopRequested", "from_config", "ENV_BASE_URL",
           "ENV_MODEL"]

ENV_BASE_URL = "MEMBENCH_LLM_BASE_URL"
ENV_MODEL = "MEMBENCH_LLM_MODEL"
NO_KEY_PLACEHOLDER = "EMPTY"  # what vLLM/Ollama-style servers accept when no key is configured

_RETRY_STATUS = {408, 409, 429}
_FATAL_STATUS = {401: ("the server rejected the API key", "check the key in ${env}"),
                 403: ("the API key is not allowed to use this model", "check the key in ${env} and llm.model"),
                 404: ("model or endpoint not found",
                       "check llm.model and that llm.base_url ends at the API root (e.g. .../v1)")}
_FORBIDDEN_PARAMS = {"stream", "model", "messages", "timeout", "extra_headers", "extra_query", "extra_body"}


class LLMError(RuntimeError):
    """A model-call problem that stops the stage; its message says everything in one line."""

    exit_quietly = True  # membench.logs.log_to: one error line and exit 1, no traceback


class LLMConfigError(LLMError):
    """Wrong key, model, URL or missing configuration: every call would fail the same way."""


class StopRequested(LLMError):
    """A stop was requested (SIGTERM, SIGINT or :meth:`LLMClient.request_stop`): no new call was started.

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


class _Stopped(Exception):
    """Internal: a request that was not (re)started because a stop was requested."""


@dataclass(frozen=True)
class Reply:
    """The outcome of one logical request.

    ``status`` is ``"ok"`` or ``"failed"``. ``text`` is the reply text (for a malformed final failure: the
    last bad reply, for the record); ``value`` is ``parse(text)`` -- or the text when no parser was given
    -- and is always ``None`` for a failure. ``usage``/``cost_usd`` are what this request paid in this run
    (zero for a cache hit). ``attempts`` counts HTTP attempts, ``malformed`` the bad replies.
    """

    key: str
    status: str
    text: str | None
    value: Any = None
    cached: bool = False
    error: str | None = None
    usage: Mapping[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    cost_usd: float = 0.0
    attempts: int = 0
    malformed: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class _Outcome:
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


def _unreachable(exc: BaseException) -> str | None:
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


class LLMClient:
    """Cached, retrying, metered, concurrent chat-completions client (see the module docstring)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", concurrency: int = 4, timeout: float = 60,
                 max_retries: int = 5, backoff: float = 1.0, cache: CallCache | None = None,
                 meter: CostMeter | None = None, *, malformed_retries: int = 2, repair: bool = True,
                 retry_failed: bool = True, max_backoff: float = 30.0, max_retry_after: float = 60.0,
                 stage: str = "default", count_prior_spend: bool = True, max_failed_share: float = 0.02,
                 sleep: Callable[[float], None] = time.sleep, owns_cache: bool = False):
        if not model:
            raise LLMConfigError("no model configured (set llm.model or $" + ENV_MODEL + ")")
        if cache is None:
            raise TypeError("LLMClient needs a CallCache: every model call goes through the cache")
        if int(concurrency) < 1:
            raise ValueError("concurrency must be >= 1")
        if int(max_retries) < 0 or int(malformed_retries) < 0:
            raise ValueError("max_retries and malformed_retries must be >= 0")
        self.model = str(model)
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.malformed_retries = int(malformed_retries)
        self.repair = bool(repair)
        self.retry_failed = bool(retry_failed)
        self.max_backoff = float(max_backoff)
        self.max_retry_after = float(max_retry_after)
        self.default_stage = stage
        self.max_failed_share = float(max_failed_share)  # read by the stages: more failed calls fail the stage
        self.cache = cache
        self.meter = meter if meter is not None else CostMeter()
        self._sleep = sleep
        self._owns_cache = owns_cache
        self._locks_guard = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._warned_no_usage = False
        self._stopping = threading.Event()
        self._stop_reason: str | None = None
        self._pending: set[Future] = set()
        self._pending_guard = threading.RLock()

        key_source = "argument"
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env) or None
            key_source = f"${api_key_env}"
        if api_key is None:
            if base_url is None:
                raise LLMConfigError(f"no API key: set ${api_key_env} (or point llm.base_url / ${ENV_BASE_URL} "
                                     f"at a local OpenAI-compatible server)")
            api_key, key_source = NO_KEY_PLACEHOLDER, "none"
        self.__api_key = str(api_key)
        self._key_source = key_source
        self._openai = openai.OpenAI(base_url=base_url, api_key=self.__api_key, max_retries=0,
                                     timeout=self.timeout)
        if count_prior_spend and self.meter.budget_usd is not None:
            prior = self.meter.add_prior(self.cache.entries())
            if prior:
                log.info("call cache %s already holds $%.6f of paid calls; they count against the budget",
                         self.cache.path, prior)

    # ------------------------------------------------------------------ secrets
    def redact(self, text: Any) -> str:
        """``str(text)`` with the API key replaced by ``***``."""
        s = str(text)
        key = self.__api_key
        if key and key != NO_KEY_PLACEHOLDER and len(key) >= 6 and key in s:
            s = s.replace(key, "***")
        return s

    def __repr__(self) -> str:
        key = {"none": "none"}.get(self._key_source, f"<set from {self._key_source}, hidden>")
        return (f"LLMClient(model={self.model!r}, base_url={safe_url(self.base_url)!r}, api_key={key}, "
                f"concurrency={self.concurrency}, timeout={self.timeout}, max_retries={self.max_retries})")

    __str__ = __repr__

    def __getstate__(self):
        raise TypeError("LLMClient holds a secret and is not picklable; build one per process")

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self._openai.close()
        if self._owns_cache:
            self.cache.close()

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ graceful stop
    @property
    def stop_requested(self) -> bool:
        return self._stopping.is_set()

    def request_stop(self) -> None:
        """Start no new request; queued requests of a running ``complete_many`` are cancelled.

        For another thread (the SIGTERM handler only sets the flag: a handler must not take locks the
        interrupted main thread may hold). Calls in flight finish and are cached. A stopped client stays
        stopped: it still serves cache hits, but makes no new call.
        """
        self._stop_reason = self._stop_reason or "request_stop"
        self._stopping.set()
        with self._pending_guard:
            pending = list(self._pending)
        for fut in pending:
            fut.cancel()  # only succeeds for requests no worker has started

    @contextmanager
    def sigterm_guard(self) -> Iterator["LLMClient"]:
        """Within the block, SIGTERM and SIGINT (Ctrl-C) request a stop (see :meth:`request_stop`) instead of
        killing the process (SIGINT would otherwise raise KeyboardInterrupt wherever the main thread is).

        Installed only in the main thread (Python delivers signals there); the previous handler is
        restored on exit. ``complete_many`` uses it itself; a stage may wrap all of its work in it.
        """
        if threading.current_thread() is not threading.main_thread():
            yield self
            return

        def on_signal(signum, frame):  # noqa: ARG001 - signal handler signature
            # only set the flag (Event.set takes a lock the main thread never holds); complete_many's loop
            # cancels the queued requests, and a worker checks the flag before every HTTP attempt
            self._stop_reason = self._stop_reason or signal.Signals(signum).name
            self._stopping.set()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    def summary(self) -> dict:
        """The meter summary plus cache facts, for the report."""
        out = self.meter.summary()
        out.update({"model": self.model, "base_url": safe_url(self.base_url), "cache": str(self.cache.path),
                    "cache_ok_keys": len(self.cache), "cache_failed_keys": len(self.cache.failures())})
        return out

    # ------------------------------------------------------------------ public calls
    def key_for(self, messages: Sequence[Mapping[str, Any]], tags: Mapping[str, Any] | None = None, **params) -> str:
        """The cache key :meth:`complete` would use."""
        return make_key(self.model, messages, self._clean_params(params), tags)

    def complete(self, messages: Sequence[Mapping[str, Any]], stage: str | None = None,
                 parse: Callable[[str], Any] | None = None, tags: Mapping[str, Any] | None = None,
                 **params) -> Reply:
        """One request, cache first. Raises BudgetExceeded (no paid call made), LLMConfigError, or
        StopRequested (a stop was requested before the call was made). ``tags`` join the cache key only."""
        stage = stage or self.default_stage
        try:
            return self._complete_one(list(messages), self._clean_params(params), stage, parse, tags)
        except _Stopped:
            raise StopRequested(reason=self._stop_reason or "request_stop") from None

    def complete_many(self, requests: Sequence[Any], stage: str | None = None,
                      parse: Callable[[str], Any] | None = None, progress: bool = True, **params) -> list[Reply]:
        """Many requests with at most ``concurrency`` in flight; replies in input order.

        A request is a list of messages, or a dict ``{"messages": [...], "tags"?: {...}, <param>: ...}``
        whose params override ``**params`` (``tags`` join the cache key but are not sent). Identical requests are made once. Failures come back as failed Replies.
        If the budget runs out, the remaining uncached requests are not made, cached ones are still
        served, and :class:`BudgetExceeded` is raised at the end with ``.results`` (None = not made).
        On SIGTERM (or :meth:`request_stop`) no new request is started, the ones in flight finish, and
        :class:`StopRequested` is raised with ``.results``.
        """
        stage = stage or self.default_stage
        items = [self._normalise_request(r, params, i) for i, r in enumerate(requests)]
        results: list[Reply | None] = [None] * len(items)
        if self._stopping.is_set():
            raise StopRequested(results=results, reason=self._stop_reason or "request_stop")
        budget_stops = 0
        from tqdm import tqdm

        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"llm-{stage}")
        bar = tqdm(total=len(items), desc=f"llm {stage}", unit="req", disable=not progress, file=sys.stderr,
                   leave=False)
        futures: dict[Future, int] = {}
        try:
            with self.sigterm_guard():
                for i, (msgs, p, tags) in enumerate(items):
                    if self._stopping.is_set():
                        break
                    fut = pool.submit(self._complete_one, msgs, p, stage, parse, tags)
                    futures[fut] = i
                    with self._pending_guard:
                        self._pending.add(fut)
                    if self._stopping.is_set():  # a stop that raced with this submission
                        fut.cancel()
                cancelled = False
                for fut in as_completed(futures):
                    i = futures[fut]
                    with self._pending_guard:
                        self._pending.discard(fut)
                    if not cancelled and self._stopping.is_set():
                        cancelled = True
                        for other in futures:
                            other.cancel()  # succeeds only for requests no worker has started
                    try:
                        results[i] = fut.result()
                    except BudgetExceeded:
                        budget_stops += 1
                        self.meter.record_budget_stop(stage)
                    except (CancelledError, _Stopped):
                        pass
                    bar.update(1)
                    if progress:
                        st = self.meter.stage(stage)
                        bar.set_postfix(calls=st["calls"], hits=st["cache_hits"], failed=st["failures"],
                                        usd=f"{st['cost_usd']:.4f}", refresh=False)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            with self._pending_guard:
                self._pending.difference_update(futures)
            bar.close()
            pool.shutdown(wait=True)
        if self._stopping.is_set():
            made = sum(r is not None for r in results)
            exc = StopRequested(results=results, reason=self._stop_reason or "request_stop")
            log.warning("stage %s: %s (%d of %d requests answered; everything answered is in %s)",
                        stage, exc.message, made, len(items), self.cache.path)
            raise exc
        if budget_stops:
            summ = self.meter.summary()
            exc = BudgetExceeded(summ["budget_usd"], summ["spent_usd"], self.meter.paid_calls, results=results,
                                 prior_usd=summ["prior_usd"])
            log.warning("stage %s: %s (%d of %d requests not made; everything done is in %s)",
                        stage, exc.message, budget_stops, len(items), self.cache.path)
            raise exc
        return results  # type: ignore[return-value]

    # ------------------------------------------------------------------ internals
    def _clean_params(self, params: Mapping[str, Any]) -> dict:
        bad = sorted(set(params) & _FORBIDDEN_PARAMS)
        if bad:
            raise ValueError(f"parameter(s) {', '.join(bad)} cannot be passed per request")
        return {k: v for k, v in params.items() if v is not None}

    def _normalise_request(self, req: Any, common: Mapping[str, Any], index: int) -> tuple[list, dict, dict | None]:
        if isinstance(req, Mapping):
            if "messages" not in req:
                raise ValueError(f"request {index} is a dict without 'messages'")
            extra = {k: v for k, v in req.items() if k not in ("messages", "tags")}
            return list(req["messages"]), self._clean_params({**common, **extra}), req.get("tags")
        if isinstance(req, Sequence) and not isinstance(req, (str, bytes)):
            return list(req), self._clean_params(dict(common)), None
        raise ValueError(f"request {index} must be a list of messages or a dict with 'messages'")

    def _key_lock(self, key: str) -> threading.Lock:
        with self._locks_guard:
            lock = self._key_locks.get(key)
            if lock is None:
                lock = self._key_locks[key] = threading.Lock()
            return lock

    def _parse(self, parse: Callable[[str], Any] | None, text: str | None) -> Any:
        if text is None or not str(text).strip():
            raise MalformedReply("empty reply", text)
        if parse is None:
            return text
        try:
            return parse(text)
        except MalformedReply:
            raise
        except ValueError as exc:  # json errors and friends count as malformed, other errors are bugs
            raise MalformedReply(str(exc), text) from exc

    def _record(self, key: str, request: dict, stage: str, status: str, text: str | None, usage: dict,
                error: str | None = None, **extra) -> None:
        entry = {"key": key, "model": self.model, "request": request, "response_text": text,
                 "usage": {"prompt_tokens": int(usage.get("prompt_tokens", 0)),
                           "completion_tokens": int(usage.get("completion_tokens", 0))},
                 "status": status, "stage": stage}
        if error is not None:
            entry["error"] = self.redact(error)
        entry.update({k: v for k, v in extra.items() if v is not None})
        self.cache.append(entry)

    def _complete_one(self, messages: list, params: dict, stage: str,
                      parse: Callable[[str], Any] | None, tags: Mapping[str, Any] | None = None) -> Reply:
        request = canonical_request(self.model, messages, params, tags)
        key = make_key(self.model, messages, params, tags)
        self.meter.record_request(stage)
        with self._key_lock(key):
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    value = self._parse(parse, hit.get("response_text"))
                except MalformedReply as exc:
                    log.warning("stage %s: cached reply %s… no longer passes the parser (%s); asking again",
                                stage, key[:12], self.redact(exc.reason))
                else:
                    self.meter.record_hit(stage)
                    return Reply(key=key, status="ok", text=hit.get("response_text"), value=value, cached=True)
            if not self.retry_failed:
                failed = self.cache.last_failure(key)
                if failed is not None:
                    self.meter.record_hit(stage)
                    self.meter.record_failure(stage)
                    return Reply(key=key, status="failed", text=failed.get("response_text"), cached=True,
                                 error=failed.get("error"))

            ask = messages
            repair_messages: list | None = None
            total_usage = {"prompt_tokens": 0, "completion_tokens": 0}
            total_cost, attempts, malformed = 0.0, 0, 0
            for round_no in range(self.malformed_retries + 1):
                out = self._call_with_retries(ask, params, stage)
                if out.stopped:  # nothing (more) was asked: no record, the next run asks again
                    raise _Stopped()
                attempts += out.attempts
                for k in total_usage:
                    total_usage[k] += out.usage.get(k, 0)
                total_cost += out.cost
                if out.error is not None:
                    self._record(key, request, stage, "failed", None, out.usage, out.error,
                                 attempts=out.attempts, repair_messages=repair_messages)
                    self.meter.record_failure(stage)
                    log.warning("stage %s: request %s… failed: %s", stage, key[:12], out.error)
                    return Reply(key=key, status="failed", text=None, error=out.error, usage=total_usage,
                                 cost_usd=total_cost, attempts=attempts, malformed=malformed)
                try:
                    value = self._parse(parse, out.text)
                except MalformedReply as exc:
                    malformed += 1
                    self.meter.record_malformed(stage)
                    error = f"malformed reply: {exc.reason}"
                    self._record(key, request, stage, "failed", out.text, out.usage, error,
                                 attempts=out.attempts, finish_reason=out.finish_reason,
                                 repair_messages=repair_messages, malformed_round=round_no + 1)
                    if round_no == self.malformed_retries:
                        self.meter.record_failure(stage)
                        log.warning("stage %s: request %s… failed after %d malformed replies: %s",
                                    stage, key[:12], malformed, self.redact(exc.reason))
                        return Reply(key=key, status="failed", text=out.text, error=self.redact(error),
                                     usage=total_usage, cost_usd=total_cost, attempts=attempts,
                                     malformed=malformed)
                    log.info("stage %s: malformed reply for %s… (%s); asking again (%d/%d)", stage, key[:12],
                             self.redact(exc.reason), round_no + 1, self.malformed_retries)
                    if self.repair:
                        repair_messages = [
                            {"role": "assistant", "content": out.text or ""},
                            {"role": "user", "content": (
                                f"Your reply could not be used: {exc.reason}. Answer the previous request "
                                f"again, in exactly the requested format, with nothing else.")},
                        ]
                        ask = [*messages, *repair_messages]
                    continue
                self._record(key, request, stage, "ok", out.text, out.usage, attempts=out.attempts,
                             finish_reason=out.finish_reason, repair_messages=repair_messages)
                return Reply(key=key, status="ok", text=out.text, value=value, usage=total_usage,
                             cost_usd=total_cost, attempts=attempts, malformed=malformed)
        raise AssertionError("unreachable")  # pragma: no cover

    def _retry_after(self, exc: Exception) -> float | None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
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
                when = email.utils.parsedate_to_datetime(raw)
                return max(0.0, when.timestamp() - time.time())
            except (TypeError, ValueError):
                return None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        base = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return base * random.uniform(0.5, 1.0)

    def _call_with_retries(self, messages: list, params: dict, stage: str) -> _Outcome:
        """Make one paid completion, retrying transient errors. BudgetExceeded/LLMConfigError propagate."""
        attempt = 0
        while True:
            attempt += 1
            if self._stopping.is_set():
                return _Outcome(attempts=attempt - 1, stopped=True)
            self.meter.check(stage)  # raises BudgetExceeded before any paid call
            try:
                resp = self._openai.chat.completions.create(model=self.model, messages=messages, **params)
            except openai.APIStatusError as exc:
                self.meter.release()
                status = exc.status_code
                detail = self.redact(getattr(exc, "message", "") or exc)
                if status in _FATAL_STATUS:
                    what, check = _FATAL_STATUS[status]
                    raise self._fatal(f"{what} (HTTP {status}: {detail[:120]})",
                                      check.replace("${env}", f"${self.api_key_env}")) from None
                if status not in _RETRY_STATUS and status < 500:
                    return _Outcome(attempts=attempt, error=f"HTTP {status}: {detail}")
                reason, retry_after = f"HTTP {status} ({detail[:200]})", self._retry_after(exc)
            except openai.APITimeoutError:
                self.meter.release()
                reason, retry_after = f"timed out after {self.timeout:g}s", None
            except openai.APIConnectionError as exc:
                self.meter.release()
                unreachable = _unreachable(exc)
                if unreachable:
                    raise self._fatal(unreachable, "check llm.base_url (or $" + ENV_BASE_URL + ") and that the "
                                      "server is running and reachable from this machine") from None
                reason, retry_after = f"connection error ({type(exc.__cause__ or exc).__name__})", None
            except (openai.APIResponseValidationError, ValueError) as exc:
                self.meter.release()
                reason, retry_after = f"unparsable response body ({type(exc).__name__})", None
            except BaseException:
                self.meter.release()
                raise
            else:
                return self._outcome(resp, stage, attempt)
            if attempt > self.max_retries:
                return _Outcome(attempts=attempt, error=f"{reason}; gave up after {attempt} attempts")
            delay = self._delay(attempt, retry_after)
            self.meter.record_retry(stage)
            log.warning("stage %s: %s; retry %d/%d in %.2fs%s", stage, reason, attempt, self.max_retries, delay,
                        " (Retry-After)" if retry_after is not None else "")
            if self._sleep is time.sleep:
                self._stopping.wait(delay)  # a stop request cuts the backoff short
            else:
                self._sleep(delay)

    def _fatal(self, what: str, check: str) -> LLMConfigError:
        """The one-line error that stops a stage: endpoint (no credentials), model, what to check. No further
        request is started (the other workers see the stop flag)."""
        self._stop_reason = self._stop_reason or "unusable endpoint"
        self._stopping.set()
        endpoint = safe_url(self.base_url) or "https://api.openai.com/v1"
        return LLMConfigError(self.redact(f"{what} at {endpoint} for model {self.model!r}: {check}; nothing was "
                                          f"lost (answered calls are kept in the call cache {self.cache.path})"))

    def _outcome(self, resp: Any, stage: str, attempt: int) -> _Outcome:
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
            text = getattr(msg, "content", None)
            finish = getattr(choices[0], "finish_reason", None)
        return _Outcome(text=text, usage=usage, cost=cost, finish_reason=finish, attempts=attempt)


# ---------------------------------------------------------------------- config

def from_config(cfg: Mapping[str, Any], cache_path: str | os.PathLike, stage: str = "default", *,
                meter: CostMeter | None = None, env: Mapping[str, str] | None = None,
                config_path: str = "config", **overrides) -> LLMClient:
    """Build a client from the ``llm:`` config section.

    ``cfg`` is the whole config (with an ``llm`` key) or the ``llm`` section itself. Its keys, checks and
    defaults are those of ``workflow/schemas/config.schema.yaml`` (``llm:``, e.g. its ``budget_usd``), applied
    here to the section merged with its ``stages.<stage>`` overrides, so a config passed directly reads as
    the validated one. ``$MEMBENCH_LLM_MODEL`` / ``$MEMBENCH_LLM_BASE_URL`` win over ``model`` / ``base_url``.

    The cache at ``cache_path`` is opened here and closed with the client. ``overrides`` go straight to
    :class:`LLMClient` (e.g. ``sleep=`` in tests).
    """
    env = os.environ if env is None else env
    section = cfg.get("llm", cfg) if isinstance(cfg, Mapping) else None
    if not isinstance(section, Mapping):
        raise InputError(config_path, "the llm section must be a mapping", field="llm")
    section = dict(section)
    stage_over = (section.pop("stages", None) or {}).get(stage) or {}
    if not isinstance(stage_over, Mapping):
        raise InputError(config_path, "must be a mapping", field=f"llm.stages.{stage}")
    section.update(stage_over)
    for k in sorted(set(section) - section_keys("llm")):
        if "budget" in k or "price" in k or "key" in k:
            raise InputError(config_path, f"unknown key '{k}' (did you mean one of budget_usd, prices, "
                                          f"api_key_env?); keys are never put in config, only their variable name",
                             field=f"llm.{k}")
    section = config_section(None, "llm", config_path, section=section)

    model = env.get(ENV_MODEL) or section["model"]
    if not model:
        raise InputError(config_path, f"no model: set llm.model or ${ENV_MODEL}", field="llm.model")
    base_url = env.get(ENV_BASE_URL) or section["base_url"] or None
    prices, budget = section["prices"], section["budget_usd"]
    if budget is not None and model not in prices:
        raise InputError(config_path, f"a budget needs a price for model {model!r}; add it to llm.prices",
                         field="llm.prices")
    if meter is None:
        try:
            meter = CostMeter(prices, budget)
        except ValueError as exc:
            raise InputError(config_path, str(exc), field="llm.prices") from None

    kwargs = dict(
        model=model, base_url=base_url, api_key_env=section["api_key_env"], concurrency=section["concurrency"],
        timeout=section["timeout"], max_retries=section["max_retries"], backoff=section["backoff"],
        malformed_retries=section["malformed_retries"], stage=stage, max_failed_share=section["max_failed_share"],
    )
    kwargs.update(overrides)
    cache = CallCache(cache_path)
    try:
        return LLMClient(cache=cache, meter=meter, owns_cache=True, **kwargs)
    except BaseException:
        cache.close()
        raise
