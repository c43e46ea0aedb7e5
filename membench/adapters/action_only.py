"""`action-only`: the Procedural Memory Benchmark's pure-action-sequence baseline (qpiai/Proced_mem_bench).

Each trajectory is embedded with all-MiniLM-L6-v2 from its actions alone, joined by " | " -- upstream's
`AgentInstructTrajectory.get_pure_action_sequence_text()` (procedural_memory_benchmark/agentinstruct/
corpus_loader.py), e.g. "go to diningtable 1 | take laptop 1 from diningtable 1 | go to bed 1". No task
description, no states. The query (a task description) is embedded as is; score = cosine (see `state-aware`
for how this relates to upstream's ChromaDB "similarity").
Granularity: "trajectory" only. Ties: haystack position, earliest first.
"""

from __future__ import annotations

from membench.adapters.dense import DenseAdapter
from membench.adapters.retrieval_system import trajectory_from_session
from membench.sessions.view import Document, Haystack


class ActionOnlyAdapter(DenseAdapter):
    """MiniLM over "action 1 | action 2 | ..." trajectory texts."""

    name = "action-only"
    granularities = ("trajectory",)

    def documents(self, haystack: Haystack, granularity: str) -> list[Document]:
        return [Document(s.session_id, trajectory_from_session(s).get_pure_action_sequence_text(),
                         s.session_id, s.timestamp, i) for i, s in enumerate(haystack.sessions)]
