"""One run of one system over one dataset: what a rank, rank_part or rank_memory job is asked to do.

The three rank stages take this one description (and the files to write) instead of a dozen loose arguments;
`from_job` reads it from the rule's job, once: the benchmark is the record the hand-off resolved
(`membench.runs.handoff`), the inputs one typed value (`StoreFiles`). Tests build it by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from membench.jobs.job import Job
from membench.benchmarks.record import Benchmark
from membench.sessions.reader import StoreFiles


@dataclass(frozen=True)
class RunRequest:
    name: str  # the run's name (its key under `adapters:` in the config)
    spec: str  # the system: a built-in name or `module:Class` (membench.runs.registry)
    params: Mapping[str, Any]
    benchmark: Benchmark  # the dataset's benchmark record
    depth: int  # how many items per question, where the benchmark does not rank in full
    store: StoreFiles  # the ingest stage's files: the gold-free view and the id maps
    embeddings: Path | None = None  # the embedding cache folder
    embedding_options: Mapping[str, Any] = field(default_factory=dict)
    facts: Path | None = None  # the fact logs a fact-augmented run reads

    def __post_init__(self):
        object.__setattr__(self, "store", StoreFiles.of(self.store))  # a folder or a mapping names them too

    @classmethod
    def from_job(cls, job: Job) -> "RunRequest":
        p = job.params
        facts = job.input.paths("facts") if "facts" in job.input else []
        return cls(name=job.wildcards.run, spec=p.spec, params=dict(p.adapter_params), benchmark=job.benchmark,
                   depth=p.depth, store=StoreFiles.of(job.input.files()), embeddings=Path(p.embeddings),
                   embedding_options=dict(p.embedding_options), facts=facts[0] if facts else None)

    def context(self) -> dict[str, Any]:
        """The run context an adapter's `bind_context` receives: the embedding cache folder and encoder options."""
        return {"embedding_cache_dir": self.embeddings, "embedding_options": dict(self.embedding_options)}


@dataclass(frozen=True)
class RunFiles:
    """Where a run's files go: the run as Parquet, as a TREC run file, and its metadata."""

    run: Path
    trec: Path
    meta: Path

    @classmethod
    def from_job(cls, job: Job) -> "RunFiles":
        return cls(job.output.path("run"), job.output.path("trec"), job.output.path("meta"))
