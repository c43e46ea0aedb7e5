"""facts stage: atomic facts for every distinct session of a LongMemEval or LoCoMo dataset.

``run`` asks the model once per distinct session log (``results/{dataset}/sessions/<key>/events.jsonl``;
a session shared by many questions is one call, and an identical session elsewhere is a cache hit) and
writes ``<out_dir>/<session_key>.jsonl`` fact logs plus ``<out_dir>/manifest.json``. ``observations``
writes LoCoMo's own observation facts in the same format with zero calls. ``SessionStore(<dataset folder or
its ingest files>, facts_dir=out_dir)`` then serves the facts to the fact-augmented adapters (``adapters/facts.py``).

Config (``facts:`` section; defaults in ``membench/config.schema.yaml``, keys explained in
``config.yaml``): ``max_turn_chars`` (a longer turn is cut in the prompt) and ``params`` (request parameters of
every facts call).

A session whose reply stays malformed (after the client's repair re-ask) or whose call fails gets no fact
log and is listed under ``failed_sessions``; when more than ``llm.max_failed_share`` of the calls fail, the
stage fails. A budget stop, SIGTERM/SIGINT or that failed share writes the fact logs gathered so far and a
manifest with ``status`` "budget"/"interrupted"/"failed", then raises
:class:`~membench.llm.stage_calls.StageStopped` (non-zero exit); a rerun continues from the call cache.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from membench.config import config_section
from membench.benchmarks.record import Benchmark
from membench.benchmarks.registry import supporting
from membench.datasets.tables import dataset_files, needed
from membench.errors import InputError
from membench.facts.extract import (facts_parser, facts_request, fact_records, load_session, render_session,
                                    session_keys, write_fact_log)
from membench.facts.observations import write_observations
from membench.io import atomic_write_text
from membench.llm.prompts import load_prompt
from membench.sessions.reader import StorePaths, store_files
from membench.llm.stage_calls import StageStopped, call_batch, make_client, stop_note, write_cost
from membench.jobs.job import Job

log = logging.getLogger(__name__)

__all__ = ["run", "observations"]


def run(record: Benchmark, store_paths: StorePaths, out_dir: Path, config: Mapping[str, Any],
        cache_path: Path, cost_path: Path | None = None, *, dataset: str | None = None, progress: bool = True,
        base_dir: Path | None = None, **client_overrides) -> dict:
    """Extract facts for every distinct session log (``store_paths``: the session logs folder as
    ``{"sessions": path}``, or the dataset folder); returns the manifest.

    Raises StageStopped (after writing everything gathered) on a budget stop or SIGTERM.
    """
    sessions_dir, = needed(store_files(store_paths), "sessions")
    if not record.facts:
        raise InputError(sessions_dir, f"the facts stage covers {', '.join(supporting('facts'))} sessions, "
                                      f"not {record.kind!r} (its benchmark record has no facts)")
    out_dir = Path(out_dir)
    opts = config_section(config, "facts")
    prompt = load_prompt("facts", config, base_dir)
    keys = session_keys(sessions_dir)
    if not keys:
        raise InputError(sessions_dir, "no session logs (rerun the ingest rule)")
    sessions = [render_session(k, load_session(sessions_dir, k), opts["max_turn_chars"]) for k in keys]
    todo = [s for s in sessions if s.n_turns]
    requests = [facts_request(prompt, s) for s in todo]

    client = make_client(config, cache_path, "facts", **client_overrides)
    with client, client.sigterm_guard():
        replies, stop, message = call_batch(client, requests, stage="facts", parse=facts_parser(),
                                            progress=progress, **opts["params"])
        source = f"llm:{client.model}"
        tmp = out_dir.with_name(f".{out_dir.name}.part")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        n_facts, dropped, with_facts = 0, 0, 0
        failed, not_made = [], []
        for session, reply in zip(todo, replies):
            if reply is None:
                not_made.append(session.key)
                continue
            if not reply.ok:
                failed.append({"session_key": session.key, "error": reply.error or "failed"})
                continue
            records, bad_turns = fact_records(session, reply.value, source)
            dropped += bad_turns
            n_facts += write_fact_log(tmp / f"{session.key}.jsonl", records)
            with_facts += bool(records)
        status = stop or "complete"
        cost = write_cost(cost_path, client, stage="facts", dataset=dataset, adapter=None, status=status,
                          message=message, prompts=[prompt.describe()])
        manifest = {
            "stage": "facts", "dataset": dataset, "kind": record.kind, "status": status, "message": message,
            "source": source, "model": client.model, "prompt": prompt.describe(),
            "settings": {k: opts[k] for k in ("max_turn_chars", "params")},
            "sessions": len(sessions), "sessions_without_turns": len(sessions) - len(todo),
            "sessions_asked": len(todo), "sessions_with_facts": with_facts, "facts": n_facts,
            "failures": len(failed), "failed_sessions": failed, "not_made": len(not_made),
            "not_made_sessions": not_made, "dropped_turn_numbers": dropped,
            "cost": {k: cost["summary"].get(k) for k in ("spent_usd", "prior_usd", "total_usd", "budget_usd")}
                    | {"facts": cost["summary"]["stages"].get("facts", {})},
        }
        atomic_write_text(tmp / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        tmp.replace(out_dir)
    log.info("facts %s: %d facts for %d of %d sessions; %d failed, %d not made (%s)", dataset or sessions_dir,
             n_facts, with_facts, len(sessions), len(failed), len(not_made), status)
    if stop:
        raise StageStopped("facts", stop, f"{message}; {len(not_made)} of {len(todo)} sessions not processed; "
                                          f"{stop_note(cache_path)}")
    return manifest


def observations(locomo_json: Path, tables: Path | Mapping[str, Path], out_dir: Path) -> dict:
    """LoCoMo's own observation facts as fact logs (zero model calls); returns the manifest. ``tables``: the
    turns table's path, or the dataset folder."""
    manifest = write_observations(Path(locomo_json), needed(dataset_files(tables), "turns")[0], Path(out_dir))
    log.info("locomo observations: %d facts in %d sessions; %d of %d dia_id refs unmapped", manifest["facts"],
             manifest["sessions"], manifest["unmapped_refs"], manifest["refs"])
    return manifest


def rule_facts_llm(job: Job) -> None:
    """Rule facts_llm: the session logs -> facts extracted by a model (every call through the cache)."""
    p = job.params
    run(job.benchmark, job.input.files(), job.output.path("facts"), p.config, Path(p.cache), job.output.path("cost"),
        dataset=job.wildcards.dataset)
