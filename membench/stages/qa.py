"""qa stage (answer mode): answer from an adapter's top-K, judge, score.

``run`` reads the dataset's parsed tables and one adapter's run, asks one answer call per question
(:mod:`membench.qa.answer`), then one verdict call per answered question (:mod:`membench.qa.verdict`;
LoCoMo category 5 is decided by upstream's rule, without a call), computes LoCoMo's token F1
(:mod:`membench.benchmarks.locomo.answer_f1`), and writes:

- ``qa.parquet``: question_id, split, question_type, category, answer, raw_answer, correct (boolean, NA
  without a verdict; sample 0 of the verdict), f1 (LoCoMo; NaN elsewhere), status (ok | failed | budget |
  interrupted | excluded), answer_status, verdict_status, verdict_by (llm | rule), n_context, answer_model,
  verdict_model, error, rubric (the rubric version), verdicts (one character per verdict sample: 1, 0 or -),
  erratum (the gold-label erratum applied, if any), correct_upstream / f1_upstream (the same against the
  benchmark's own answer, before errata), prompts (the answer and verdict prompt versions, and the benchmark's
  own judge's), judge_status / judge_detail and one column per metric of the benchmark's own judge, where it has one
  (below), evidence_in_top_k (the share of the question's gold items in the run's top k at the QA granularity; NaN
  for a baseline or a question without gold);
- the per-question score rows (``qa/accuracy``, ``qa/f1``, the own judge's ``qa/...`` metrics, and accuracy split
  by whether the evidence was in the top k: :mod:`membench.scoring.qa`) in the scorer's shape, for the aggregate
  rule;
- a cost JSON (meter stages ``qa-answer``, ``qa-verdict`` and ``qa-judge``; the own judge's aggregate figures as
  its upstream reports them under ``judge_summary``).

A benchmark whose record has its own judge (`Qa.judge`: BEAM's rubric scoring, LoCoMo-Plus's 1 / 0.5 / 0 labels)
has every answered question judged by it too (:mod:`membench.qa.own_judge`), through the verdict client and its
call cache, beside the generic verdict, which still runs wherever the question has a gold answer; where it has none
(LoCoMo-Plus), the own judge's verdict fills ``correct``. ``qa.judge_options`` is handed to the judge.

Config (``qa:`` section; defaults in ``membench/config.schema.yaml``, keys explained in
``config.yaml``): ``k`` (top-K retrieved items per question), ``granularity`` (null: session for LongMemEval,
turn for LoCoMo), ``max_context_chars`` (context budget; items in rank order, the overflowing one cut),
``order`` (date: oldest first, as upstream LongMemEval; or rank), ``expand_rounds`` (null: true for
LongMemEval, turn -> user turn + reply; false for LoCoMo), ``adversarial_choices`` (LoCoMo cat. 5 asked as
upstream's (a)/(b) multiple choice), ``limit`` / ``question_ids`` (only the first N questions, or these),
``answer_params`` / ``verdict_params`` (request parameters) and ``judge_samples`` (ask each verdict N times,
own cache key per sample, to measure flips).

The answer and verdict calls use clients built for ``llm.stages.qa-answer`` / ``llm.stages.qa-verdict``
(so the judge may be a different model than the answerer). A budget stop, SIGTERM/SIGINT or more failed calls
than ``llm.max_failed_share`` writes every answer and verdict made (the rest with status budget/interrupted),
then raises StageStopped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from membench.config import config_section
from membench.benchmarks.record import Benchmark
from membench.benchmarks.registry import supporting
from membench.datasets.gold import relevant_items
from membench.datasets.tables import dataset_files, needed
from membench.errors import InputError
from membench.io import atomic_write_parquet
from membench.llm.prompts import load_prompt
from membench.llm.replies import parse_text
from membench.qa.baselines import FULL_CONTEXT, baseline_items
from membench.qa.evidence import evidence_share
from membench.qa.answer import TurnIndex, answer_messages, question_text, render_context, resolve_choice
from membench.qa.judging import EXCLUDED, fold_verdicts, upstream_gold, verdict_jobs
from membench.qa.own_judge import fold_judged, metric_columns, run_judge
from membench.qa.verdict import RULE_RUBRIC, gold_for, verdict_by_rule, verdict_parser
from membench.scoring.qa import qa_rows
from membench.llm.stage_calls import StageStopped, call_batch, make_client, stop_note, write_cost
from membench.jobs.job import Job

log = logging.getLogger(__name__)

__all__ = ["QA_COLUMNS", "check_qa", "run", "select_questions"]

QA_COLUMNS = {"question_id": "string", "split": "string", "question_type": "string", "category": "Int64",
              "answer": "string", "raw_answer": "string", "correct": "boolean", "f1": "float64",
              "status": "string", "answer_status": "string", "verdict_status": "string", "verdict_by": "string",
              "n_context": "int64", "answer_model": "string", "verdict_model": "string", "error": "string",
              "rubric": "string", "verdicts": "string", "erratum": "string", "correct_upstream": "boolean",
              "f1_upstream": "float64", "prompts": "string", "judge_status": "string", "judge_detail": "string",
              "evidence_in_top_k": "float64"}


def select_questions(questions: pd.DataFrame, opts: Mapping[str, Any]) -> pd.DataFrame:
    """The questions to answer: all, an explicit id list, and/or the first ``limit`` (benchmark order)."""
    out = questions.sort_values("index", kind="stable") if "index" in questions else questions
    ids = opts.get("question_ids")
    if ids:
        unknown = sorted(set(map(str, ids)) - set(out.question_id))
        if unknown:
            raise InputError("config", f"unknown question id(s): {', '.join(unknown[:5])}", field="qa.question_ids")
        out = out[out.question_id.isin(set(map(str, ids)))]
    if opts.get("limit") is not None:
        out = out.head(int(opts["limit"]))
    return out


def check_qa(record: Benchmark, path: Path, what: str = "answer-mode QA") -> None:
    """An error naming ``path`` unless the benchmark's record has QA rules."""
    if record.qa is None:
        raise InputError(path, f"{what} covers {', '.join(supporting('qa'))}, not {record.kind!r}")


