"""The run registry: every system a run can name, built-in or plugin, what its runs need, and the code behind it.

One table, `SYSTEMS`, names the built-in systems of both kinds: adapters (`membench.adapters`: ranked over a
whole haystack by rule rank) and memory systems (`membench.memory`: ingest, then search, by rule rank_memory);
each is imported only when a run asks for it (mem0 is an optional extra). A plugin is named `module:Class`.
What a run needs from the workflow is declared, not guessed: `run_needs(spec, params)` reads the class's `needs`
(see `membench.runs.needs`), and the workflow builds its DAG from those declarations.

`load_adapter(spec, params, context)` accepts a built-in adapter name or `module:Class`. A class that
subclasses `Adapter` is used directly; a class with the Procedural benchmark's `RetrievalSystem` interface
(`retrieve`, `get_system_name`, `get_system_info`) is wrapped by `RetrievalSystemAdapter`. After
construction, an adapter that has `bind_context(context)` receives the run context: an object or mapping
that may carry `embedding_cache` (an `EmbeddingCache`) or `embedding_cache_dir` (a directory), see
`membench.embedding.cache.cache_from_context`.

`adapter_source_files(spec)` lists the adapter's own module plus every project module it imports,
transitively (found by reading the import statements, not by running them): files under the `membench`
package and, for a plugin, under the plugin's own top-level package. Snakemake lists them as inputs so that
editing one adapter reruns exactly its rank -> score -> aggregate chain. `adapter_version(spec, params)`
hashes those files' bytes and the params.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Mapping

from membench.jobs.provenance import closure as _closure, file_bytes as _file_bytes, plugin_root as _plugin_root, spec_origin as _spec_origin, under as _under
from membench.adapters.base import Adapter
from membench.errors import AdapterLoadError
from membench.adapters.instance import adapter_instance, bound
from membench.adapters.retrieval_system import RetrievalSystemAdapter, is_retrieval_system
from membench.memory.protocol import is_memory_system
from membench.runs.needs import Needs, declared

# name -> (module, class): the built-in systems. Adapters first, then memory systems.
SYSTEMS: dict[str, tuple[str, str]] = {
    "bm25": ("membench.adapters.bm25", "BM25Adapter"),
    "bm25-upstream": ("membench.adapters.bm25_upstream", "BM25UpstreamAdapter"),
    "bm25-time": ("membench.adapters.bm25_time", "BM25TimeAdapter"),
    "bm25-v2": ("membench.adapters.bm25_v2", "BM25V2Adapter"),
    "dense": ("membench.adapters.dense", "DenseAdapter"),
    "hybrid": ("membench.adapters.hybrid", "HybridAdapter"),
    "substring": ("membench.adapters.substring", "SubstringAdapter"),
    "state-aware": ("membench.adapters.state_aware", "StateAwareAdapter"),
    "action-only": ("membench.adapters.action_only", "ActionOnlyAdapter"),
    "mem0": ("membench.memory.systems.mem0", "Mem0System"),
    "session-log": ("membench.memory.systems.session_log", "SessionLogSystem"),
    "mcp": ("membench.memory.systems.mcp", "McpMemorySystem"),
    "txtai": ("membench.memory.systems.txtai", "TxtaiSystem"),
    "langmem": ("membench.memory.systems.langmem", "LangMemSystem"),
    "llamaindex": ("membench.memory.systems.llamaindex", "LlamaIndexSystem"),
    "engram": ("membench.memory.systems.engram", "EngramSystem"),
    "chroma": ("membench.memory.systems.chroma", "ChromaSystem"),
    "a-mem": ("membench.memory.systems.amem", "AMemSystem"),
}


def builtin_class(name: str) -> type | None:
    """The built-in system class called `name` (imported now), or None."""
    if name not in SYSTEMS:
        return None
    module, cls = SYSTEMS[name]
    return getattr(importlib.import_module(module), cls)


def _adapter_names() -> list[str]:
    return [n for n, (module, _) in SYSTEMS.items() if module.startswith("membench.adapters.")]


def builtin_adapters() -> dict[str, type[Adapter]]:
    """The built-in adapters (not the memory systems, whose libraries are optional), name -> class."""
    return {n: builtin_class(n) for n in _adapter_names()}

_MEMBENCH_DIR = Path(__file__).resolve().parents[1]


def _builtins_hint() -> str:
    return "built-in adapters: " + ", ".join(_adapter_names()) + "; a plugin is named as module:Class"


def _split(spec: str) -> tuple[str, str]:
    module, _, qualname = spec.partition(":")
    if not module or not qualname:
        raise AdapterLoadError(f"unknown adapter {spec!r}: not a built-in and not of the form module:Class "
                               f"({_builtins_hint()})")
    return module, qualname


def _import(module_name: str):
    """Import a plugin module; when it is not on sys.path, look in the current directory too (a console
    script such as `membench validate` does not put the working directory on sys.path)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        cwd = str(Path.cwd())
        if exc.name != module_name.split(".")[0] or cwd in sys.path or "" in sys.path:
            raise
        sys.path.append(cwd)
        return importlib.import_module(module_name)


