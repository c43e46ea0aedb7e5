"""One OpenAI-compatible chat client for every model call membench makes: cached, retrying, metered, concurrent.

The parts, one module each: the endpoint's key (:mod:`~membench.llm.apikey`, never written or logged), how calls
are made (:class:`~membench.llm.policy.CallPolicy`), one request with its cache lookup and malformed-reply rounds
(:mod:`~membench.llm.request`), the HTTP attempts and their retries (:mod:`~membench.llm.transport`: transient
errors are retried with backoff or as Retry-After asks; 401/403/404 and an unreachable endpoint stop the stage at
once, :class:`LLMConfigError`), and the graceful stop (:mod:`~membench.llm.stopping`). This module puts them
together and runs a batch:

* **Cost and budget** via :class:`~membench.llm.pricing.CostMeter`; over budget, no new paid call is made,
  cache hits are still served, and :class:`BudgetExceeded` carries the clean stop message.
* **Graceful stop (SIGTERM, SIGINT).** While :meth:`LLMClient.complete_many` runs in the main thread (or
  inside :meth:`LLMClient.sigterm_guard`), SIGTERM -- how Snakemake and SLURM stop a job -- and SIGINT
  (Ctrl-C) do not kill the process: no new request is started (queued ones are cancelled, a retry or repair round
  is not begun), the HTTP calls in flight finish and are written to the cache, and :class:`StopRequested` is
  raised with the replies gathered so far (``None`` = not made). A rerun repays nothing. :meth:`request_stop`
  does the same from code.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any

from membench.llm.apikey import ApiKey
from membench.llm.cache import CallCache, make_key
from membench.llm.connection import OpenAIConnection
from membench.llm.errors import LLMConfigError, LLMError, StopRequested, stop_message
from membench.llm.policy import CallPolicy
from membench.llm.pricing import BudgetExceeded, CostMeter
from membench.llm.request import Reply, RequestRunner, Stopped, clean_params, normalise_request
from membench.llm.stopping import StopFlag, stop_on_signals
from membench.llm.transport import ENV_BASE_URL, Transport, safe_url

log = logging.getLogger("membench.llm")

__all__ = ["LLMClient", "Reply", "CallPolicy", "LLMError", "LLMConfigError", "StopRequested", "stop_message",
           "ENV_BASE_URL", "ENV_MODEL", "safe_url"]

ENV_MODEL = "MEMBENCH_LLM_MODEL"


class LLMClient:
    """Cached, retrying, metered, concurrent chat-completions client (see the module docstring).

    The endpoint is ``model`` at ``base_url`` (None: OpenAI's), with the key ``api_key`` or else the one in
    ``$api_key_env`` (none needed for a local server); every call goes through ``cache``, is metered by ``meter``
    and follows ``policy``. ``stage`` names the meter stage of calls that do not name one; ``owns_cache``: close
    the cache with the client; ``sleep`` replaces the retry waits (tests).
    """

    def __init__(self, model: str, base_url: str | None = None, *, api_key_env: str = "OPENAI_API_KEY",
                 api_key: str | None = None, cache: CallCache, meter: CostMeter | None = None,
                 policy: CallPolicy | None = None, stage: str = "default", owns_cache: bool = False,
                 sleep: Callable[[float], None] = time.sleep):
        if not model:
            raise LLMConfigError("no model configured (set llm.model or $" + ENV_MODEL + ")")
        if cache is None:
            raise TypeError("LLMClient needs a CallCache: every model call goes through the cache")
        self.model = str(model)
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.policy = policy if policy is not None else CallPolicy()
        self.default_stage = stage
        self.cache = cache
        self.meter = meter if meter is not None else CostMeter(api_url=base_url)
        self._owns_cache = owns_cache
        self._stop = StopFlag()
        self._pending: set[Future] = set()
        self._pending_guard = threading.RLock()
        self._key = ApiKey.resolve(api_key, api_key_env, base_url)
        self._openai = OpenAIConnection(base_url, self._key.reveal(), self.policy.timeout)  # built when first needed
        transport = Transport(self._openai, self.model, base_url, api_key_env, self.meter, self._stop, self.redact,
                              cache.path, self.policy, sleep=sleep)
        self._requests = RequestRunner(self.model, cache, self.meter, transport, self.policy, self.redact)
        if self.policy.count_prior_spend and self.meter.budget_usd is not None:
            prior = self.meter.add_prior(self.cache.entries())
            if prior:
                log.info("call cache %s already holds $%.6f of paid calls; they count against the budget",
                         self.cache.path, prior)

    # ------------------------------------------------------------------ secrets
    def redact(self, text: Any) -> str:
        """``str(text)`` with the API key replaced by ``***``."""
        return self._key.redact(text)

    def __repr__(self) -> str:
        p = self.policy
        return (f"LLMClient(model={self.model!r}, base_url={safe_url(self.base_url)!r}, "
                f"api_key={self._key.describe()}, concurrency={p.concurrency}, timeout={p.timeout}, "
                f"max_retries={p.max_retries})")

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
        killing the process (:func:`~membench.llm.stopping.stop_on_signals`; main thread only, the previous
        handlers restored on exit). ``complete_many`` uses it itself; a stage may wrap all of its work in it.
        """
        with stop_on_signals(self._stop):
            yield self

    def summary(self) -> dict:
        """The meter summary plus cache facts, for the report."""
        out = self.meter.summary()
        out.update({"model": self.model, "base_url": safe_url(self.base_url), "cache": str(self.cache.path),
                    "cache_ok_keys": len(self.cache), "cache_failed_keys": len(self.cache.failures())})
        return out

    # ------------------------------------------------------------------ public calls
    def key_for(self, messages: Sequence[Mapping[str, Any]], tags: Mapping[str, Any] | None = None, **params) -> str:
        """The cache key :meth:`complete` would use."""
        return make_key(self.model, messages, clean_params(params), tags)

    def complete(self, messages: Sequence[Mapping[str, Any]], stage: str | None = None,
                 parse: Callable[[str], Any] | None = None, tags: Mapping[str, Any] | None = None,
                 **params) -> Reply:
        """One request, cache first. Raises BudgetExceeded (no paid call made), LLMConfigError, or
        StopRequested (a stop was requested before the call was made). ``tags`` join the cache key only."""
        stage = stage or self.default_stage
        try:
            return self._requests.run(list(messages), clean_params(params), stage, parse, tags)
        except Stopped:
            raise StopRequested(reason=self._stop.reason or "request_stop") from None

    def complete_many(self, requests: Sequence[Any], stage: str | None = None,
                      parse: Callable[[str], Any] | None = None, progress: bool = True, **params) -> list[Reply]:
        """Many requests with at most ``concurrency`` in flight; replies in input order.

        A request is a list of messages, or a dict ``{"messages": [...], "tags"?: {...}, <param>: ...}``
        whose params override ``**params`` (``tags`` join the cache key but are not sent). Identical requests are
        made once. Failures come back as failed Replies.
        If the budget runs out, the remaining uncached requests are not made, cached ones are still
        served, and :class:`BudgetExceeded` is raised at the end with ``.results`` (None = not made).
        On SIGTERM (or :meth:`request_stop`) no new request is started, the ones in flight finish, and
        :class:`StopRequested` is raised with ``.results``.
        """
        stage = stage or self.default_stage
        items = [normalise_request(r, params, i) for i, r in enumerate(requests)]
        results: list[Reply | None] = [None] * len(items)
        if self._stop.is_set():
            raise StopRequested(results=results, reason=self._stop.reason or "request_stop")
        budget_stops = 0
        from tqdm import tqdm

        pool = ThreadPoolExecutor(max_workers=self.policy.concurrency, thread_name_prefix=f"llm-{stage}")
        bar = tqdm(total=len(items), desc=f"llm {stage}", unit="req", disable=not progress, file=sys.stderr,
                   leave=False)
        futures: dict[Future, int] = {}
        try:
            with self.sigterm_guard():
                for i, (msgs, p, tags) in enumerate(items):
                    if self._stop.is_set():
                        break
                    fut = pool.submit(self._requests.run, msgs, p, stage, parse, tags)
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
                    except (CancelledError, Stopped):
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
