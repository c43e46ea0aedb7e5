"""Which verdicts a QA run asks for, and how the replies become a question's verdict columns.

For every answered question that a model judges:

- ``judge_samples`` requests against the gold answer (sample 0 is the verdict; samples 1.. re-ask the
  same prompt under their own cache keys, to measure how stable the verdict is), and
- when a gold-label erratum changed or withdrew the gold answer, one more request against the upstream
  answer, so the report can give the figure with and without errata.

Columns filled per question: ``correct`` (sample 0), ``verdicts`` (one character per sample: ``1`` correct,
``0`` not, ``-`` no verdict), ``correct_upstream`` (the verdict against the upstream gold; equal to
``correct`` when no erratum touched the question), ``verdict_status``, ``status``, ``error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from membench.llm.prompts import Prompt
from membench.benchmarks.record import Benchmark
from membench.qa.verdict import gold_for, rubric_version, verdict_request, verdict_type

__all__ = ["VerdictJob", "verdict_jobs", "fold_verdicts", "upstream_gold", "EXCLUDED"]

EXCLUDED = "excluded"  # status of a question whose gold an erratum withdrew: answered, not scored


@dataclass(frozen=True)
class VerdictJob:
    row: int  # index into the rows list
    against: str  # "gold" | "upstream"
    sample: int
    request: dict


def upstream_gold(question: Mapping[str, Any]) -> str | None:
    """The benchmark's own answer when an erratum replaced or withdrew it, else None."""
    up = question.get("upstream_answer")
    if up is None or (not isinstance(up, str) and pd.isna(up)):
        return None
    return " ".join(str(up).split())


def verdict_jobs(record: Benchmark, prompt: Prompt, todo: Sequence[tuple[int, Mapping[str, Any], str]],
                 samples: int) -> list[VerdictJob]:
    """Verdict requests for ``todo`` = (row index, question, answer) triples (see the module docstring)."""
    jobs = []
    for row, q, answer in todo:
        vtype = verdict_type(record, q)
        gold, upstream = gold_for(q), upstream_gold(q)
        if gold is not None:
            jobs += [VerdictJob(row, "gold", s, verdict_request(prompt, record, q["question"], vtype, gold, answer, s))
                     for s in range(samples)]
        if upstream is not None and upstream != gold:
            jobs.append(VerdictJob(row, "upstream", 0, verdict_request(prompt, record, q["question"], vtype, upstream,
                                                                       answer)))
    return jobs


def _mark(reply) -> str:
    if reply is None or not reply.ok:
        return "-"
    return "1" if reply.value else "0"


def fold_verdicts(rows: list[dict], record: Benchmark, questions: Sequence[Mapping[str, Any]], jobs: Sequence[VerdictJob],
                  replies: Sequence[Any], stop: str | None, samples: int, model: str) -> None:
    """Write the verdict columns of ``rows`` from the replies of ``jobs`` (``None`` = not made: ``stop``)."""
    by_row: dict[int, dict[tuple[str, int], Any]] = {}
    for job, reply in zip(jobs, replies):
        by_row.setdefault(job.row, {})[(job.against, job.sample)] = reply
    for i, got in by_row.items():
        row, q = rows[i], questions[i]
        row.update(verdict_model=model or None, verdict_by="llm", rubric=rubric_version(record, verdict_type(record, q)))
        up = got.get(("upstream", 0))
        if up is not None and up.ok:
            row["correct_upstream"] = bool(up.value)
        if gold_for(q) is None:  # an erratum withdrew the gold: answered and judged against upstream only
            row.update(verdict_status=EXCLUDED, status=EXCLUDED)
            continue
        row["verdicts"] = "".join(_mark(got.get(("gold", s))) for s in range(samples))
        first = got.get(("gold", 0))
        if first is None:
            row["verdict_status"] = row["status"] = stop or "failed"
        elif not first.ok:
            row.update(verdict_status="failed", status="failed", error=first.error)
        else:
            row.update(correct=bool(first.value), verdict_status="ok", status="ok")
            if upstream_gold(q) is None:
                row["correct_upstream"] = row["correct"]
