"""Validity rule 6 on copies of the real data: a question with no gold to score against (LoCoMo evidence that is
empty or all dangling, a Procedural query without a relevant label) is left out of retrieval scoring and
counted by reason; partly dangling evidence is scored on what resolves. Counts reach the report and
summary.json."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from membench.analysis.aggregate import summarize_dataset
from membench.benchmarks.registry import benchmark
from membench.report.artifacts import summary_json
from membench.report.datasets import dataset_section
from membench.scoring.tables import Gold
from membench.stages import parse

RUN_COLUMNS = {"question_id": "string", "rank": "int64", "item_id": "string", "score": "float64",
               "granularity": "string"}


def run_of(rows: list[tuple[str, str]], granularity: str) -> pd.DataFrame:
    """A run: (question_id, item_id) pairs in rank order per question."""
    ranks: dict[str, int] = {}
    out = []
    for qid, item in rows:
        ranks[qid] = ranks.get(qid, 0) + 1
        out.append({"question_id": qid, "rank": ranks[qid], "item_id": item, "score": 1.0 / ranks[qid],
                    "granularity": granularity})
    return pd.DataFrame(out, columns=list(RUN_COLUMNS)).astype(RUN_COLUMNS)


def parsed_copy(kind: str, src, tmp_path, edit) -> tuple[Gold, dict]:
    """Parse a copy of a real benchmark folder after `edit(name -> json)`; the gold tables and
    normalization.json."""
    copy = tmp_path / "src"
    copy.mkdir()
    files = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in src.glob("*.json")}
    edit(files)
    for name, data in files.items():
        (copy / name).write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "parsed"
    parse.run(benchmark(kind), copy, out)
    return Gold.load(out), json.loads((out / "normalization.json").read_text(encoding="utf-8"))


@pytest.fixture
def locomo_dangling(locomo_dir, tmp_path):
    """LoCoMo with conv-26 qa[0] ("When did Caroline go to the LGBTQ support group?", evidence D1:3) given
    two evidence strings that name no turn."""
    def edit(files):
        files["locomo10.json"][0]["qa"][0]["evidence"] = ["D99:1", "D:x"]
    return parsed_copy("locomo", locomo_dir, tmp_path, edit)


def test_all_dangling_locomo_question_is_left_out_and_counted(locomo_dangling):
    gold, info = locomo_dangling
    questions = gold.questions.set_index("question_id")
    assert questions.loc["conv-26_q0", "gold_issue"] == "dangling_evidence"
    assert questions.loc["conv-42_q88", "gold_issue"] == "partly_dangling_evidence"
    assert questions.gold_issue.value_counts().to_dict() == {
        "empty_evidence": 4, "partly_dangling_evidence": 3, "dangling_evidence": 1}
    assert info["gold"] == {"left_out": {"empty_evidence": 4, "dangling_evidence": 1},
                            "partial": {"partly_dangling_evidence": 3}}
    assert [n["count"] for n in info["normalizations"] if n["code"] == "evidence_all_dropped"] == [1]
    # a run that finds nothing: every question with gold scores 0; the 5 without gold (scored 1.0 by the
    # empty-evidence rule before) are left out under their reason with NaN values, not 1.0
    scores = benchmark("locomo").score(run_of([], "turn"), gold)
    left_out = scores[scores.skip.notna()].drop_duplicates("question_id").set_index("question_id").skip
    assert left_out.to_dict() == {"conv-26_q0": "dangling_evidence", "conv-26_q30": "empty_evidence",
                                  "conv-26_q46": "empty_evidence", "conv-50_q39": "empty_evidence",
                                  "conv-50_q42": "empty_evidence"}
    assert scores[scores.skip.notna()].value.isna().all()
    assert (scores[scores.skip.isna()].value == 0.0).all()
    summary = summarize_dataset("locomo", {"nothing": scores}, resamples=100, seed=0)
    top = summary[(summary.split == "all") & (summary.group_by == "all")
                  & (summary.metric == "evidence_recall@10")].iloc[0]
    assert (top["mean"], top.n, top.n_skipped) == (0.0, 1986 - 5, 5)
    # by question index (tune = even): conv-26_q0 (0), _q30 (30), _q46 (46), conv-50_q42 (1824) are tune and
    # conv-50_q39 (1821) holdout, of 993 each
    splits = summary[(summary.group_by == "all") & (summary.metric == "evidence_recall@10")].set_index("split").n
    assert (splits["tune"], splits["holdout"]) == (993 - 4, 993 - 1)


def test_partly_dangling_evidence_is_scored_on_what_resolves(locomo_dangling):
    """conv-42_q88's evidence is ['D1:18', 'D', 'D1:20']: 'D' names no turn, so it is scored on the other two
    (upstream's raw list would give 1/3 and 2/3 here)."""
    gold, _ = locomo_dangling
    scores = benchmark("locomo").score(run_of([("conv-42_q88", "D1:18"), ("conv-42_q88", "D1:20")], "turn"), gold)
    row = scores[scores.question_id == "conv-42_q88"].set_index("metric")
    assert row.skip.isna().all()
    assert (row.loc["evidence_recall@1", "value"], row.loc["evidence_recall@5", "value"]) == (0.5, 1.0)


@pytest.fixture
def procedural_unlabeled(procedural_dir, tmp_path):
    """The query bank with easy_1's labels removed and easy_2's scores all set to 5 (below the threshold 6)."""
    def edit(files):
        queries = {q["query_id"]: q for q in files["query_bank.json"]["queries"]}
        queries["easy_1"]["relevant_trajectories"] = []
        for label in queries["easy_2"]["relevant_trajectories"]:
            label["relevance_score"] = 5.0
    return parsed_copy("procedural", procedural_dir, tmp_path, edit)


def test_procedural_query_without_relevant_label_is_left_out_and_counted(procedural_unlabeled):
    gold, info = procedural_unlabeled
    assert info["gold"] == {"left_out": {"unlabeled": 1, "no_relevant_label": 1}, "partial": {}}
    codes = {n["code"]: n["count"] for n in info["normalizations"]}
    assert (codes["query_unlabeled"], codes["query_no_relevant_label"]) == (1, 1)
    # the first 5 trajectories for every query: the two without a relevant label are out of every mean (judged@5
    # and upstream/AP included), not counted in the query total of 40
    first = list(gold.turns.drop_duplicates("session_id").session_id[:5])  # alfworld_0 .. alfworld_4
    run = run_of([(q, t) for q in gold.questions.question_id for t in first], "trajectory")
    scores = benchmark("procedural").score(run, gold)
    skipped = scores[scores.skip.notna()].drop_duplicates("question_id").set_index("question_id").skip
    assert skipped.to_dict() == {"easy_1": "unlabeled", "easy_2": "no_relevant_label"}
    summary = summarize_dataset("procedural", {"first5": scores}, resamples=100, seed=0)
    top = summary[(summary.split == "all") & (summary.group_by == "all")].set_index("metric")
    assert (top.loc["judged@5", "n"], top.loc["upstream/AP", "n"], top.loc["nDCG@5", "n"]) == (38, 38, 38)
    assert set(top.n_skipped) == {2}


def test_real_data_gold_counts(parsed, tmp_path):
    """On the shared data as published: LoCoMo's 4 empty-evidence QA (all category 3) are left out, its 3 QA
    with a dangling entry among good ones are scored on the rest; no LoCoMo QA is all dangling, and every
    Procedural query and LongMemEval fragment question has gold."""
    written = {}
    for kind, data in parsed.items():
        folder = tmp_path / kind
        data.write(folder, {})
        written[kind] = json.loads((folder / "normalization.json").read_text(encoding="utf-8"))["gold"]
    assert written == {
        "locomo": {"left_out": {"empty_evidence": 4, "dangling_evidence": 0},
                   "partial": {"partly_dangling_evidence": 3}},
        "procedural": {"left_out": {"unlabeled": 0, "no_relevant_label": 0}, "partial": {}},
        "longmemeval": {"left_out": {"abstention": 0, "no_target": 0}, "partial": {}},
    }
    questions = parsed["locomo"].tables()["questions"]
    assert set(questions[questions.gold_issue == "empty_evidence"].category) == {3}


def test_report_and_summary_json_list_the_counts(locomo_dangling, tmp_path):
    _, info = locomo_dangling
    path = tmp_path / "normalization.json"
    path.write_text(json.dumps(info), encoding="utf-8")
    section = dataset_section("locomo", path)
    assert "so 5 questions are left out of every retrieval mean" in section
    assert "| empty_evidence | 4 | left out |" in section
    assert "| dangling_evidence | 1 | left out |" in section
    assert "| partly_dangling_evidence | 3 | scored on what resolves |" in section
    summary = pd.DataFrame(columns=["dataset", "adapter", "split", "group_by", "group", "metric", "mean", "ci_lo",
                                    "ci_hi", "n", "n_skipped", "unit"])
    text = summary_json(summary, {"locomo": benchmark("locomo")}, None, {"locomo": info["gold"]})
    assert json.loads(text)["datasets"]["locomo"]["gold"] == {
        "left_out": {"empty_evidence": 4, "dangling_evidence": 1}, "partial": {"partly_dangling_evidence": 3}}
