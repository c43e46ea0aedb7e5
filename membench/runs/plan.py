"""Which runs exist, what each needs, and which (dataset, run) pairs the workflow builds.

An adapter runs on a dataset when one of its granularities is one the dataset is scored at (the
Procedural baselines rank trajectories only, so they never run on chat benchmarks).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from membench.runs.ablation import ablation_runs
from membench.adapters.base import Adapter
from membench.adapters.retrieval_system import RetrievalSystemAdapter
from membench.benchmarks.record import Benchmark
from membench.benchmarks.registry import of_dataset
from membench.errors import InputError
from membench.memory.protocol import is_memory_system
from membench.qa.baselines import QA_BASELINES
from membench.runs.needs import Needs
from membench.runs.registry import facts_base, resolve, run_needs


def adapter_runs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Enabled adapter runs: run name -> {adapter: spec, params: {...}}. None enabled is an error: a run would
    end with an empty report."""
    runs = {}
    for name, key in QA_BASELINES.items():
        if name in config["adapters"]:
            raise InputError("config", f"the run name {name!r} is the QA baseline's (qa.{key}); name the run "
                             "otherwise", field=f"adapters.{name}")
    for name, spec in config["adapters"].items():
        if spec.get("enabled", True):
            runs[name] = {"adapter": spec.get("adapter") or name, "params": dict(spec.get("params") or {}),
                          "refs": spec.get("refs", "kept")}
    if not runs:
        raise InputError("config", "every adapter run is disabled (`enabled: false`): there is nothing to rank",
                         field="adapters")
    runs.update(ablation_runs(config))
    if config["facts"]["source"] != "none":
        for base in config["facts"]["adapters"]:
            if base not in runs:
                raise InputError("config", f"names {base!r}, which is not an enabled adapter run",
                                 field="facts.adapters")
            runs[f"{base}+facts"] = {"adapter": f"{runs[base]['adapter']}+facts", "params": runs[base]["params"],
                                     "refs": "kept"}
    if config["baseline"] not in runs:
        raise InputError("config", f"the baseline adapter {config['baseline']!r} is not among the enabled adapters "
                         f"({', '.join(runs)})", field="baseline")
    return runs


def needs_of_runs(runs: dict[str, dict[str, Any]]) -> dict[str, Needs]:
    """Run name -> what it needs from the workflow, as its system declares (membench.runs.needs); `refs: withheld`
    on a run that is not a memory system (its results are ranked items, not refs) is a config error."""
    needs = {name: run_needs(run["adapter"], run["params"]) for name, run in runs.items()}
    for name, run in runs.items():
        if run.get("refs", "kept") == "withheld" and not needs[name].session_logs:
            raise InputError("config", f"refs: withheld applies to memory systems only; {run['adapter']!r} is an "
                             "adapter (it ranks items, there are no refs to withhold)", field=f"adapters.{name}.refs")
    return needs


def granularities_of(spec: str) -> tuple[str, ...]:
    cls = resolve(spec)
    if issubclass(cls, Adapter) or is_memory_system(cls):
        return tuple(cls.granularities)
    return tuple(RetrievalSystemAdapter.granularities)


def facts_source(config: dict[str, Any], dataset: str) -> str | None:
    """Which fact logs a dataset gets: the benchmark's own observations (LoCoMo), model-extracted facts, or none."""
    source, record = config["facts"]["source"], of_dataset(config, dataset)
    if source == "observation" and record.observations:
        return "observation"
    if source == "llm" and record.facts:
        return "llm"
    return None


def runs_for(config: dict[str, Any], datasets: list[str], adapters: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(dataset, run) pairs: granularities must meet, and a fact-augmented run needs the dataset's facts. No
    pair at all is an error (every enabled run ranks a unit no enabled dataset is scored at)."""
    pairs = []
    for dataset in datasets:
        wanted = set(of_dataset(config, dataset).granularities)
        for name, run in adapters.items():
            if facts_base(run["adapter"]) and not facts_source(config, dataset):
                continue
            if wanted & set(granularities_of(run["adapter"])):
                pairs.append((dataset, name))
    if datasets and not pairs:
        raise InputError("config", f"none of the enabled adapter runs ({', '.join(adapters)}) ranks what the "
                         f"enabled datasets ({', '.join(datasets)}) are scored at: there is nothing to rank",
                         field="adapters")
    return pairs


def judged_runs(config: dict[str, Any], runs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(dataset, run) pairs whose top k the judge grades (benchmarks whose record says `judged`: Procedural)."""
    if not config["judge"]["enabled"]:
        return []
    chosen = set(config["judge"]["adapters"])
    return [(d, a) for d, a in runs
            if of_dataset(config, d).judged and (not chosen or a in chosen)]




def qa_runs(config: dict[str, Any], runs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(dataset, run) pairs answered in QA mode (benchmarks with QA rules: LongMemEval and LoCoMo)."""
    if not config["qa"]["enabled"]:
        return []
    chosen = set(config["qa"]["adapters"])
    return [(d, a) for d, a in runs
            if of_dataset(config, d).qa and a in chosen]


def baseline_runs(config: dict[str, Any], answered: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(dataset, baseline) for each dataset with QA runs and each QA baseline its `qa` section turns on
    (`full_context`, `no_memory`, `oracle`), answered beside the runs."""
    names = [name for name, key in QA_BASELINES.items() if config["qa"].get(key)]
    return [(d, name) for d in dict.fromkeys(d for d, _ in answered) for name in names]


SCOPE_JOIN = "+"  # joins dataset names into a scope name; never part of a name (config schema)


def requested_datasets(targets: Iterable[str], datasets: list[str]) -> list[str]:
    """The datasets that Snakemake targets need: those whose own folders (`results/<dataset>/...`) hold every
    target, or all `datasets` when a target lies elsewhere (the report, the summary, a rule's name) or none
    is given (the default target). Shared stages (the embed shards) then serve only these datasets, so a
    request for one dataset's files never parses another."""
    found = set()
    for target in targets:
        parts = Path(os.path.relpath(os.path.abspath(target))).parts
        if len(parts) < 3 or parts[0] != "results" or parts[1] not in datasets:
            return list(datasets)
        found.add(parts[1])
    return [d for d in datasets if d in found] or list(datasets)
