"""The frames between a sealed child and its parent: length-prefixed pickles, read with an allow-list on the parent.

The parent's calls are trusted (it wrote them). The child's replies are not: an unpickled object may name any
callable (`os.system`, `builtins.exec`) and the parent, which holds the gold, would run it. `read_reply`
therefore resolves only the classes a reply is made of -- plain containers and numbers, a `Hit`, a log record,
an exception of Python's or membench's, a path, a numpy scalar -- and refuses any other name with the run's name
and the refused class.
"""

from __future__ import annotations

import builtins
import importlib
import io
import pickle
import struct
from typing import Any, BinaryIO

_BUILTIN_VALUES = {"set", "frozenset", "list", "dict", "tuple", "str", "bytes", "bytearray", "int", "float",
                   "complex", "bool", "object", "slice", "range"}
_ALLOWED = {("copyreg", "_reconstructor"), ("logging", "LogRecord"), ("pathlib", "PosixPath"),
            ("pathlib", "PurePosixPath"), ("collections", "OrderedDict"), ("collections", "Counter"),
            ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar")}
_MEMBENCH_CLASSES = {("membench.memory.protocol", "Hit")}


class RefusedReply(pickle.UnpicklingError):
    """A sealed process sent back an object that names a class outside the allow-list."""


def read_frame(stream: BinaryIO) -> bytes:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other side closed the pipe")
    (size,) = struct.unpack("<Q", head)
    return stream.read(size)


def read_call(stream: BinaryIO) -> Any:
    """A call from the parent (trusted: the parent wrote it)."""
    return pickle.loads(read_frame(stream))


def write_frame(stream: BinaryIO, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def allowed_class(module: str, name: str) -> Any:
    """The class a reply may name, or None."""
    if module == "builtins":
        value = getattr(builtins, name, None)
        if name in _BUILTIN_VALUES or (isinstance(value, type) and issubclass(value, BaseException)):
            return value
        return None
    if (module, name) in _ALLOWED or (module, name) in _MEMBENCH_CLASSES:
        return getattr(importlib.import_module(module), name)
    if module == "membench" or module.startswith("membench."):
        value = getattr(importlib.import_module(module), name, None)
        if isinstance(value, type) and issubclass(value, BaseException):
            return value
    return None


class _ReplyUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, run: str):
        super().__init__(io.BytesIO(data))
        self.run = run

    def find_class(self, module: str, name: str) -> Any:
        found = allowed_class(module, name)
        if found is None:
            raise RefusedReply(f"sealed run {self.run!r} sent back an object naming {module}.{name}, which a reply "
                               "may not hold (membench.memory.sealed.frames): the reply was not read")
        return found


def reply_bytes(data: bytes, run: str) -> Any:
    """A pickled reply, read with the allow-list (the child checks its own replies with it before sending)."""
    return _ReplyUnpickler(data, run).load()


def read_reply(stream: BinaryIO, run: str) -> Any:
    """A reply from the sealed child, read with the allow-list."""
    return reply_bytes(read_frame(stream), run)
