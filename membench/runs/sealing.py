"""Where a run's seal comes from: what its system or adapter may read, and which adapters run sealed.

A memory system always runs sealed when `memory_sealed` is on; among adapters only third-party ones
(`module:Class`): built-in adapters are membench's own code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple, Sequence

import membench
from membench.jobs.job import Job
from membench.jobs.provenance import plugin_root
from membench.memory.sealed.adapter import SealedAdapter
from membench.memory.sealed.seal import Seal, seal_kind
from membench.runs.registry import facts_base, load_adapter, resolve
from membench.runs.request import RunRequest


def seal_for(request: RunRequest, cls: type, store_root: Path | None, gold: Sequence[Path] = (),
             kind: str = "landlock", sessions: bool = True) -> Seal:
    """What the sealed system may read: its dataset's session logs (`sessions`), its store, the embedding cache,
    membench's and its own code; refused: the dataset's results folder, the working directory and `gold` (the
    benchmark's files). `kind`: the seal that holds it (membench.memory.sealed.seal)."""
    logs = request.store.sessions
    origin = Path(sys.modules[cls.__module__].__file__)
    code = [Path(membench.__file__).parent, plugin_root(cls.__module__, origin)]
    code += cls.sealed_reads(request.params) if sessions else []  # a memory system's server
    return Seal.for_run(logs if sessions else None, Path(store_root) if store_root else None, request.embeddings,
                        code, [logs.parent, Path.cwd(), *gold], kind)


class SealRequest(NamedTuple):
    """The config's `memory_sealed`, the benchmark's files (refused too) and `memory_call_timeout`."""

    sealed: bool | str = False
    gold: tuple[Path, ...] = ()
    timeout: float | None = None

    @classmethod
    def from_job(cls, job: Job) -> "SealRequest":
        p = job.params
        return cls(p.sealed, (Path(p.data),), p.sealed_timeout)


def open_adapter(request: RunRequest, sealed: bool | str = False, gold: Sequence[Path] = (),
                 timeout: float | None = None):
    """The run's adapter: a third-party one in a sealed process of its own when `sealed` (the config's
    `memory_sealed`) is on, else loaded here. Call `shutdown()` on it when done, if it has one."""
    kind = seal_kind(sealed)
    if kind and ":" in request.spec and not facts_base(request.spec):
        cls = resolve(request.spec)
        seal = seal_for(request, cls, None, gold, kind, sessions=False)
        return SealedAdapter(request.name, request.spec, cls, request.params, seal, request.context(), timeout)
    return load_adapter(request.spec, request.params, request.context())
