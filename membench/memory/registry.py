"""Memory-system names: built-ins (imported lazily, so mem0 is needed only when a mem0 run is asked for)."""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from membench.memory.protocol import MemorySystem

BUILTINS = {
    "mem0": ("membench.memory.mem0_system", "Mem0System"),
    "session-log": ("membench.memory.session_log", "SessionLogSystem"),
}


def builtin_class(spec: str) -> type[MemorySystem] | None:
    """The built-in memory-system class named `spec`, or None."""
    if spec not in BUILTINS:
        return None
    module, name = BUILTINS[spec]
    return getattr(importlib.import_module(module), name)


def is_memory_system(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, MemorySystem)


def load_memory_system(cls: type[MemorySystem], params: Mapping[str, Any] | None) -> MemorySystem:
    return cls(**dict(params or {}))
