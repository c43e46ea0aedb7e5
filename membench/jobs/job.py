"""The one hand-off from a rule to its stage.

A rule's script does one thing: `run_stage(snakemake, <stage>)` (membench.runs.handoff). `Job.from_snakemake` reads the Snakemake object
into a typed description (named inputs and outputs, params, wildcards, the log file, the threads), and the stage
function takes that one argument; the stage logs to the rule's log through `membench.logs.log_to`. Built-in
adapters, memory systems and the model-call stages are wired the same way, so a stage runs without Snakemake too:
build a `Job` by hand (tests do).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from membench.logs import log_to



class Named(Mapping[str, Any]):
    """A rule's named inputs, outputs, params or wildcards: by name (`job.input.run`, `job.params["kind"]`);
    files as Snakemake gives them (a path string, or a list of them), with `path` / `paths` for Path objects."""

    def __init__(self, named: Mapping[str, Any], every: Sequence[Any] = ()):
        self._named = dict(named)
        self.every = list(every)  # every entry, named or not, in order (`output[0]` of an unnamed output)

    def __getitem__(self, name: str) -> Any:
        return self._named[name]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_named"][name]
        except KeyError:
            raise AttributeError(f"no entry named {name!r} (has {', '.join(self._named) or 'none'})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._named)

    def __len__(self) -> int:
        return len(self._named)

    def path(self, name: str) -> Path:
        value = self._named[name]
        if not isinstance(value, str | Path):
            raise TypeError(f"{name!r} holds {len(value)} files, not one")
        return Path(value)

    def paths(self, name: str) -> list[Path]:
        value = self._named[name]
        return [Path(value)] if isinstance(value, str | Path) else [Path(v) for v in value]

    def files(self) -> dict[str, Any]:
        """name -> path string or list of them: the form the stages' table lookups take."""
        return {k: v if isinstance(v, str | Path) else list(v) for k, v in self._named.items()}


@dataclass(frozen=True)
class Job:
    """What one job of a rule hands its stage."""

    input: Named = field(default_factory=lambda: Named({}))
    output: Named = field(default_factory=lambda: Named({}))
    params: Named = field(default_factory=lambda: Named({}))
    wildcards: Named = field(default_factory=lambda: Named({}))
    log: Path | None = None
    threads: int = 1
    # the benchmark records its params name, resolved once by the hand-off (membench.runs.handoff): `kind` ->
    # `benchmark` (a membench.benchmarks.record.Benchmark), `kinds` (dataset -> kind) -> `benchmarks`
    benchmark: Any = None
    benchmarks: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_snakemake(cls, smk: Any) -> "Job":
        def named(namedlist: Any) -> Named:
            return Named(dict(namedlist.items()), list(namedlist))

        return cls(input=named(smk.input), output=named(smk.output), params=named(smk.params),
                   wildcards=named(smk.wildcards), log=Path(smk.log[0]) if len(smk.log) else None,
                   threads=int(smk.threads))


def run_stage(smk: Any, stage: Callable[[Job], Any], file_only: Sequence[str] = ()) -> Any:
    """The whole of the script of a rule that names no benchmark: the job, read once, handed to its stage, which
    logs to the rule's log. (A rule whose params name one runs `membench.runs.handoff.run_stage`.)"""
    job = Job.from_snakemake(smk)
    with log_to(job.log, file_only=file_only):
        return stage(job)