def run(record: Benchmark, tables: Path | Mapping[str, Path], run_path: Path | None, out_path: Path, scores_path: Path | None,
        config: Mapping[str, Any], cache_path: Path, cost_path: Path | None = None, *, dataset: str | None = None,
        adapter: str | None = None, progress: bool = True, base_dir: Path | None = None, baseline: str | None = None,
        **client_overrides) -> pd.DataFrame:
    """Answer, judge and score the questions of a dataset from the run at ``run_path``; ``tables`` holds the
    paths of its questions, turns, haystacks and qrels tables, or is its folder (see
    :func:`~membench.datasets.tables.dataset_files`). Each row notes the share of the question's gold items in the
    run's top k (``evidence_in_top_k``, :mod:`membench.qa.evidence`). ``run_path`` None: the QA ``baseline``
    (:mod:`membench.qa.baselines`; default the full-context one), whole sessions in date order, cut only at
    ``qa.full_context_max_chars``."""
    files = dataset_files(tables)
    questions_path, turns_path, haystacks_path, qrels_path = needed(files, "questions", "turns", "haystacks", "qrels")
    check_qa(record, questions_path)
    judge = record.qa.judge
    columns = {**QA_COLUMNS, **dict.fromkeys(metric_columns(judge).values(), "float64")}
    opts = config_section(config, "qa")
    k = opts["k"]
    granularity = opts["granularity"] or record.qa.granularity
    if granularity not in record.granularities:
        raise InputError("config", f"{record.kind} is ranked at {', '.join(record.granularities)}, not {granularity!r}",
                         field="qa.granularity")
    expand = opts["expand_rounds"] if opts["expand_rounds"] is not None else record.qa.expand_rounds
    questions = pd.read_parquet(questions_path)
    chosen = select_questions(questions, opts)
    index = TurnIndex(pd.read_parquet(turns_path), pd.read_parquet(haystacks_path))
    max_chars = opts["max_context_chars"]
    qrels = pd.read_parquet(qrels_path)
    if run_path is None:  # a baseline: its own sessions, whole
        granularity, expand, k, max_chars = "session", False, None, opts["full_context_max_chars"]
        top = baseline_items(baseline or FULL_CONTEXT, chosen.to_dict("records"), index, qrels)
        evidence = {}
    else:
        top = ranked_top(run_path, granularity, k)
        gold = relevant_items(qrels)
        evidence = {qid: evidence_share(top.get(qid, []), gold.get((qid, granularity))) for qid in chosen.question_id}

    answer_prompt = load_prompt("answer", config, base_dir)
    verdict_prompt = load_prompt("verdict", config, base_dir)
    samples = opts["judge_samples"]
    if samples > 1 and not opts["verdict_params"].get("temperature"):
        log.warning("qa.judge_samples is %d but the verdict temperature is 0: samples can only differ where the "
                    "server is not deterministic", samples)
    records = chosen.to_dict("records")
    requests, keys, n_context, missing_items = [], [], [], 0
    for q in records:
        excerpts = []
        for rank, item in enumerate(top.get(q["question_id"], []), 1):
            ex = index.excerpt(q["haystack_id"], str(item), granularity, rank, expand)
            if ex is None:
                missing_items += 1
            else:
                excerpts.append(ex)
        context, shown = render_context(excerpts, max_chars, "date" if run_path is None else opts["order"])
        text, key = question_text(q, record, bool(opts["adversarial_choices"]))
        date = q.get("question_date")
        requests.append({"messages": answer_messages(answer_prompt, context, text, None if pd.isna(date) else date),
                         "tags": {"prompt": answer_prompt.version}})
        keys.append(key)
        n_context.append(shown)
    if missing_items:
        log.warning("qa: %d retrieved items are not in turns.parquet; left out of the contexts", missing_items)

    rows = [{"question_id": q["question_id"], "split": q["split"], "question_type": q.get("question_type"),
             "category": q.get("category"), "answer": None, "raw_answer": None, "correct": pd.NA, "f1": np.nan,
             "status": None, "answer_status": None, "verdict_status": None, "verdict_by": None,
             "n_context": n, "answer_model": None, "verdict_model": None, "error": None, "rubric": None,
             "verdicts": None, "erratum": q.get("erratum"), "correct_upstream": pd.NA, "f1_upstream": np.nan,
             "prompts": " ".join([answer_prompt.version, verdict_prompt.version, *([judge.name] if judge else [])]),
             "judge_status": None, "judge_detail": None, "evidence_in_top_k": evidence.get(q["question_id"], np.nan),
             **dict.fromkeys(metric_columns(judge).values(), np.nan)}
            for q, n in zip(records, n_context)]
    judge_for = judge.prepare({name: pd.read_parquet(path) for name, path in zip(judge.tables, needed(
        files, *judge.tables))}, opts["judge_options"]) if judge else None

    answer_client = make_client(config, cache_path, "qa-answer", **client_overrides)
    clients = [answer_client]
    try:
        with answer_client.sigterm_guard():
            replies, stop, message = call_batch(answer_client, requests, stage="qa-answer", parse=parse_text,
                                                progress=progress, **opts["answer_params"])
        todo = _answers_into_rows(record, records, rows, replies, keys, stop, answer_client.model, samples,
                                  judge is not None)
        jobs = verdict_jobs(record, verdict_prompt, todo, samples)
        own = [i for i, row in enumerate(rows) if judge and row["answer_status"] == "ok"]
        if (jobs or own) and stop is None:
            verdict_client = make_client(config, cache_path, "qa-verdict", **client_overrides)
            clients.append(verdict_client)
            with verdict_client.sigterm_guard():
                vreplies, stop, message = call_batch(verdict_client, [j.request for j in jobs], stage="qa-verdict",
                                                     parse=verdict_parser(), progress=progress,
                                                     **opts["verdict_params"])
                fold_verdicts(rows, record, records, jobs, vreplies, stop, samples, verdict_client.model)
                outcomes = {}
                if own and stop is None:
                    outcomes, stop, message = run_judge(
                        {i: judge_for(records[i], rows[i]["answer"]) for i in own}, verdict_client,
                        opts["verdict_params"], progress=progress)
                if judge:
                    fold_judged(rows, judge, own, outcomes, stop, verdict_client.model)
        else:  # the answer batch was stopped: no verdict call is started
            fold_verdicts(rows, record, records, jobs, [None] * len(jobs), stop or "failed", samples, "")
            if judge:
                fold_judged(rows, judge, own, {}, stop or "failed", None)

        out = pd.DataFrame(rows, columns=list(columns)).astype(columns)
        atomic_write_parquet(out, Path(out_path))
        if scores_path is not None:
            atomic_write_parquet(qa_rows(out, questions, metric_columns(judge), f1=record.qa.answer_f1 is not None),
                                 Path(scores_path))
        status = stop or "complete"
        extra = {"k": k, "granularity": granularity, "questions": len(out), "judge_samples": samples,
                 "answered": int((out.answer_status == "ok").sum()), "judged": int(out.correct.notna().sum()),
                 "rubrics": sorted(out.rubric.dropna().unique().tolist())}
        if judge:
            extra.update(judge=judge.name, judged_own=int((out.judge_status == "ok").sum()),
                         judge_summary=judge.summary(out, questions))
        write_cost(cost_path, clients, stage="qa", dataset=dataset, adapter=adapter, status=status, message=message,
                   prompts=[answer_prompt.describe(), verdict_prompt.describe(), *(judge.prompts() if judge else [])],
                   extra=extra)
    finally:
        for c in clients:
            c.close()
    judged = out.correct.dropna()
    log.info("qa %s/%s: %d questions, %d answered, %d judged, accuracy %s (%s)", dataset, adapter, len(out),
             int((out.answer_status == "ok").sum()), len(judged),
             f"{judged.mean():.4f}" if len(judged) else "n/a", status)
    if stop:
        missing = int((~out.status.isin(["ok", EXCLUDED])).sum())
        raise StageStopped("qa", stop, f"{message}; {missing} of {len(out)} questions without an answer or "
                                       f"verdict; {stop_note(cache_path)}")
    return out


