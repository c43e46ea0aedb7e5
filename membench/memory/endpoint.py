"""A caching OpenAI-compatible endpoint on 127.0.0.1 that a third-party memory library is pointed at.

A library such as mem0 makes its own model calls with its own client. Pointing its `base_url` here sends
every chat completion through membench's `LLMClient`: the call cache (a rerun pays nothing twice), the
retries, the budget and the cost meter. The reply is shaped as an OpenAI chat completion; `usage` is what
this run paid (zero for a cache hit). The model is membench's configured one, whatever name the library
sends. Streaming is not offered. `stage` names the meter stage the next calls are counted under
(e.g. ingest vs search); `stopped` holds the budget message once the budget has run out.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from membench.llm.client import LLMClient
from membench.llm.errors import LLMConfigError
from membench.llm.pricing import BudgetExceeded

_NOT_PARAMS = {"model", "messages", "stream", "stream_options", "n", "user", "store", "metadata"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - keep the job log quiet
        pass

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str) -> None:
        self._send(status, {"error": {"message": message, "type": kind}})

    def do_POST(self):  # noqa: N802
        endpoint: CachingEndpoint = self.server.endpoint  # type: ignore[attr-defined]
        if self.path.split("?", 1)[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._error(404, f"only chat completions are served here, not {self.path}", "not_found")
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            return self._error(400, "body must be a JSON object with 'messages'", "invalid_request_error")
        if body.get("stream"):
            return self._error(400, "streaming is not offered by membench's caching endpoint", "invalid_request_error")
        params = {k: v for k, v in body.items() if k not in _NOT_PARAMS}
        try:
            reply = endpoint.client.complete(messages, stage=endpoint.stage, **params)
        except BudgetExceeded as stop:
            endpoint.stopped = stop.message
            return self._error(402, stop.message, "budget_exceeded")
        except LLMConfigError as exc:
            endpoint.stopped = str(exc)
            return self._error(401, str(exc), "configuration_error")
        if not reply.ok:
            return self._error(502, f"upstream call failed: {reply.error}", "upstream_error")
        usage = dict(reply.usage)
        self._send(200, {
            "id": f"membench-{reply.key[:16]}", "object": "chat.completion", "created": int(time.time()),
            "model": endpoint.client.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply.text}}],
            "usage": {**usage, "total_tokens": sum(usage.values())},
        })


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's pick), for a server that starts a moment later."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class CachingEndpoint:
    """Start with `with CachingEndpoint(client) as ep:`; `ep.url` is the base_url (`http://127.0.0.1:<port>/v1`)."""

    def __init__(self, client: LLMClient, stage: str = "memory", port: int = 0):
        self.client = client
        self.stage = stage
        self.port = port  # 0: any free one; a sealed system is told its port before the endpoint starts
        self.stopped: str | None = None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "CachingEndpoint":
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        self._server.daemon_threads = True
        self._server.endpoint = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="membench-llm-endpoint", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def calls(self) -> int:
        """Paid calls made through this endpoint's client so far (cache hits excluded)."""
        return int(self.client.meter.paid_calls)
