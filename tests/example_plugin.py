"""Worked example plugins: run with `PYTHONPATH=. membench validate tests.example_plugin:WordOverlap`.

`WordOverlap` is written for the Procedural Memory Benchmark's RetrievalSystem interface; membench wraps it
unchanged, handing it the haystack's trajectories. `TaskWords` is the same idea as a native membench Adapter.
"""

from membench.adapters.base import Adapter


class WordOverlap:
    """Share of the query's words that appear in a trajectory's task description."""

    def __init__(self, trajectories):
        self.trajectories = list(trajectories)

    def retrieve(self, query, k=5):
        words = set(query.lower().split())
        scored = [(len(words & set(t.task_description.lower().split())) / max(len(words), 1), t)
                  for t in self.trajectories]
        scored.sort(key=lambda pair: -pair[0])  # stable: ties keep corpus order
        return [{"task_instance_id": t.task_instance_id, "similarity": s} for s, t in scored[:k]]

    def get_system_name(self):
        return "word_overlap"

    def get_system_info(self):
        return {"method": "keyword_overlap", "corpus_size": len(self.trajectories)}


class TaskWords(Adapter):
    """The same overlap as a native adapter: score = query words found in the document (any granularity)."""

    name = "task-words"

    def score(self, query, documents):
        words = set(query.text.lower().split())
        return [float(len(words & set(d.text.lower().split()))) for d in documents]
