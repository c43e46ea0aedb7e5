"""Which adapter runs exist and which (dataset, adapter) pairs the workflow builds.

An adapter runs on a dataset when one of its granularities is one the dataset is scored at (the
Procedural baselines rank trajectories only, so they never run on chat benchmarks).
"""

from __future__ import annotations

from typing import Any

from membench.adapters.base import Adapter
from membench.adapters.registry import resolve
from membench.adapters.retrieval_system import RetrievalSystemAdapter
from membench.datasets.registry import GRANULARITIES


def adapter_runs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Enabled adapter runs: run name -> {adapter: spec, params: {...}}."""
    runs = {}
    for name, spec in config["adapters"].items():
        if spec.get("enabled", True):
            runs[name] = {"adapter": spec.get("adapter") or name, "params": dict(spec.get("params") or {})}
    if config["baseline"] not in runs:
        raise ValueError(f"the baseline adapter {config['baseline']!r} is not among the enabled adapters "
                         f"({', '.join(runs)})")
    return runs


def granularities_of(spec: str) -> tuple[str, ...]:
    cls = resolve(spec)
    return tuple(cls.granularities if issubclass(cls, Adapter) else RetrievalSystemAdapter.granularities)


def runs_for(config: dict[str, Any], datasets: list[str], adapters: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    pairs = []
    for dataset in datasets:
        wanted = set(GRANULARITIES[config["datasets"][dataset]["kind"]])
        for name, run in adapters.items():
            if wanted & set(granularities_of(run["adapter"])):
                pairs.append((dataset, name))
    return pairs
