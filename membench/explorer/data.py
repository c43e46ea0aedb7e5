"""What the offline results explorer ships, as plain dicts: per dataset its questions, per-question headline
scores, each system's top k with gold marked, and (per haystack, loaded only when a question is opened) the
session text that gold items and top-k items point into.

Reads only the run's existing outputs (questions, turns, qrels, haystacks, gold roles, scores and runs parquets,
summary.json, significance.parquet; in QA mode the qa/*.parquet answers and the judge's calibration probes);
moves no figure. BEAM's measures of change come from summary.json's `change` block and its coverage counts
(`data_counts.change`); its questions' gold roles (original / update, the two sides, the events in gold order)
from gold_roles.parquet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from membench.analysis.aggregate import against_baseline
from membench.datasets.gold import relevant_items
from membench.qa.calibration import calibration_summary
from membench.report.change import K as CHANGE_K, MEASURES as CHANGE_MEASURES
from membench.report.headlines import ci_text, diff_text
from membench.report.judge_trust import rate_ci

TOP_K = 10  # the top k each system's list shows when a question is opened
TEXT_CHARS = 1500  # a turn's text is cut here: the explorer shows context, the transcript stays the source


def _clean(value: Any) -> Any:
    """None for pandas' missing values, so the JSON holds null rather than NaN (which JSON cannot hold)."""
    return None if value is None or (not isinstance(value, str | list) and pd.isna(value)) else value


def _questions(questions: pd.DataFrame) -> dict[str, list[Any]]:
    """The question table, column by column (smaller than one object per question)."""
    q = questions.sort_values("index")
    return {"id": q.question_id.tolist(), "text": q.question.tolist(),
            "answer": [_clean(a) for a in q.answer], "type": [_clean(t) for t in q.question_type],
            "split": q.split.tolist(), "haystack": q.haystack_id.tolist()}


def _score_columns(scores: pd.DataFrame, metrics: Sequence[str], ids: Sequence[str]) -> dict[str, list]:
    """metric -> one value per question (in `ids` order); null where the question was skipped or is absent."""
    kept = scores[scores.metric.isin(metrics) & scores.skip.isna()]
    table = kept.pivot_table(index="question_id", columns="metric", values="value", aggfunc="first")
    table = table.reindex(index=list(ids), columns=list(metrics))
    return {m: [None if pd.isna(v) else round(float(v), 6) for v in table[m]] for m in metrics}


def _top(ranked: pd.DataFrame, gold: Mapping[tuple[str, str], set[str]], ids: Sequence[str]) -> dict[str, list]:
    """granularity -> per question its top k as [item_id, score, gold?]. One pass over plain columns: a run holds a
    list per question and granularity, too many for a pandas group each."""
    top = ranked[ranked["rank"] <= TOP_K].sort_values(["granularity", "question_id", "rank"])
    lists: dict[Any, dict[str, list]] = {}
    for gran, q, i, s in zip(top.granularity.tolist(), top.question_id.tolist(), top.item_id.tolist(),
                             top.score.tolist()):
        lists.setdefault(gran, {}).setdefault(q, []).append([i, round(float(s), 4), int(i in gold.get((q, gran), ()))])
    return {str(gran): [by_q.get(q, []) for q in ids] for gran, by_q in lists.items()}


def significance_table(significance: pd.DataFrame, dataset: str, metrics: Sequence[str]) -> dict[str, dict]:
    """run -> metric -> the paired test against the baseline on the whole dataset (Holm-adjusted p)."""
    rows = against_baseline(significance)
    rows = rows[(rows.dataset == dataset) & (rows.split == "all") & rows.metric.isin(metrics)]
    out: dict[str, dict] = {}
    for r in rows.itertuples():
        out.setdefault(r.adapter, {})[r.metric] = {
            "baseline": r.baseline, "diff": _clean(r.mean_diff), "lo": _clean(r.ci_lo), "hi": _clean(r.ci_hi),
            "p_holm": _clean(r.p_holm), "wins": int(r.wins), "ties": int(r.ties), "losses": int(r.losses)}
    return out


