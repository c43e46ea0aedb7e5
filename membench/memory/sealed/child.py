"""The sealed child: one memory system in a process of its own, behind a `Seal`, answering the parent's calls.

Started by `membench.memory.sealed.parent.SealedSystem` as `python -m membench.memory.sealed.child`. Frames on stdin and
the original stdout are pickled `(method, args)` calls and `("ok", value, records)` / `("error", exception,
records)` replies, where `records` are the log records the call emitted: the parent hands them to its own
handlers, so the rule's log reads as if the system ran in the job's process. The child's prints go to stderr. The system's class is imported before the seal goes on (its module-level imports
read the project's code); everything after, including its lazy imports, is inside the seal.
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import sys
from typing import Any, BinaryIO

from membench.memory.sealed.seal import Seal

WATCHED = {"open": 0, "os.listdir": 0, "os.scandir": 0, "sqlite3.connect": 0, "shutil.copyfile": 0}


def read_frame(stream: BinaryIO) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other side closed the pipe")
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))


def write_frame(stream: BinaryIO, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def install(seal: Seal, run: str) -> None:
    """Refuse, from now on, any watched access to a path the seal does not allow (audit hooks cannot be removed)."""
    def hook(event: str, args: tuple) -> None:
        if event in WATCHED and args:
            path = args[WATCHED[event]]
            if isinstance(path, (str, bytes, os.PathLike)) and path not in ("", ":memory:", b""):
                text = os.fsdecode(path)
                if not seal.allows(text):
                    raise PermissionError(f"sealed run {run!r} may not read {text}: a sealed memory system reads "
                                          "only the session logs it serves, its store and the embedding cache")

    sys.addaudithook(hook)


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


def _reply(status: str, value: Any, records: list[logging.LogRecord]) -> tuple[str, Any, list]:
    """The reply as it can cross the pipe: an exception that does not pickle is sent as its text."""
    try:
        pickle.dumps((status, value))
        return status, value, records
    except Exception as exc:  # noqa: BLE001 -- whatever fails to pickle
        text = f"{type(value).__name__}: {value}" if status == "error" else f"the reply does not pickle: {exc}"
        return "error", RuntimeError(text), records


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    init = read_frame(inp)
    import importlib

    collect = Collect()
    logging.getLogger().addHandler(collect)
    logging.getLogger().setLevel(init["level"])

    from membench.memory.protocol import MemoryContext

    module, qualname = init["cls"]
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    system = cls(**init["params"])
    install(init["seal"], init["run"])
    write_frame(out, _reply("ok", {"name": system.name, "granularities": tuple(system.granularities),
                             "uses_metadata": tuple(system.uses_metadata), "shares_sessions": system.shares_sessions,
                             "makes_model_calls": bool(system.makes_model_calls), "config": system.config(),
                             "ingests": system.ingests()}, collect.take()))
    while True:
        try:
            method, args = read_frame(inp)
        except EOFError:
            return
        try:
            if method == "open":
                fields, cache = args
                embedding_cache = None
                if cache is not None:
                    from membench.embedding.cache import shared_cache

                    embedding_cache = shared_cache(cache[0], **cache[1])
                value = system.open(MemoryContext(embedding_cache=embedding_cache, **fields))
            else:
                value = getattr(system, method)(*args)
                if method == "search":
                    value = list(value)
            status = "ok"
        except BaseException as exc:  # noqa: BLE001 -- every failure goes back to the parent
            status, value = "error", exc
        write_frame(out, _reply(status, value, collect.take()))


def main() -> None:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # the system's prints must not corrupt the frames
    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
