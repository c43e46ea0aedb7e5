"""An adapter class made into a configured adapter: what the rank stage and a sealed adapter's process both do."""

from __future__ import annotations

from typing import Any, Mapping

from membench.adapters.base import Adapter
from membench.adapters.retrieval_system import RetrievalSystemAdapter, is_retrieval_system
from membench.errors import AdapterLoadError


def adapter_instance(cls: type, spec: str, params: Mapping[str, Any], context: Any = None) -> Adapter:
    """`cls` with `params`: an Adapter as it is, a RetrievalSystem wrapped; then bound to `context` if it asks."""
    if issubclass(cls, Adapter):
        adapter = cls(**params)
    elif is_retrieval_system(cls):
        adapter = RetrievalSystemAdapter(cls, spec, **params)
    else:
        raise AdapterLoadError(
            f"{spec!r} is neither an Adapter subclass (membench.adapters.base.Adapter) nor a RetrievalSystem "
            "(methods retrieve(query, k), get_system_name(), get_system_info())")
    return bound(adapter, context)


def bound(adapter: Adapter, context: Any) -> Adapter:
    """The adapter given the run's context (its embedding cache, ...) where it has `bind_context`."""
    bind = getattr(adapter, "bind_context", None)
    if context is not None and callable(bind):
        bind(context)
    return adapter
