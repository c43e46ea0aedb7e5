"""Run-time plumbing shared by the model stages (facts, judge, qa, qa_calibration): client set-up, batching
with the stop rules, and the cost record.

Every model stage writes a **cost JSON** next to its outputs (:func:`write_cost`)::

    {"stage": "judge", "dataset": "procedural", "adapter": "bm25", "status": "complete" | "budget" |
     "interrupted" | "failed", "message": str | null, "model": "...", "base_url": "<no credentials>",
     "prompts": [{name, source, sha256}], "summary": <LLMClient.summary(): the CostMeter summary with per
     meter-stage counters (requests, calls, cache_hits, retries, malformed, failures, budget_stopped,
     prompt_tokens, completion_tokens, cost_usd), budget and spend>}

(:mod:`membench.report.costs` renders them.)

Stop rules (:func:`call_batch`): a :class:`~membench.llm.pricing.BudgetExceeded` or a SIGTERM / SIGINT
(:class:`~membench.llm.client.StopRequested`) ends the batch with the replies gathered so far, and a batch whose
failed calls exceed ``llm.max_failed_share`` counts as ``"failed"``; the stage writes what it has (unanswered
items get status ``"budget"`` / ``"interrupted"``), writes its cost JSON with that status (never
``"complete"``), and then raises :class:`StageStopped`, so the job exits non-zero with one clear line.
Everything paid for is in the call cache, so a rerun (with a higher budget) continues without repaying;
the partial outputs are not kept (Snakemake removes a failed job's outputs).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from membench.io import atomic_write_text
from membench.llm.pricing import BudgetExceeded
from membench.llm.section import from_config
from membench.llm.client import LLMClient, StopRequested

log = logging.getLogger(__name__)

__all__ = ["StageStopped", "call_batch", "make_client", "merged_summary", "write_cost", "failed_share_stop",
           "stop_note", "STATUS_BUDGET", "STATUS_INTERRUPTED", "STATUS_FAILED"]

STATUS_BUDGET = "budget"
STATUS_INTERRUPTED = "interrupted"
STATUS_FAILED = "failed"


class StageStopped(RuntimeError):
    """A model stage stopped early (budget, signal, too many failed calls) after writing what it had; the job
    must fail. Its message is complete in one line (:func:`membench.logs.log_to` prints no traceback)."""

    exit_quietly = True

    def __init__(self, stage: str, status: str, message: str):
        self.stage = stage
        self.status = status
        self.message = message
        super().__init__(f"{stage} stopped ({status}): {message}")


def stop_note(cache_path: str | os.PathLike) -> str:
    """What a stopped stage keeps (the call cache) and what it does not (its partial outputs)."""
    return (f"kept: every answered call, in the call cache {cache_path} (a rerun repays nothing); not kept: this "
            f"job's partial outputs (Snakemake removes the outputs of a failed job)")


def failed_share_stop(replies: Sequence[Any], max_share: float, stage: str) -> tuple[str | None, str | None]:
    """(``"failed"``, message) when more than ``max_share`` of the requests failed, else (None, None)."""
    failed = sum(1 for r in replies if r is not None and not r.ok)
    if not replies or failed <= max_share * len(replies):
        return None, None
    first = next(r.error for r in replies if r is not None and not r.ok)
    return STATUS_FAILED, (f"{failed} of {len(replies)} {stage} calls failed ({failed / len(replies):.1%}, above "
                           f"llm.max_failed_share {max_share:.1%}); first error: {first}")


def make_client(config: Mapping[str, Any], cache_path: str | os.PathLike, stage: str, **overrides) -> LLMClient:
    """The stage's client from the ``llm:`` section and its ``llm.stages.<stage>`` overrides."""
    return from_config(config, cache_path, stage=stage, **overrides)


def call_batch(client: LLMClient, requests: Sequence[Any], *, stage: str, parse=None, progress: bool = True,
               **params) -> tuple[list, str | None, str | None]:
    """``client.complete_many`` with the stop rules: returns (replies, stop status or None, message).

    ``replies[i]`` is ``None`` for a request that was not made (budget reached or stop requested). The status
    is ``"failed"`` when more than ``client.policy.max_failed_share`` of the requests failed.
    """
    if not requests:
        return [], None, None
    try:
        replies = client.complete_many(requests, stage=stage, parse=parse, progress=progress, **params)
        return (replies, *failed_share_stop(replies, client.policy.max_failed_share, stage))
    except BudgetExceeded as stop:
        return list(stop.results or [None] * len(requests)), STATUS_BUDGET, stop.message
    except StopRequested as stop:
        return list(stop.results or [None] * len(requests)), STATUS_INTERRUPTED, stop.message


def merged_summary(clients: Sequence[LLMClient]) -> dict:
    """One summary for a stage that used several clients (e.g. an answer and a verdict model).

    Meter stages are merged (their names differ per client); ``spent_usd`` is summed; ``total_usd`` is the
    largest total any client saw (each counts the cache's earlier spend as prior).
    """
    sums = [c.summary() for c in clients]
    if len(sums) == 1:
        return sums[0]
    stages: dict[str, dict] = {}
    for summ in sums:
        for name, st in summ.get("stages", {}).items():
            agg = stages.setdefault(name, {k: 0 for k in st})
            for k, v in st.items():
                agg[k] = agg.get(k, 0) + v
    return {"model": " / ".join(dict.fromkeys(str(s.get("model")) for s in sums)),
            "base_url": sums[0].get("base_url"), "budget_usd": sums[0].get("budget_usd"),
            "spent_usd": round(sum(s.get("spent_usd", 0.0) for s in sums), 6),
            "prior_usd": sums[0].get("prior_usd", 0.0),
            "total_usd": max(s.get("total_usd", 0.0) for s in sums),
            "budget_reached": any(s.get("budget_reached") for s in sums),
            "stages": stages, "clients": sums}


def write_cost(path: str | os.PathLike | None, client: LLMClient | Sequence[LLMClient], *, stage: str,
               dataset: str | None, adapter: str | None, status: str = "complete", message: str | None = None,
               prompts: Iterable[Mapping[str, str]] = (), extra: Mapping[str, Any] | None = None) -> dict:
    """Write (atomically) and return the stage's cost record; ``path`` None only returns it."""
    clients = [client] if isinstance(client, LLMClient) else list(client)
    summary = merged_summary(clients)
    record = {"stage": stage, "dataset": dataset, "adapter": adapter, "status": status, "message": message,
              "model": summary.get("model"), "base_url": summary.get("base_url"), "prompts": list(prompts),
              "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "summary": summary}
    if extra:
        record.update(extra)
    if path is not None:
        atomic_write_text(Path(path), json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
    return record
