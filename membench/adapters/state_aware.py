"""`state-aware`: the Procedural Memory Benchmark's published baseline (qpiai/Proced_mem_bench).

Each trajectory is embedded with all-MiniLM-L6-v2 from the text upstream builds in
`AgentInstructTrajectory.get_embedding_text()` (procedural_memory_benchmark/agentinstruct/corpus_loader.py):

    Task: <task description>
    Steps:
    1. State: <state> -> Action: <action>
    2. State: ...

(one line per step, 1-based step ids, the whole text stripped), and the query text is embedded as is.
Score = cosine. Upstream stores the vectors in ChromaDB (default L2 space) and reports
`max(0, 1 - distance)`; with unit vectors the squared L2 distance is 2 - 2*cos, so its order equals the
cosine order used here (up to HNSW's approximation), while its reported "similarity" is max(0, 2*cos - 1).
Granularity: "trajectory" only. Ties: haystack position, earliest first.
"""

from __future__ import annotations

from membench.adapters.dense import DenseAdapter
from membench.adapters.retrieval_system import trajectory_from_session
from membench.sessions.view import Document, Haystack


class StateAwareAdapter(DenseAdapter):
    """MiniLM over "Task: ...\\nSteps:\\n<i>. State: <s> -> Action: <a>" trajectory texts."""

    name = "state-aware"
    granularities = ("trajectory",)

    def documents(self, haystack: Haystack, granularity: str) -> list[Document]:
        return [Document(s.session_id, trajectory_from_session(s).get_embedding_text(), s.session_id,
                         s.timestamp, i) for i, s in enumerate(haystack.sessions)]
