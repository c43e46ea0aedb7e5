"""A small, real OpenAI-compatible HTTP server for tests and offline end-to-end runs.

It speaks just enough of the OpenAI API for ``membench.llm``:

* ``POST /v1/chat/completions`` -> a ``chat.completion`` object
* ``GET  /v1/models``           -> a model list
* ``GET  /_stats``              -> request counters (total, per content hash, per task); never auth values

In a test::

    from openai_server import FakeOpenAIServer
    with FakeOpenAIServer() as server:          # 127.0.0.1, free port, own thread
        client = LLMClient(model="fake-model", base_url=server.url, ...)
        server.add_fault("429", times=2)          # the next 2 requests get HTTP 429
        ...
        assert server.total == 3

or use the ``fake_server`` pytest fixture defined below (import it into the test module).

As a separate process (CI, Snakemake end-to-end runs)::

    python tests/openai_server.py [--host 127.0.0.1] [--port 0] [--script faults.json]
                                  [--url-file PATH] [--delay SECONDS] [--usage P C]

prints ``MEMBENCH_FAKE_LLM_URL=http://127.0.0.1:<port>/v1`` on its first stdout line (and writes the bare
url to ``--url-file`` if given), then serves until SIGINT/SIGTERM. ``--script`` is a JSON file::

    {"faults": [{"kind": "429", "times": 2},
                {"kind": "malformed", "match": "TASK: grade", "times": 1}],
     "delay": 0.0, "usage": [10, 5]}

Responder protocol (the default, deterministic responder)
---------------------------------------------------------
The prompt names its task with a line ``TASK: <name>`` in any message (system or user; the first such
line wins). The *input text* is whatever follows the first ``INPUT:`` marker in a user message (rest of
that line plus all following lines); without an ``INPUT:`` marker it is the first user message with its
``TASK:`` lines removed. Follow-up messages (e.g. a client's repair request) do not change the input.

=========  ==================================================================================
TASK       reply content (a string; JSON replies are compact ``json.dumps`` output)
=========  ==================================================================================
facts      If the input has numbered turn lines ``[n] <speaker>: <text>`` (lines that follow one without a
           number continue its text): ``{"facts": [{"fact": "<sentence>", "turns": [n]}, ...]}`` --
           each turn's text (the ``<speaker>:`` prefix removed) split into sentences, one fact per
           sentence with the number of its turn, in input order, at most 20. Otherwise
           ``{"facts": ["<sentence 1>", ...]}`` -- the input split into sentences at ``.``/``!``/``?``
           followed by whitespace, and at newlines; stripped, empties dropped, at most 20.
grade      ``{"score": <int 0..10>, "reason": "fake grade <8 hex>"}`` -- score =
           int(sha256(input)) % 11.
answer     plain text, not JSON: the first sentence of the input, at most 20 words.
verdict    ``{"correct": <bool>}`` -- if the input has lines ``GOLD: <text>`` and ``ANSWER: <text>``
           (the answer runs to the end of the input or to the next ``QUESTION:/TYPE:/GOLD:`` line):
           with a line ``TYPE: unanswerable``, correct = the answer declines (contains one of
           ``DECLINE_PHRASES``, case-insensitive); else correct = the case/space/punctuation-normalised
           gold text is contained in the normalised answer. Without GOLD/ANSWER lines, correct = the
           first byte of sha256(input) is even.
(none)     plain text ``fake reply <8 hex of sha256(input)>``.
=========  ==================================================================================

Usage: ``prompt_tokens`` = number of whitespace-separated words over all message contents,
``completion_tokens`` = words in the reply (minimum 1), unless fixed with ``usage=(p, c)``.

Faults (``add_fault(kind, times=1, match=None, ...)``; each request takes the first fault whose ``match``
substring occurs in the request body's message contents, or any request when ``match`` is None):

* ``"429"``        HTTP 429 with ``Retry-After: 0`` (override with ``retry_after=``)
* ``"500"``        HTTP 500 (``echo_auth=True`` puts the received Authorization header in the error body,
                   to test that clients redact keys echoed back by a server)
* ``"503"``        HTTP 503
* ``"401"``        HTTP 401 invalid key (``echo_auth=True`` echoes the received Authorization header)
* ``"hang"``       wait ``hang_seconds`` (default 3 s, released early on server stop) before answering
* ``"malformed"``  HTTP 200, a valid completion whose content is prose, not the JSON that was asked for
* ``"broken_body"`` HTTP 200 with ``Content-Type: application/json`` and a truncated, unparsable body
* ``"disconnect"`` close the connection without any response

The server records every Authorization header it saw in ``server.auth_headers`` (memory only; never
written anywhere or served) so tests can check that keys are sent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

DEFAULT_MODEL = "fake-model"
FAULT_KINDS = ("429", "500", "503", "401", "hang", "malformed", "broken_body", "disconnect")

Responder = Callable[[dict], str]

# --------------------------------------------------------------------------- responder


_TASK_RE = re.compile(r"^\s*TASK:\s*([A-Za-z_-]+)\s*$", re.MULTILINE)
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_TURN_LINE = re.compile(r"^\s*\[(\d+)\]\s?(.*)$")
_SPEAKER = re.compile(r"^[^:\n]{1,40}:\s+")
_FIELD = re.compile(r"^\s*(QUESTION|TYPE|GOLD|ANSWER):\s?(.*)$")
DECLINE_PHRASES = ("not mentioned", "no information", "not available", "don't know", "do not know",
                   "cannot be answered", "can't be answered", "unanswerable", "not enough information",
                   "does not say", "doesn't say", "not specified")


def _content_text(content: Any) -> str:
    """Message content may be a string or a list of parts ({type: text, text: ...})."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def request_hash(body: dict) -> str:
    """Content hash of a request: sha256 of the canonical JSON of the whole body."""
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def prompt_task(body: dict) -> str | None:
    """The ``TASK: <name>`` marker of a request (first one over all messages), lower-cased."""
    for msg in body.get("messages") or []:
        m = _TASK_RE.search(_content_text(msg.get("content")))
        if m:
            return m.group(1).lower()
    return None


