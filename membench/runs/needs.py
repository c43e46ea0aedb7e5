"""What a run needs from the workflow, declared by the system's class rather than guessed from its imports.

A class sets `needs` to a set of these names (`membench.adapters.base.Adapter.needs`,
`membench.memory.protocol.MemorySystem.needs`):

- `embeddings`: the embed stage embeds the run's texts before it ranks (rule rank waits for it);
- `session_logs`: the system ingests the session logs, then searches (rule rank_memory runs it);
- `model_calls`: it calls a model through membench's caching endpoint (a cost record, the model-call table);
- `facts`: it ranks over fact logs (the facts stage runs first).

The workflow (`workflow/rules/common.smk`) reads `membench.runs.registry.run_needs` for each enabled run.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from membench.errors import AdapterLoadError


@dataclass(frozen=True)
class Needs:
    embeddings: bool = False
    session_logs: bool = False
    model_calls: bool = False
    facts: bool = False

    def with_(self, **more: bool) -> "Needs":
        """These needs plus `more` (a need once set stays set)."""
        return replace(self, **{k: getattr(self, k) or v for k, v in more.items()})


NAMES = tuple(f.name for f in fields(Needs))


def declared(cls: Any, spec: str) -> Needs:
    """The needs `cls` declares (none when it declares nothing: a `RetrievalSystem` plugin). An unknown name is
    an error naming the run's system: a misspelt need would otherwise leave a stage out of the DAG."""
    names = getattr(cls, "needs", ())
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise AdapterLoadError(f"{spec!r} declares `needs` = {names!r}: expected a set of names from "
                               f"{', '.join(NAMES)}")
    unknown = sorted(set(names) - set(NAMES))
    if unknown:
        raise AdapterLoadError(f"{spec!r} declares unknown needs {unknown} (known: {', '.join(NAMES)})")
    return Needs(**{n: True for n in names})
