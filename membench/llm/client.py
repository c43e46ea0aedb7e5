"""One OpenAI-compatible chat client for every model call membench makes.

* **Cache first.** Every request is looked up in a :class:`~membench.llm.cache.CallCache` by the hash of
  model + messages + params; a hit costs nothing. Each paid completion is appended to the cache file
  (fsync'ed) the moment it arrives, so a killed run repays at most the calls that were in flight.
* **Retries and fail-fast** are the transport's (:mod:`membench.llm.transport`, tenacity's retry loop with the
  budget checked before every attempt): transient HTTP errors are retried with backoff or as Retry-After asks;
  401/403/404 and an unreachable endpoint stop the stage at once (:class:`LLMConfigError`).
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

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import openai

from membench.llm.cache import CallCache, canonical_request, make_key
from membench.llm.errors import LLMConfigError, LLMError, StopRequested, stop_message
from membench.llm.pricing import BudgetExceeded, CostMeter
from membench.llm.replies import MalformedReply
from membench.llm.transport import ENV_BASE_URL, StopFlag, Transport, safe_url

log = logging.getLogger("membench.llm")

__all__ = ["LLMClient", "Reply", "LLMError", "LLMConfigError", "StopRequested", "stop_message", "ENV_BASE_URL",
           "ENV_MODEL", "safe_url"]

ENV_MODEL = "MEMBENCH_LLM_MODEL"
NO_KEY_PLACEHOLDER = "EMPTY"  # what vLLM/Ollama-style servers accept when no key is configured

_FORBIDDEN_PARAMS = {"stream", "model", "messages", "timeout", "extra_headers", "extra_query", "extra_body"}


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
        self.meter = meter if meter is not None else CostMeter(api_url=base_url)
        self._owns_cache = owns_cache
        self._locks_guard = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._stop = StopFlag()
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
                                     timeout=self.timeout)  # retries are the transport's
        self._transport = Transport(
            self._openai, self.model, base_url, api_key_env, self.timeout, self.meter, self._stop, self.redact,
            cache.path, max_retries=self.max_retries, backoff=self.backoff, max_backoff=self.max_backoff,
            max_retry_after=self.max_retry_after, sleep=sleep)
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
        return self._stop.is_set()

    def request_stop(self) -> None:
        """Start no new request; queued requests of a running ``complete_many`` are cancelled.

        For another thread (the SIGTERM handler only sets the flag: a handler must not take locks the
        interrupted main thread may hold). Calls in flight finish and are cached. A stopped client stays
        stopped: it still serves cache hits, but makes no new call.
        """
        self._stop.set("request_stop")
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
            self._stop.set(signal.Signals(signum).name)

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
            raise StopRequested(reason=self._stop.reason or "request_stop") from None

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
        if self._stop.is_set():
            raise StopRequested(results=results, reason=self._stop.reason or "request_stop")
        budget_stops = 0
        from tqdm import tqdm

        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"llm-{stage}")
        bar = tqdm(total=len(items), desc=f"llm {stage}", unit="req", disable=not progress, file=sys.stderr,
                   leave=False)
        futures: dict[Future, int] = {}
        try:
            with self.sigterm_guard():
                for i, (msgs, p, tags) in enumerate(items):
                    if self._stop.is_set():
                        break
                    fut = pool.submit(self._complete_one, msgs, p, stage, parse, tags)
                    futures[fut] = i
                    with self._pending_guard:
                        self._pending.add(fut)
                    if self._stop.is_set():  # a stop that raced with this submission
                        fut.cancel()
                cancelled = False
                for fut in as_completed(futures):
                    i = futures[fut]
                    with self._pending_guard:
                        self._pending.discard(fut)
                    if not cancelled and self._stop.is_set():
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
        if self._stop.is_set():
            made = sum(r is not None for r in results)
            exc = StopRequested(results=results, reason=self._stop.reason or "request_stop")
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
                out = self._transport.call(ask, params, stage)
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
