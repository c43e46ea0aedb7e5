"""One logical request, and the :class:`Reply` it comes to: cache first, then the transport, then the rounds for
malformed replies.

Why its own module: this is where a request's cache key, its cache records and its re-asks are decided; the client
around it only adds concurrency, signals and a batch's budget stop.

* **Cache first.** A request is looked up in the :class:`~membench.llm.cache.CallCache` by the hash of
  model + messages + params (+ tags); a hit costs nothing. Each paid completion is appended to the cache the moment
  it arrives, so a killed run repays at most the calls that were in flight.
* **Malformed replies.** With ``parse`` (e.g. :func:`~membench.llm.replies.json_object_parser`) a reply that does
  not validate is recorded as a ``failed`` cache line (it was paid for) and the request is asked again up to
  ``policy.malformed_retries`` times. With ``policy.repair`` the re-ask is the original conversation plus the bad
  reply and a user message naming the problem: repeating the identical request at temperature 0 usually returns
  the identical bad reply. A repaired answer is stored under the *original* request's key (its
  ``repair_messages`` field keeps what was actually sent), so the next run hits. If every attempt is malformed the
  request ends as a failure (``Reply.status == "failed"``, ``value is None``), never as a parsed answer or score.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from membench.llm.cache import CallCache, canonical_request, make_key
from membench.llm.policy import CallPolicy
from membench.llm.pricing import CostMeter
from membench.llm.replies import MalformedReply, parse_reply
from membench.llm.transport import Transport

log = logging.getLogger("membench.llm")

FORBIDDEN_PARAMS = {"stream", "model", "messages", "timeout", "extra_headers", "extra_query", "extra_body"}


class Stopped(Exception):
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


def clean_params(params: Mapping[str, Any]) -> dict:
    """The request parameters that are sent (None dropped); the ones the client owns are refused."""
    bad = sorted(set(params) & FORBIDDEN_PARAMS)
    if bad:
        raise ValueError(f"parameter(s) {', '.join(bad)} cannot be passed per request")
    return {k: v for k, v in params.items() if v is not None}


def normalise_request(req: Any, common: Mapping[str, Any], index: int) -> tuple[list, dict, dict | None]:
    """(messages, params, tags) of one request of a batch: a list of messages, or a dict with ``messages`` whose
    other keys override ``common`` (``tags`` join the cache key but are not sent)."""
    if isinstance(req, Mapping):
        if "messages" not in req:
            raise ValueError(f"request {index} is a dict without 'messages'")
        extra = {k: v for k, v in req.items() if k not in ("messages", "tags")}
        return list(req["messages"]), clean_params({**common, **extra}), req.get("tags")
    if isinstance(req, Sequence) and not isinstance(req, (str, bytes)):
        return list(req), clean_params(dict(common)), None
    raise ValueError(f"request {index} must be a list of messages or a dict with 'messages'")


def json_mode_params(params: dict, schema: dict | None) -> dict:
    """A request's parameters in the JSON dialect of a llama.cpp server (`json_mode`): a parser's schema becomes
    `response_format: {type: json_object, schema}`, and so does OpenAI's `{type: json_schema, json_schema:
    {schema}}` that a library sends itself (A-MEM does; the server knows only `text` and `json_object`)."""
    wanted = params.get("response_format")
    if wanted is None and schema is not None:
        return {**params, "response_format": {"type": "json_object", "schema": schema}}
    if isinstance(wanted, dict) and wanted.get("type") == "json_schema":
        given = (wanted.get("json_schema") or {}).get("schema")
        return {**params, "response_format": {"type": "json_object", **({"schema": given} if given else {})}}
    return params


class RequestRunner:
    """Runs single requests for one model (module docstring); requests with the same key run one at a time, so
    two threads asking the same thing pay once."""

    def __init__(self, model: str, cache: CallCache, meter: CostMeter, transport: Transport, policy: CallPolicy,
                 redact: Callable[[Any], str]):
        self.model, self.cache, self.meter, self.transport = model, cache, meter, transport
        self.policy, self.redact = policy, redact
        self._locks_guard = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}

    def _key_lock(self, key: str) -> threading.Lock:
        with self._locks_guard:
            lock = self._key_locks.get(key)
            if lock is None:
                lock = self._key_locks[key] = threading.Lock()
            return lock

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

    def run(self, messages: list, params: dict, stage: str, parse: Callable[[str], Any] | None,
            tags: Mapping[str, Any] | None = None) -> Reply:
        """One request, cache first. Raises :class:`Stopped` when a stop came before anything was asked, and lets
        BudgetExceeded and LLMConfigError through."""
        if self.policy.json_mode:
            params = json_mode_params(params, getattr(parse, "json_schema", None))
        request = canonical_request(self.model, messages, params, tags)
        key = make_key(self.model, messages, params, tags)
        self.meter.record_request(stage)
        with self._key_lock(key):
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    value = parse_reply(parse, hit.get("response_text"))
                except MalformedReply as exc:
                    log.warning("stage %s: cached reply %s… no longer passes the parser (%s); asking again",
                                stage, key[:12], self.redact(exc.reason))
                else:
                    self.meter.record_hit(stage)
                    return Reply(key=key, status="ok", text=hit.get("response_text"), value=value, cached=True)
            if not self.policy.retry_failed:
                failed = self.cache.last_failure(key)
                if failed is not None:
                    self.meter.record_hit(stage)
                    self.meter.record_failure(stage)
                    return Reply(key=key, status="failed", text=failed.get("response_text"), cached=True,
                                 error=failed.get("error"))
            return self._ask(key, request, messages, params, stage, parse)

    def _ask(self, key: str, request: dict, messages: list, params: dict, stage: str,
             parse: Callable[[str], Any] | None) -> Reply:
        """The paid part of :meth:`run`: the transport's call, then the malformed-reply rounds."""
        rounds = self.policy.malformed_retries
        ask = messages
        repair_messages: list | None = None
        total_usage = {"prompt_tokens": 0, "completion_tokens": 0}
        total_cost, attempts, malformed = 0.0, 0, 0
        for round_no in range(rounds + 1):
            out = self.transport.call(ask, params, stage)
            if out.stopped:  # nothing (more) was asked: no record, the next run asks again
                raise Stopped()
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
                value = parse_reply(parse, out.text)
            except MalformedReply as exc:
                malformed += 1
                self.meter.record_malformed(stage)
                error = f"malformed reply: {exc.reason}"
                self._record(key, request, stage, "failed", out.text, out.usage, error,
                             attempts=out.attempts, finish_reason=out.finish_reason,
                             repair_messages=repair_messages, malformed_round=round_no + 1)
                if round_no == rounds:
                    self.meter.record_failure(stage)
                    log.warning("stage %s: request %s… failed after %d malformed replies: %s",
                                stage, key[:12], malformed, self.redact(exc.reason))
                    return Reply(key=key, status="failed", text=out.text, error=self.redact(error),
                                 usage=total_usage, cost_usd=total_cost, attempts=attempts, malformed=malformed)
                log.info("stage %s: malformed reply for %s… (%s); asking again (%d/%d)", stage, key[:12],
                         self.redact(exc.reason), round_no + 1, rounds)
                if self.policy.repair:
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