def prompt_input(body: dict) -> str:
    """The input text of a request (see module docstring)."""
    users = [_content_text(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user"]
    for text in users:
        idx = text.find("INPUT:")
        if idx >= 0:
            return text[idx + len("INPUT:"):].strip()
    if not users:
        return ""
    return _TASK_RE.sub("", users[0]).strip()


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT_SPLIT.split(text) if s.strip()]


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def numbered_turns(text: str) -> list[tuple[int, str]]:
    """``[n] speaker: text`` lines of an input (continuation lines joined), speaker prefix removed."""
    turns: list[tuple[int, list[str]]] = []
    for line in text.splitlines():
        m = _TURN_LINE.match(line)
        if m:
            turns.append((int(m.group(1)), [_SPEAKER.sub("", m.group(2), count=1)]))
        elif turns:
            turns[-1][1].append(line)
    return [(n, "\n".join(parts)) for n, parts in turns]


def fake_facts(text: str) -> dict:
    """The facts reply of the default responder (see the module docstring)."""
    turns = numbered_turns(text)
    if not turns:
        return {"facts": _sentences(text)[:20]}
    facts = [{"fact": s, "turns": [n]} for n, body in turns for s in _sentences(body)]
    return {"facts": facts[:20]}


def verdict_fields(text: str) -> dict[str, str]:
    """QUESTION/TYPE/GOLD/ANSWER fields of a verdict input; a field runs until the next field line."""
    fields: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _FIELD.match(line)
        if m and m.group(1) not in fields:
            current = m.group(1)
            fields[current] = [m.group(2)]
        elif current is not None:
            fields[current].append(line)
    return {k: "\n".join(v).strip() for k, v in fields.items()}


def fake_verdict(text: str) -> bool | None:
    """The verdict of the default responder, or None when the input has no GOLD and ANSWER fields."""
    fields = verdict_fields(text)
    if "GOLD" not in fields or "ANSWER" not in fields:
        return None
    answer = fields["ANSWER"]
    if fields.get("TYPE", "").strip().lower() == "unanswerable":
        return any(p in answer.lower() for p in DECLINE_PHRASES)
    return _norm(fields["GOLD"]) in _norm(answer)


def default_responder(body: dict) -> str:
    """Deterministic replies keyed on the prompt's ``TASK:`` marker (see module docstring)."""
    task = prompt_task(body)
    text = prompt_input(body)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if task == "facts":
        return json.dumps(fake_facts(text))
    if task == "grade":
        return json.dumps({"score": int(digest, 16) % 11, "reason": f"fake grade {digest[:8]}"})
    if task == "answer":
        first = (_sentences(text) or [""])[0]
        return " ".join(first.split()[:20])
    if task == "verdict":
        correct = fake_verdict(text)
        if correct is None:
            correct = int(digest[:2], 16) % 2 == 0
        return json.dumps({"correct": correct})
    return f"fake reply {digest[:8]}"


# --------------------------------------------------------------------------- faults


@dataclass
class Fault:
    kind: str
    times: int = 1
    match: str | None = None
    retry_after: str | None = "0"
    hang_seconds: float = 3.0
    echo_auth: bool = False

    def __post_init__(self):
        self.kind = str(self.kind)
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {', '.join(FAULT_KINDS)}")


def _words(text: str) -> int:
    return len(text.split())


# --------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    server_version = "membench-fake-openai/1.0"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - keep the test output quiet
        pass

    @property
    def fake(self) -> "FakeOpenAIServer":
        return self.server.fake  # type: ignore[attr-defined]

    def _send_json(self, status: int, payload: Any, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "membench-fake"}
                for m in self.fake.models]})
        elif path == "/_stats":
            self._send_json(200, self.fake.stats())
        else:
            self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def do_POST(self):  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw.decode("utf-8"))
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("body must be an object with a 'messages' list")
        except ValueError as exc:
            self._send_json(400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}})
            return
        auth = self.headers.get("Authorization")
        fault = self.fake._record_and_pick_fault(body, auth)
        try:
            if self.fake.delay:
                time.sleep(self.fake.delay)
            if fault is not None and self._apply_fault(fault, body, auth):
                return
            self._answer(body, malformed=False)
        finally:
            with self.fake._lock:
                self.fake._in_flight -= 1

    def _apply_fault(self, fault: Fault, body: dict, auth: str | None) -> bool:
        """Apply a fault; True if the response has been fully handled."""
        kind = fault.kind
        if kind == "429":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            self._send_json(429, {"error": {"message": "rate limited (injected)", "type": "rate_limit_error"}},
                            headers)
            return True
        if kind in ("500", "503", "401"):
            msg = "invalid API key (injected)" if kind == "401" else "server error (injected)"
            if fault.echo_auth:
                msg += f"; you sent Authorization: {auth}"
            self._send_json(int(kind), {"error": {"message": msg, "type": "server_error"}})
            return True
        if kind == "hang":
            self.fake._stop.wait(fault.hang_seconds)
            try:
                self._answer(body, malformed=False)
            except OSError:  # the client gave up and closed the socket
                pass
            return True
        if kind == "malformed":
            self._answer(body, malformed=True)
            return True
        if kind == "broken_body":
            data = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return True
        if kind == "disconnect":
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return True
        return False

    def _answer(self, body: dict, malformed: bool) -> None:
        fake = self.fake
        if malformed:
            content = "Sure! Here is what you asked for, but not in the format you wanted."
        else:
            content = fake.responder(body)
        prompt_words = sum(_words(_content_text(m.get("content"))) for m in body["messages"])
        if fake.usage is not None:
            p_tok, c_tok = fake.usage
        else:
            p_tok, c_tok = prompt_words, max(1, _words(content))
        with fake._lock:
            fake._serial += 1
            serial = fake._serial
            fake.answered += 1
        payload = {
            "id": f"chatcmpl-fake-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": p_tok, "completion_tokens": c_tok, "total_tokens": p_tok + c_tok},
        }
        self._send_json(200, payload)