FACTS_SUFFIX = "+facts"


def facts_base(spec: str) -> str | None:
    """`bm25+facts` -> `bm25`: the adapter a fact-augmented spec wraps (None for other specs)."""
    return spec[: -len(FACTS_SUFFIX)] if spec.endswith(FACTS_SUFFIX) and len(spec) > len(FACTS_SUFFIX) else None


def resolve(spec: str) -> type:
    """The class a spec names (imports the plugin module)."""
    if spec in SYSTEMS:
        return builtin_class(spec)
    if facts_base(spec):
        from membench.adapters.facts import FactsAdapter

        return FactsAdapter
    module_name, qualname = _split(spec)
    try:
        module = _import(module_name)
    except Exception as exc:  # noqa: BLE001 -- any import failure is reported the same way
        raise AdapterLoadError(
            f"cannot import module {module_name!r} for adapter {spec!r}: {type(exc).__name__}: {exc}. "
            f"Is it on PYTHONPATH (run from the repository root, or install it)? ({_builtins_hint()})") from exc
    obj: Any = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise AdapterLoadError(f"module {module_name!r} has no class {qualname!r} (adapter {spec!r})")
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise AdapterLoadError(f"{spec!r} is a {type(obj).__name__}, not a class")
    return obj


def load_adapter(spec: str, params: Mapping[str, Any] | None = None, context: Any = None) -> Adapter:
    """An adapter instance for a built-in name or a `module:Class` plugin, configured with `params`."""
    cls = resolve(spec)
    params = dict(params or {})
    if facts_base(spec):
        return bound(cls(load_adapter(facts_base(spec), params, context), facts_base(spec)), context)
    if is_memory_system(cls) and not issubclass(cls, Adapter) and not is_retrieval_system(cls):
        raise AdapterLoadError(f"{spec!r} is a memory system (ingest, then search): it runs through "
                               "membench.memory.run, not as an adapter")
    return adapter_instance(cls, spec, params, context)


# -- source files and versions -------------------------------------------------------------------------

def _module_of(spec: str) -> str:
    return SYSTEMS[spec][0] if spec in SYSTEMS else _split(spec)[0]


def adapter_source_files(spec: str) -> list[Path]:
    """The adapter's own module file plus the project modules it imports, transitively (sorted).

    A `RetrievalSystem` plugin also depends on the wrapper module and what it imports. Parent package
    `__init__.py` files are included only when imported by name.
    """
    if facts_base(spec):
        own = _closure("membench.adapters.facts", [_MEMBENCH_DIR])
        return sorted(set(own) | set(adapter_source_files(facts_base(spec))))
    module_name = _module_of(spec)
    origin = _spec_origin(module_name)
    if origin is None:
        raise AdapterLoadError(f"cannot find the source file of module {module_name!r} for adapter {spec!r} "
                               f"({_builtins_hint()})")
    roots = [_MEMBENCH_DIR]
    if not _under(origin, _MEMBENCH_DIR):
        roots.append(_plugin_root(module_name, origin))
    files = _closure(module_name, roots)
    if spec not in SYSTEMS and not issubclass(resolve(spec), Adapter) and not is_memory_system(resolve(spec)):
        files += [f for f in _closure(RetrievalSystemAdapter.__module__, roots) if f not in files]
    return sorted(files)


def _display(path: Path) -> str:
    for root in (_MEMBENCH_DIR.parent, Path.cwd().resolve()):
        if _under(path, root):
            return path.relative_to(root).as_posix()
    return path.name


def adapter_version(spec: str, params: Mapping[str, Any] | None = None) -> str:
    """16 hex digits of sha256 over the adapter's source files (relative path + bytes) and its params."""
    digest = hashlib.sha256()
    for path in sorted(adapter_source_files(spec), key=_display):
        digest.update(_display(path).encode() + b"\0" + _file_bytes(path) + b"\0")
    digest.update(json.dumps(dict(params or {}), sort_keys=True, default=str).encode())
    return digest.hexdigest()[:16]


def run_needs(spec: str, params: Mapping[str, Any] | None = None) -> Needs:
    """What a run of `spec` needs from the workflow, as its class declares it. A fact-augmented run needs what its
    base needs and the fact logs; a memory system ingests the session logs, and makes model calls when the
    configured instance says so (`mem0-infer`)."""
    if facts_base(spec):
        return run_needs(facts_base(spec), params).with_(facts=True)
    cls = resolve(spec)
    needs = declared(cls, spec)
    if is_memory_system(cls):
        needs = needs.with_(session_logs=True, model_calls=bool(cls(**dict(params or {})).makes_model_calls))
    return needs
