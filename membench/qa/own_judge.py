"""A benchmark's own judge (`Qa.judge`, :class:`membench.benchmarks.record.Judge`) run over a QA stage's answers.

Each answered question's judging is a generator that yields the calls it needs next and is sent their parsed
replies. The questions advance together, round by round: a round asks every question's pending calls in one batch per
reply parser (through the client, so through its call cache: a call asked before, by this run or an earlier one, is
not paid again), then hands each question its replies. A question whose later calls depend on earlier replies (BEAM's
event-ordering alignment: one equivalence question after another until a match) asks them in later rounds, so it
pays for exactly the calls its protocol makes.

A failed call (after the client's retries and malformed-reply rounds) fails its question, which gets no score. A
budget stop or a signal ends the rounds: questions not finished get that status. More failed calls over the whole
judging than ``llm.max_failed_share`` make the stage fail, as for the other batches.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from membench.benchmarks.record import Judge, Judged, JudgeRun
from membench.llm.client import LLMClient
from membench.llm.stage_calls import STATUS_BUDGET, STATUS_INTERRUPTED, call_batch, failed_share_stop

__all__ = ["Outcome", "run_judge", "fold_judged", "metric_columns", "STAGE"]

STAGE = "qa-judge"  # the meter stage of the judge's calls (its client is the QA verdict client)


@dataclass(frozen=True)
class Outcome:
    """How one question's judging ended: ``ok`` with its `Judged`, or failed / budget / interrupted."""

    status: str
    judged: Judged | None = None
    error: str | None = None


def metric_columns(judge: Judge | None) -> dict[str, str]:
    """metric -> its column in the QA table (the metric without its ``qa/`` prefix)."""
    return {m: m.split("/", 1)[-1] for m in (judge.metrics if judge else ())}


def run_judge(runs: Mapping[int, JudgeRun], client: LLMClient, params: Mapping[str, Any], *,
              progress: bool = True) -> tuple[dict[int, Outcome], str | None, str | None]:
    """Drive ``runs`` (row -> its question's judging) to their ends (module docstring): (row -> outcome, the stop
    status or None, its message)."""
    outcomes: dict[int, Outcome] = {}
    pending: dict[int, list] = {}
    made: list = []
    stop = message = None

    def advance(row: int, values: list | None) -> None:
        run = runs[row]
        try:
            calls = next(run) if values is None else run.send(values)
        except StopIteration as done:
            outcomes[row] = Outcome("ok", done.value)
            return
        if not calls:
            raise ValueError(f"a judge yielded no call for row {row}")
        pending[row] = list(calls)

    for row in runs:
        advance(row, None)
    first = True
    while pending and stop is None:
        asked = [(row, n, call) for row, calls in pending.items() for n, call in enumerate(calls)]
        groups: dict[Callable, list] = {}
        for entry in asked:
            groups.setdefault(entry[2].parse, []).append(entry)
        replies: dict[tuple[int, int], Any] = {}
        for parse, members in groups.items():
            requests = [{"messages": list(call.messages), "tags": dict(call.tags), **{**call.params, **params}}
                        for _, _, call in members]
            got, status, note = call_batch(client, requests, stage=STAGE, parse=parse, progress=progress and first)
            made += [r for r in got if r is not None]
            replies.update({(row, n): r for (row, n, _), r in zip(members, got)})
            if status in (STATUS_BUDGET, STATUS_INTERRUPTED):
                stop, message = status, note
                break
        first = False
        for row in list(pending):
            got = [replies.get((row, n)) for n in range(len(pending[row]))]
            if any(r is None for r in got):
                continue  # not asked: the stop below ends it
            del pending[row]
            failed = next((r for r in got if not r.ok), None)
            if failed is not None:
                runs[row].close()
                outcomes[row] = Outcome("failed", error=failed.error)
            else:
                advance(row, [r.value for r in got])
    for row in pending:
        runs[row].close()
        outcomes[row] = Outcome(stop or "failed")
    if stop is None:
        stop, message = failed_share_stop(made, client.policy.max_failed_share, STAGE)
    return outcomes, stop, message


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def fold_judged(rows: list[dict], judge: Judge, todo: Sequence[int], outcomes: Mapping[int, Outcome],
                stop: str | None, model: str | None) -> None:
    """Write the judge's columns of ``rows`` (the questions at ``todo``): its status, its metrics, its detail; and,
    for a question no generic verdict judged, the verdict columns from the judge's own verdict where it gives one."""
    columns = metric_columns(judge)
    for i in todo:
        row = rows[i]
        outcome = outcomes.get(i) or Outcome(stop or "failed")
        row["judge_status"] = outcome.status
        generic = row.get("verdict_by") is not None or row.get("verdict_status") is not None
        if outcome.status == "ok":
            judged = outcome.judged
            for metric, column in columns.items():
                value = judged.scores.get(metric)
                row[column] = math.nan if value is None else float(value)
            row["judge_detail"] = _json(dict(judged.detail))
            if not generic:
                row.update(verdict_by="llm", verdict_model=model or None, rubric=judge.name, verdict_status="ok",
                           status=row["status"] or "ok")
                if judged.correct is not None:
                    row.update(correct=bool(judged.correct), correct_upstream=bool(judged.correct),
                               verdicts="1" if judged.correct else "0")
        else:
            row["error"] = row.get("error") or outcome.error
            if not generic:
                row.update(verdict_by="llm", verdict_model=model or None, rubric=judge.name,
                           verdict_status=outcome.status)
        if outcome.status != "ok" and row.get("status") in (None, "ok"):
            row["status"] = outcome.status
