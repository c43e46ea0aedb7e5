"""The sealed child: one memory system or adapter in a process of its own, behind a `Seal`, answering the parent.

Started by `membench.memory.sealed.process.SealedProcess` as `python -m membench.memory.sealed.child`. Frames
(`membench.memory.sealed.frames`) on stdin and the original stdout are `(method, args)` calls and
`("ok", value, records)` / `("error", exception, records)` replies, where `records` are the log records the call
emitted: the parent hands them to its own handlers, so the rule's log reads as if the system ran in the job's
process. The child's prints go to stderr.

The seal goes on first, before the plugin's module is imported or its class built: nothing the plugin runs, at
import or later, is outside it. Only the module's location is looked up before (no code of it runs), so a plugin
that is one file can be loaded without listing its folder.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import logging
import os
import pickle
import sys
import tempfile
from typing import Any

from membench.memory.sealed.frames import allowed_class, read_call, reply_bytes, write_frame
from membench.memory.sealed.seal import Seal

WATCHED = {"open": 0, "os.listdir": 0, "os.scandir": 0, "sqlite3.connect": 0, "shutil.copyfile": 0}


def install(seal: Seal, run: str) -> None:
    """Refuse, from now on, any watched access to a path the seal does not allow (audit hooks cannot be removed)."""
    def hook(event: str, args: tuple) -> None:
        if event in WATCHED and args:
            path = args[WATCHED[event]]
            if isinstance(path, (str, bytes, os.PathLike)) and path not in ("", ":memory:", b""):
                text = os.fsdecode(path)
                if not seal.allows(text):
                    raise PermissionError(f"sealed run {run!r} may not read {text}: a sealed system reads only the "
                                          "session logs it serves, its store and the embedding cache")

    sys.addaudithook(hook)


def put_on(seal: Seal, run: str, abi: int, private: str | None) -> None:
    """The seal, for good: the kernel's Landlock ruleset (with a private temporary and home folder), then the audit
    hook, whose refusals name the run (under Landlock it is the first, clearer message, not what holds)."""
    if seal.kind == "landlock":
        os.environ.update(TMPDIR=private, HOME=private, XDG_CACHE_HOME=os.path.join(private, ".cache"))
        tempfile.tempdir = private
        seal.kernel_ruleset().restrict(abi)
    install(seal, run)


class Collect(logging.Handler):
    """Keeps the records a call emits, reduced to what pickles (the message formatted, the traceback as text)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args = record.getMessage(), None
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        self.records.append(record)

    def take(self) -> list[logging.LogRecord]:
        taken, self.records = self.records, []
        return taken


def _sendable(exc: BaseException) -> BaseException:
    """An exception the parent's allow-list reads: Python's and membench's as they are, others as their text."""
    cls = type(exc)
    if allowed_class(cls.__module__, cls.__qualname__) is cls:
        return exc
    return RuntimeError(f"{cls.__module__}.{cls.__qualname__}: {exc}")


def _reply(status: str, value: Any, records: list[logging.LogRecord]) -> tuple[str, Any, list]:
    """The reply as it can cross the pipe: an exception that does not pickle, or holds an object the parent's
    allow-list refuses (a library's exception in its args), is sent as its text."""
    if status == "error":
        value = _sendable(value)
    try:
        reply_bytes(pickle.dumps((status, value)), "")
        return status, value, records
    except Exception as exc:  # noqa: BLE001 -- whatever fails to pickle or to be read back
        text = f"{type(value).__name__}: {value}" if status == "error" else f"the reply does not pickle: {exc}"
        return "error", RuntimeError(text), records


def located(module: str) -> Any:
    """The module's spec, found without running any of its code (a dotted module is imported after the seal)."""
    if "." in module:
        return None
    return importlib.machinery.PathFinder.find_spec(module)


def load_class(module: str, qualname: str, spec: Any) -> Any:
    if spec is not None and module not in sys.modules:
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[module] = loaded
        spec.loader.exec_module(loaded)
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls


def describe(system: Any, role: str) -> dict[str, Any]:
    """What the parent's stand-in needs to know of the system."""
    common = {"name": system.name, "granularities": tuple(system.granularities),
              "uses_metadata": tuple(system.uses_metadata), "config": system.config()}
    if role == "adapter":
        return {**common, "needs": frozenset(system.needs)}
    return {**common, "shares_sessions": system.shares_sessions, "makes_model_calls": bool(system.makes_model_calls),
            "ingests": system.ingests()}


class Calls:
    """The calls a system or adapter answers; `open` builds the memory context, `rank` keeps the last haystack."""

    def __init__(self, init: dict[str, Any]):
        self.init, self.haystack, self.system = init, None, None

    def build(self, module: str, qualname: str, spec: Any) -> Any:
        """The system (its class with its params) or the adapter (as the rank stage loads one, with the context
        whose embedding cache this process may use)."""
        cls = load_class(module, qualname, spec)
        if self.init["role"] != "adapter":
            return cls(**self.init["params"])
        from membench.adapters.instance import adapter_instance

        context = self.init["context"]
        cache = self.cache((context.get("embedding_cache_dir"), context.get("embedding_options") or {}))
        return adapter_instance(cls, self.init["spec"], self.init["params"], {**context, "embedding_cache": cache})

    def open(self, fields: dict[str, Any], cache: tuple | None) -> Any:
        from membench.memory.protocol import MemoryContext

        return self.system.open(MemoryContext(embedding_cache=self.cache(cache), **fields))

    def cache(self, cache: tuple | None) -> Any:
        """The embedding cache: the shared one where the seal lets the system write it, else read it and write
        new vectors to a folder of the system's own (Landlock: no writes outside its store)."""
        if cache is None:
            return None
        from membench.embedding.cache import shared_cache

        folder, options = cache
        overlay = self.init.get("embedding_overlay")
        if self.init["role"] == "adapter" and self.init.get("private"):
            overlay = os.path.join(self.init["private"], "embeddings")
        if overlay and folder:
            return shared_cache(overlay, also_read=(str(folder),), **options)
        return shared_cache(folder, **options)

    def rank(self, query: Any, haystack: Any, granularity: str, k: int) -> list[tuple[str, float]]:
        if haystack is not None:
            self.haystack = haystack
        return [(str(item), float(score)) for item, score in self.system.rank(query, self.haystack, granularity, k)]

    def call(self, method: str, args: tuple) -> Any:
        if method in ("open", "rank"):
            return getattr(self, method)(*args)
        value = getattr(self.system, method)(*args)
        return list(value) if method == "search" else value


def serve(inp, out) -> None:
    init = read_call(inp)
    module, qualname = init["cls"]
    spec = located(module)
    put_on(init["seal"], init["run"], init["abi"], init.get("private"))
    collect = Collect()
    logging.getLogger().addHandler(collect)
    logging.getLogger().setLevel(init["level"])
    calls = Calls(init)
    try:
        calls.system = calls.build(module, qualname, spec)
        status, value = "ok", describe(calls.system, init["role"])
    except BaseException as exc:  # noqa: BLE001 -- the parent reports it
        status, value = "error", exc
    write_frame(out, _reply(status, value, collect.take()))
    if calls.system is None:
        return
    while True:
        try:
            method, args = read_call(inp)
        except EOFError:
            return
        try:
            status, value = "ok", calls.call(method, args)
        except BaseException as exc:  # noqa: BLE001 -- every failure goes back to the parent
            status, value = "error", exc
        write_frame(out, _reply(status, value, collect.take()))


def main() -> None:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # the system's prints must not corrupt the frames
    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