def ranked_top(run_path: Path, granularity: str, k: int) -> dict[str, list[str]]:
    """question id -> the run's top ``k`` items at ``granularity``."""
    ranking = pd.read_parquet(run_path)
    part = ranking[ranking.granularity == granularity]
    if part.empty and not ranking.empty:
        raise InputError(run_path, f"the run has no {granularity!r} rankings (it has "
                                   f"{', '.join(sorted(ranking.granularity.unique()))}); set qa.granularity")
    return {qid: list(g.sort_values("rank").item_id.head(k)) for qid, g in part.groupby("question_id")}


def _answers_into_rows(record: Benchmark, records: list[dict], rows: list[dict], replies: list, keys: list,
                       stop: str | None, model: str, samples: int, own_judge: bool = False
                       ) -> list[tuple[int, dict, str]]:
    """Fill the answer columns (and rule verdicts, token F1); return what the generic verdict must judge (a question
    without a gold answer fails, unless the benchmark's own judge scores it: ``own_judge``)."""
    todo = []
    for i, (q, row, reply, key) in enumerate(zip(records, rows, replies, keys)):
        row["answer_model"] = model
        if reply is None:
            row["answer_status"] = row["status"] = stop
            continue
        if not reply.ok:
            row["answer_status"] = row["status"] = "failed"
            row["error"] = reply.error
            continue
        row["answer_status"] = "ok"
        row["raw_answer"] = reply.value
        row["answer"] = answer = resolve_choice(reply.value, key)
        gold, upstream = gold_for(q), upstream_gold(q)
        if record.qa.answer_f1:  # its own token F1 against the gold in use and against the benchmark's own answer
            category = int(q["category"])
            reference = upstream if upstream is not None else gold
            if category == 5 or gold is not None:
                row["f1"] = record.qa.answer_f1(category, answer, gold or "")
            if category == 5 or reference is not None:
                row["f1_upstream"] = record.qa.answer_f1(category, answer, reference or "")
        by_rule = verdict_by_rule(record, q, answer)
        if by_rule is not None:
            row.update(correct=by_rule, correct_upstream=by_rule, verdict_status="ok", verdict_by="rule",
                       status="ok", rubric=RULE_RUBRIC, verdicts=("1" if by_rule else "0") * samples)
            continue
        if gold is None and upstream is None:
            if not own_judge:
                row.update(verdict_status="failed", status="failed", error="no gold answer to judge against")
            continue
        todo.append((i, q, answer))
    return todo


def rule_qa(job: Job) -> None:
    """Rule qa: answer mode for one run (answer from its top k, then the verdicts)."""
    p, out = job.params, job.output
    run(job.benchmark, job.input.files(), job.input.path("run"), out.path("qa"), out.path("scores"), p.config,
        Path(p.cache), out.path("cost"), dataset=job.wildcards.dataset, adapter=job.wildcards.run)