def dataset_payload(name: str, record: Mapping[str, Any], efficiency: Mapping[str, Any] | None,
                    tables: Mapping[str, pd.DataFrame], runs: Mapping[str, tuple[Path, Path]],
                    significance: pd.DataFrame, qa: Mapping[str, pd.DataFrame] | None = None,
                    probes: pd.DataFrame | None = None) -> dict[str, Any]:
    """Everything the explorer needs about one dataset except its transcript text.
    `runs`: run -> (scores parquet, ranked-list parquet); in QA mode `qa`: QA'd run -> its qa.parquet frame and
    `probes`: the judge's calibration probes."""
    metrics = list(record["headline_metrics"])
    questions = _questions(tables["questions"])
    ids, gold = questions["id"], relevant_items(tables["qrels"])
    grans = sorted({g for _, g in gold})
    return {
        "name": name, "kind": record["kind"], "unit": record.get("resampling_unit", "question"),
        "metrics": metrics, "runs": list(runs), "questions": questions,
        "gold": {g: [sorted(gold.get((q, g), ())) for q in ids] for g in grans},
        "scores": {run: _score_columns(pd.read_parquet(s), metrics, ids) for run, (s, _) in runs.items()},
        "top": {run: _top(pd.read_parquet(r), gold, ids) for run, (_, r) in runs.items()},
        "leaderboard": {run: {m: figures.get(m) for m in metrics}
                        for run, figures in ((r, record["adapters"].get(r, {}).get("all", {})) for r in runs)},
        "significance": significance_table(significance, name, metrics),
        "efficiency": _efficiency(efficiency, list(runs)),
        # the metric the page opens on: the benchmark's accuracy metric where efficiency.json names it
        "default_metric": next((m for m in [(efficiency or {}).get("accuracy_metric")] if m in metrics), metrics[0]),
        **change_payload(record, list(runs)),
        **roles_payload(tables.get("gold_roles"), ids),
        **qa_payload(qa or {}, probes, ids, record.get("answers"), record.get("resampling_unit") or "question"),
    }


def change_payload(record: Mapping[str, Any], runs: Sequence[str]) -> dict[str, Any]:
    """BEAM's measures of change at k = 10 as summary.json holds them (run -> measure@10 -> {mean, ci_lo, ci_hi,
    n}), each with its ability and direction (membench.report.change.MEASURES), and the coverage counts per
    ability (questions, scored, why the rest are not); no key at all for a dataset without them."""
    change = record.get("change") or {}
    coverage = (record.get("data_counts") or {}).get("change") or {}
    if not change:
        return {}
    present = {m for figures in change.values() for m in figures}
    measures = [{"name": f"{name}@{CHANGE_K}", "ability": ability, "up": up}
                for name, ability, up in CHANGE_MEASURES
                if ability in coverage or any(m.startswith(f"{name}@") for m in present)]
    return {"change": {"k": CHANGE_K, "measures": measures,
                       "runs": {run: {m["name"]: (change.get(run) or {}).get(m["name"]) for m in measures}
                                for run in runs},
                       "coverage": coverage}}


def roles_payload(gold_roles: pd.DataFrame | None, ids: Sequence[str]) -> dict[str, Any]:
    """question id -> its gold roles in gold order, each [role, group, [message ids]] (a side or an event may name
    several messages); only questions that have roles (BEAM's), no key at all when none has."""
    if gold_roles is None or gold_roles.empty:
        return {}
    wanted = set(ids)
    out: dict[str, list] = {}
    for qid, rows in gold_roles.groupby("question_id", sort=False):
        if qid not in wanted:
            continue
        entries: dict[tuple[str, int], list[str]] = {}
        for role, group, item in zip(rows.role, rows.group, rows.item_id):  # the table's order is the gold order
            entries.setdefault((str(role), int(group)), []).append(str(item))
        out[str(qid)] = [[role, group, items] for (role, group), items in entries.items()]
    return {"roles": out} if out else {}


