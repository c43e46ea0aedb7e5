"""Run systems written for the Procedural Memory Benchmark's `RetrievalSystem` interface, unchanged.

Upstream (qpiai/Proced_mem_bench, procedural_memory_benchmark/benchmark/retrieval_interface.py) asks for three
methods: `retrieve(query: str, k: int = 5)` returning results best first (upstream returns
`RetrievedTrajectory` objects with `task_instance_id` and `similarity_score`; their `to_dict()` form has
`similarity`), `get_system_name() -> str` and `get_system_info() -> dict`.

Upstream systems load the benchmark corpus themselves. membench instead hands the system the haystack it
must search, rebuilt from the gold-free session view as upstream-shaped trajectories (`Trajectory`: opaque
session id as `task_instance_id`, `task_description`, `state_action_pairs` of {step_id, state, action},
`total_steps`, and the same helper methods as upstream's `AgentInstructTrajectory`). The system receives it
either as a constructor argument named `trajectories` (or `corpus`), or through an `index(trajectories)`
method called after construction with the configured params. The system is built once per distinct
haystack (all Procedural queries share one 336-trajectory haystack) and kept in a small LRU.

Results map back to item ids by `task_instance_id` (else `trajectory_id`), scores from `similarity_score`
(else `similarity`, else `score`); (id, score) pairs are accepted too. The system's own order is kept;
within a run of equal scores, items are put in haystack order (the project tie rule). At most k items are
returned; an id outside the haystack is an error.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from membench.adapters.base import Adapter
from membench.sessions.view import Document, Haystack, Query, Session
from membench.adapters.text import HaystackCache


def state_aware_text(task_description: str, pairs: Sequence[Mapping[str, Any]]) -> str:
    """Upstream `get_embedding_text()`: "Task: <d>\\nSteps:\\n<i>. State: <s> -> Action: <a>..." stripped."""
    lines = [f"Task: {task_description}", "Steps:"]
    lines += [f"{p['step_id']}. State: {p['state']} -> Action: {p['action']}" for p in pairs]
    return "\n".join(lines).strip()


def action_only_text(pairs: Sequence[Mapping[str, Any]]) -> str:
    """Upstream `get_pure_action_sequence_text()`: the actions joined by " | "."""
    return " | ".join(p["action"] for p in pairs)


@dataclass(frozen=True)
class Trajectory:
    """An upstream-shaped trajectory, readable as attributes (`t.task_description`) or keys (`t["..."]`)."""

    task_instance_id: str
    task_description: str
    state_action_pairs: list[dict[str, Any]] = field(default_factory=list)
    total_steps: int = 0
    source: str = "membench"

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self.__dataclass_fields__ else default

    def keys(self):
        return self.__dataclass_fields__.keys()

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def get_embedding_text(self) -> str:
        return state_aware_text(self.task_description, self.state_action_pairs)

    def get_action_sequence(self) -> list[str]:
        return [p["action"] for p in self.state_action_pairs]

    def get_pure_action_sequence_text(self) -> str:
        return action_only_text(self.state_action_pairs)


def trajectory_from_session(session: Session) -> Trajectory:
    """Rebuild a trajectory from its session log: the `task` event's text, then each `step` event in order
    (step ids 1, 2, ... as in the upstream corpus)."""
    task = next((e.text for e in session.events if e.kind == "task"), "")
    steps = [e for e in session.events if e.kind == "step"]
    pairs = [{"step_id": i, "state": e.state or "", "action": e.action or ""} for i, e in enumerate(steps, 1)]
    return Trajectory(session.session_id, task, pairs, len(pairs))


def is_retrieval_system(obj: Any) -> bool:
    """Has the three methods of the upstream `RetrievalSystem` interface."""
    return all(callable(getattr(obj, m, None)) for m in ("retrieve", "get_system_name", "get_system_info"))


def _result(item: Any) -> tuple[Any, Any]:
    if isinstance(item, Mapping):
        ident = item.get("task_instance_id") or item.get("trajectory_id")
        score = next((item[k] for k in ("similarity_score", "similarity", "score") if k in item), None)
    elif isinstance(item, (tuple, list)) and len(item) == 2:
        ident, score = item
    else:
        ident = getattr(item, "task_instance_id", None) or getattr(item, "trajectory_id", None)
        score = next((getattr(item, k) for k in ("similarity_score", "similarity", "score") if hasattr(item, k)),
                     None)
    return ident, score


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class RetrievalSystemAdapter(Adapter):
    """Adapter around a `RetrievalSystem`-style class; params go to the system's constructor."""

    name = "retrieval-system"
    granularities = ("trajectory",)

    def __init__(self, system: type, spec: str | None = None, **params: Any):
        super().__init__(**params)
        if not is_retrieval_system(system):
            raise TypeError(f"{system!r} lacks the RetrievalSystem methods retrieve, get_system_name, "
                            "get_system_info")
        self.system_class = system
        self.spec = spec or f"{system.__module__}:{system.__qualname__}"
        self._systems: HaystackCache[Any] = HaystackCache(maxsize=2)
        self._last_system: Any = None

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"system": self.spec, "params": _jsonable(dict(self.params))}
        if self._last_system is not None:
            out["system_name"] = str(self._last_system.get_system_name())
            out["system_info"] = _jsonable(self._last_system.get_system_info())
        return out

    def _construct(self, trajectories: list[Trajectory]) -> Any:
        cls = self.system_class
        try:
            accepted = inspect.signature(cls).parameters
        except (TypeError, ValueError):
            accepted = {}
        for arg in ("trajectories", "corpus"):
            if arg in accepted:
                return cls(**{arg: trajectories}, **self.params)
        if callable(getattr(cls, "index", None)):
            system = cls(**self.params)
            system.index(trajectories)
            return system
        raise TypeError(
            f"{self.spec}: membench cannot hand this system the haystack to search. Give its constructor a "
            "`trajectories` argument or add an `index(trajectories)` method (systems that load the upstream "
            "corpus by themselves cannot run on membench's gold-free view).")

    def system_for(self, haystack: Haystack) -> tuple[Any, list[Document]]:
        """The system indexed on this haystack (built once per distinct haystack) and its documents."""
        trajectories = [trajectory_from_session(s) for s in haystack.sessions]
        documents = [Document(t.task_instance_id, t.get_embedding_text(), s.session_id, s.timestamp, i)
                     for i, (t, s) in enumerate(zip(trajectories, haystack.sessions))]
        system = self._systems.get(documents, build=lambda _docs: self._construct(trajectories))
        self._last_system = system
        return system, documents

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        if granularity not in self.granularities:
            raise ValueError(f"{self.spec} (a RetrievalSystem) ranks trajectories only, not {granularity!r}")
        if k <= 0 or not haystack.sessions:
            return []
        system, documents = self.system_for(haystack)
        position = {d.item_id: d.position for d in documents}
        ranked: list[tuple[str, float]] = []
        for item in system.retrieve(query.text, min(k, len(documents))):
            ident, score = _result(item)
            if ident is None or score is None:
                raise ValueError(f"{self.spec}.retrieve() returned {item!r}: expected a task_instance_id and a "
                                 "similarity_score (or similarity)")
            ident = str(ident)
            if ident not in position:
                raise ValueError(f"{self.spec}.retrieve() returned id {ident!r}, which is not a trajectory of "
                                 "the haystack it was given")
            if ident not in {i for i, _ in ranked}:
                ranked.append((ident, float(score)))
        ranked = ranked[:k]
        # the project tie rule inside each run of equal scores, without overriding the system's order
        out: list[tuple[str, float]] = []
        start = 0
        while start < len(ranked):
            end = start
            while end < len(ranked) and ranked[end][1] == ranked[start][1]:
                end += 1
            out += sorted(ranked[start:end], key=lambda p: position[p[0]])
            start = end
        return out
