"""qa_calibration stage: before trusting the QA verdicts, grade probes of known correctness with the same
judge, prompt and rubrics (:mod:`membench.qa.probes`), and write ``calibration.parquet`` (one row per probe:
question_id, question_type, category, probe, answer, should_accept, accepted, judged_by llm|rule, rubric,
status, error, model) plus a cost JSON (meter stage ``qa-verdict``, the QA judge's client, so its cache keys
are the QA verdicts' own).

Config: the ``qa:`` section's question selection (``limit``, ``question_ids``), ``verdict_params``, and
``judge_calibration: {enabled, n}`` (probe the first ``n`` selected questions in question-id-hash order).
LoCoMo category 5 is decided by upstream's rule, as in QA, so its probes measure that rule, with no call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from membench.config import config_section
from membench.datasets.tables import dataset_files, needed
from membench.benchmarks.record import Benchmark
from membench.io import atomic_write_parquet
from membench.llm.prompts import load_prompt
from membench.qa.calibration import CALIBRATION_COLUMNS, calibration_summary
from membench.qa.probes import build_probes
from membench.qa.verdict import (RULE_RUBRIC, gold_for, rubric_version, verdict_by_rule, verdict_parser, verdict_request,
                                  verdict_type)
from membench.llm.stage_calls import StageStopped, call_batch, make_client, stop_note, write_cost
from membench.stages.qa import check_qa, select_questions
from membench.jobs.job import Job

log = logging.getLogger(__name__)

__all__ = ["run"]


def run(record: Benchmark, tables: Path | Mapping[str, Path], out_path: Path, config: Mapping[str, Any], cache_path: Path,
        cost_path: Path | None = None, *, dataset: str | None = None, progress: bool = True,
        base_dir: Path | None = None, **client_overrides) -> pd.DataFrame:
    """Build the probes, judge them, write and return the per-probe table (``tables``: the questions table's
    path, or the dataset folder)."""
    questions_path, = needed(dataset_files(tables), "questions")
    check_qa(record, questions_path, "judge calibration")
    opts = config_section(config, "qa")
    n = opts["judge_calibration"]["n"]
    questions = pd.read_parquet(questions_path)
    chosen = select_questions(questions, opts)
    probes = build_probes(record, questions, chosen, n)
    by_id = {q["question_id"]: q for q in chosen.to_dict("records")}
    prompt = load_prompt("verdict", config, base_dir)

    rows, todo = [], []
    for p in probes:
        q = by_id[p.question_id]
        row = {"question_id": p.question_id, "question_type": q.get("question_type"), "category": q.get("category"),
               "probe": p.kind, "answer": p.answer, "should_accept": p.should_accept, "accepted": pd.NA,
               "judged_by": "llm", "rubric": rubric_version(record, verdict_type(record, q)), "status": None, "error": None,
               "model": None}
        by_rule = verdict_by_rule(record, q, p.answer)
        if by_rule is not None:
            row.update(accepted=by_rule, judged_by="rule", rubric=RULE_RUBRIC, status="ok")
        else:
            todo.append((row, verdict_request(prompt, record, q["question"], verdict_type(record, q), gold_for(q), p.answer)))
        rows.append(row)

    client = make_client(config, cache_path, "qa-verdict", **client_overrides)
    with client, client.sigterm_guard():
        replies, stop, message = call_batch(client, [r for _, r in todo], stage="qa-calibration",
                                            parse=verdict_parser(), progress=progress, **opts["verdict_params"])
        for (row, _), reply in zip(todo, replies):
            row["model"] = client.model
            if reply is None:
                row["status"] = stop
            elif not reply.ok:
                row.update(status="failed", error=reply.error)
            else:
                row.update(accepted=bool(reply.value), status="ok")
        out = pd.DataFrame(rows, columns=list(CALIBRATION_COLUMNS)).astype(CALIBRATION_COLUMNS)
        atomic_write_parquet(out, Path(out_path))
        status = stop or "complete"
        summary = calibration_summary(out)
        overall = summary.iloc[0] if len(summary) else {}
        write_cost(cost_path, client, stage="qa-calibration", dataset=dataset, adapter=None, status=status,
                   message=message, prompts=[prompt.describe()],
                   extra={"probes": len(out), "questions": int(out.question_id.nunique()),
                          "by_probe": out.probe.value_counts().to_dict(),
                          "false_accept": overall.get("false_accept"), "false_reject": overall.get("false_reject")})
    log.info("judge calibration %s: %d probes of %d questions; false-accept %s, false-reject %s (%s)", dataset,
             len(out), out.question_id.nunique(), overall.get("false_accept"), overall.get("false_reject"), status)
    if stop:
        raise StageStopped("qa-calibration", stop, f"{message}; {int((out.status != 'ok').sum())} of {len(out)} "
                                                   f"probes not judged; {stop_note(cache_path)}")
    return out


def rule_qa_calibration(job: Job) -> None:
    """Rule qa_calibration: the QA judge asked about known-answer probes."""
    p = job.params
    run(job.benchmark, job.input.files(), job.output.path("probes"), p.config, Path(p.cache), job.output.path("cost"),
        dataset=job.wildcards.dataset)