def _efficiency(record: Mapping[str, Any] | None, runs: Sequence[str]) -> dict[str, Any]:
    """run -> latency p50 (ms), mean tokens of the top 10, recall within the token budget: where measured."""
    if not record:
        return {}
    out = {}
    for run in runs:
        r = record["runs"].get(run) or {}
        tokens, budget = (r.get("tokens@k") or {}).get("10"), r.get("budget_recall")
        out[run] = {"latency_p50": (r.get("latency_ms") or {}).get("p50"),
                    "tokens10": tokens["mean"] if tokens else None, "budget_recall": budget["mean"] if budget else None}
    return {"budget_metric": record.get("budget_metric"), "runs": out}


def haystack_sessions(turns: pd.DataFrame, haystacks: pd.DataFrame, payload: Mapping[str, Any]) -> dict[str, dict]:
    """haystack id -> the sessions (with their turns' text) that its questions' gold or top-k items lie in.
    Only those: a LongMemEval-S haystack holds ~50 sessions, its questions touch a handful."""
    sessions_of = haystacks.sort_values("position").groupby("haystack_id").session_key.apply(list).to_dict()
    ids = _ids_by_session(turns)
    wanted = _wanted_items(payload)
    chosen = {hay: [k for k in dict.fromkeys(keys) if k in ids and wanted.get(hay, set()) & ids[k]]  # in order
              for hay, keys in sessions_of.items()}
    shown = _shown_sessions(turns, {k for keys in chosen.values() for k in keys})
    return {hay: {"sessions": [shown[k] for k in keys]} for hay, keys in chosen.items()}


def _ids_by_session(turns: pd.DataFrame) -> dict[str, set[str]]:
    """session key -> the ids a gold or top-k item may name in it (its turns' and its own), from whole columns in
    one pass: there are too many sessions for a pandas group each."""
    out: dict[str, set[str]] = {}
    for key, item, session in zip(turns.session_key.tolist(), turns.item_id.tolist(), turns.session_id.tolist()):
        out.setdefault(key, set()).update((item, session))
    return out


def _shown_sessions(turns: pd.DataFrame, keys: set[str]) -> dict[str, dict[str, Any]]:
    """session key -> the session as the explorer shows it: id, date (its first turn's), and each turn as
    [item id, who, text], in turn order; only the sessions in `keys`, whose text is all the explorer ships."""
    rows = turns[turns.session_key.isin(keys)].sort_values(["session_key", "turn_index"], kind="stable")
    who = rows.speaker.fillna(rows.role).fillna("")
    text = rows.text.fillna("").str.slice(0, TEXT_CHARS)
    out: dict[str, dict[str, Any]] = {}
    for key, item, session, date, w, t in zip(rows.session_key.tolist(), rows.item_id.tolist(),
                                              rows.session_id.tolist(), rows.session_date.tolist(), who.tolist(),
                                              text.tolist()):
        if key not in out:
            out[key] = {"id": session, "date": _clean(date), "turns": []}
        out[key]["turns"].append([item, w, t])
    return out


def _wanted_items(payload: Mapping[str, Any]) -> dict[str, set[str]]:
    """haystack -> every item id its questions' gold lists and top-k lists name."""
    wanted: dict[str, set[str]] = {}
    hays = payload["questions"]["haystack"]
    lists = [*payload["gold"].values(), *[[[e[0] for e in row] for row in per_q]
                                          for by_gran in payload["top"].values() for per_q in by_gran.values()]]
    for per_question in lists:
        for hay, items in zip(hays, per_question):
            wanted.setdefault(hay, set()).update(items)
    return wanted