class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 in a background thread.

    Attributes: ``url`` (``http://127.0.0.1:<port>/v1``), ``port``, ``total`` (requests to
    /v1/chat/completions), ``answered`` (completions sent), ``by_hash`` (Counter: request_hash -> count),
    ``by_task`` (Counter), ``max_in_flight`` (most completions requests handled at once), ``requests`` (list of request bodies, in arrival order), ``auth_headers``
    (list of Authorization values seen; memory only).
    """

    def __init__(self, responder: Responder | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 usage: tuple[int, int] | None = None, delay: float = 0.0,
                 models: tuple[str, ...] = (DEFAULT_MODEL,)):
        self.responder: Responder = responder or default_responder
        self.host = host
        self.requested_port = port
        self.usage = tuple(usage) if usage is not None else None
        self.delay = delay
        self.models = models
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._faults: list[Fault] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.reset_stats()

    # -- lifecycle
    def start(self) -> "FakeOpenAIServer":
        httpd = ThreadingHTTPServer((self.host, self.requested_port), _Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        httpd.fake = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._stop.clear()
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # releases hanging handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- faults
    def add_fault(self, kind: str, times: int = 1, match: str | None = None, **options) -> Fault:
        fault = Fault(kind=str(kind), times=times, match=match, **options)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def load_script(self, script: dict) -> None:
        """Apply a JSON script: {"faults": [...], "delay": s, "usage": [p, c]}."""
        for f in script.get("faults", []):
            self.add_fault(**f)
        if "delay" in script:
            self.delay = float(script["delay"])
        if script.get("usage") is not None:
            self.usage = tuple(int(x) for x in script["usage"])

    # -- counters
    def reset_stats(self) -> None:
        with self._lock:
            self.total = 0
            self.answered = 0
            self._serial = 0
            self.by_hash: Counter = Counter()
            self.by_task: Counter = Counter()
            self.requests: list[dict] = []
            self.auth_headers: list[str | None] = []
            self.faults_applied: Counter = Counter()
            self._in_flight = 0
            self.max_in_flight = 0

    def stats(self) -> dict:
        with self._lock:
            return {"total": self.total, "answered": self.answered, "by_hash": dict(self.by_hash),
                    "by_task": dict(self.by_task), "faults_applied": dict(self.faults_applied),
                    "auth_present": sum(1 for a in self.auth_headers if a),
                    "max_in_flight": self.max_in_flight,
                    "faults_pending": [{"kind": f.kind, "times": f.times, "match": f.match}
                                       for f in self._faults if f.times > 0]}

    def _record_and_pick_fault(self, body: dict, auth: str | None) -> Fault | None:
        text = "\n".join(_content_text(m.get("content")) for m in body.get("messages") or [])
        with self._lock:
            self.total += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self.by_hash[request_hash(body)] += 1
            self.by_task[prompt_task(body) or "-"] += 1
            self.requests.append(body)
            self.auth_headers.append(auth)
            for fault in self._faults:
                if fault.times > 0 and (fault.match is None or fault.match in text):
                    fault.times -= 1
                    self.faults_applied[fault.kind] += 1
                    return fault
        return None


# --------------------------------------------------------------------------- pytest fixture

try:  # the CLI must work without pytest installed
    import pytest
except ImportError:  # pragma: no cover
    pytest = None

if pytest is not None:
    @pytest.fixture
    def fake_server():
        """A started FakeOpenAIServer with the default responder; stopped after the test."""
        with FakeOpenAIServer() as server:
            yield server


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="OpenAI-compatible fake server for membench tests")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = pick a free port (default)")
    ap.add_argument("--script", help="JSON file: {faults: [...], delay: s, usage: [p, c]}")
    ap.add_argument("--url-file", help="also write the base url to this file once listening")
    ap.add_argument("--delay", type=float, default=None, help="seconds to wait before each completion")
    ap.add_argument("--usage", type=int, nargs=2, metavar=("PROMPT", "COMPLETION"),
                    help="fixed token usage reported for every completion")
    args = ap.parse_args(argv)

    server = FakeOpenAIServer(host=args.host, port=args.port)
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            server.load_script(json.load(fh))
    if args.delay is not None:
        server.delay = args.delay
    if args.usage:
        server.usage = tuple(args.usage)
    server.start()
    if args.url_file:
        with open(args.url_file + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(server.url + "\n")
        import os
        os.replace(args.url_file + ".tmp", args.url_file)
    print(f"MEMBENCH_FAKE_LLM_URL={server.url}", flush=True)

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