def qa_answers(frames: Mapping[str, pd.DataFrame], ids: Sequence[str]) -> dict[str, dict[str, list]]:
    """QA'd run (and the full-context baseline) -> per question (in `ids` order) the generated answer, the judge's
    verdict (true/false, null without one), the row's status (why there is no verdict), where the benchmark
    has it (LoCoMo), the token F1, and for a run the share of the gold evidence in its top k. Null throughout for
    questions the QA run did not cover (qa.limit)."""
    out = {}
    for run, df in frames.items():
        rows = df.drop_duplicates("question_id").set_index("question_id").reindex(list(ids))
        columns = {"answer": [_clean(a) for a in rows.answer.astype(object)],
                   "correct": [None if pd.isna(c) else bool(c) for c in rows.correct.astype(object)],
                   "status": [_clean(s) for s in rows.status.astype(object)]}
        if "f1" in rows and rows.f1.notna().any():
            columns["f1"] = [None if pd.isna(v) else round(float(v), 4) for v in rows.f1]
        if "evidence_in_top_k" in rows and rows.evidence_in_top_k.notna().any():  # a run, not a baseline
            columns["evidence"] = [None if pd.isna(v) else round(float(v), 4) for v in rows.evidence_in_top_k]
        out[run] = columns
    return out


CALIBRATION_HEADER = ["group", "questions", "false-accept [95% CI]", "false-reject [95% CI]", "not judged"]


def calibration_rows(probes: pd.DataFrame) -> dict[str, list]:
    """The judge's calibration on one dataset's probes, as the report's calibration table words it
    (judge_trust.rate_ci of qa.calibration.calibration_summary): one row per group, `all` first."""
    rows = [[r.group, int(r.questions), rate_ci(r.false_accept, r.fa_low, r.fa_high, r.false_accepts, r.should_reject),
             rate_ci(r.false_reject, r.fr_low, r.fr_high, r.false_rejects, r.should_accept), int(r.not_judged)]
            for r in calibration_summary(probes).itertuples(index=False)]
    return {"header": CALIBRATION_HEADER, "rows": rows}


BUYS_HEADER = ["system", "evidence in top k (retrieval)", "accuracy", "accuracy, evidence in top k",
               "accuracy, evidence missed"]


def buys_rows(answers: Mapping[str, Any], unit: str = "question") -> dict[str, list]:
    """summary.json's `answers` (membench.report.answers) as the explorer's table, worded as the report words it:
    retrieval and answer figures in separate columns, then each run's accuracy difference to each baseline with its
    Holm-adjusted p. `unit`: the dataset's resampling unit (a figure on one unit has no CI)."""
    refs = list(answers["baselines"])

    def cell(c: Mapping | None) -> str:
        if not c or c.get("mean") is None:
            return "—"
        nan = float("nan")
        lo, hi = (nan if c.get(k) is None else c[k] for k in ("ci_lo", "ci_hi"))
        return f"{c['mean']:.4f} {ci_text(lo, hi, unit)} (n={c['n']})"

    def diff(t: Mapping | None) -> str:
        if not t or t.get("mean_diff") is None:
            return "—"
        return diff_text(t["mean_diff"], t.get("ci_lo"), t.get("ci_hi"), unit, t.get("p_holm"))

    rows = [[run, cell(f.get("evidence_in_top_k")), cell(f.get("accuracy")), cell(f.get("accuracy_evidence_in")),
             cell(f.get("accuracy_evidence_missed"))] + [diff(f["vs"].get(r)) for r in refs]
            for run, f in answers["runs"].items()]
    rows += [[r, "—", cell(answers["baselines"][r]["accuracy"]), "—", "—"] + ["—"] * len(refs) for r in refs]
    return {"header": BUYS_HEADER + [f"accuracy − {r}" for r in refs], "rows": rows}


def qa_payload(frames: Mapping[str, pd.DataFrame], probes: pd.DataFrame | None, ids: Sequence[str],
               answers: Mapping[str, Any] | None = None, unit: str = "question") -> dict[str, Any]:
    """The QA keys of a dataset's payload: none at all when the run answered nothing (QA off), so the page
    shows what it showed before. `answers`: summary.json's figures of what retrieval buys."""
    out: dict[str, Any] = {}
    if frames:
        out["qa"] = {"runs": list(frames), "answers": qa_answers(frames, ids)}
        if answers:
            out["qa"]["buys"] = buys_rows(answers, unit)
    if probes is not None:
        out["calibration"] = calibration_rows(probes)
    return out
