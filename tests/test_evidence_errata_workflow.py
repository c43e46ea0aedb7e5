"""`errata: apply` end to end on two real LoCoMo conversations (bm25 only): the corrected evidence is scored, each
run is scored again on the evidence as published, and the report's both-ways figures equal LoCoMo's evidence recall
recomputed here from the run and the two evidence tables. The default run schedules no such second scoring."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml

from conftest import locomo_slice, run_snakemake

pytestmark = pytest.mark.slow
RUNS = ("bm25-upstream", "bm25-time", "bm25-v2", "dense", "hybrid", "substring", "state-aware", "action-only")


@pytest.fixture(scope="module")
def work(tmp_path_factory, locomo_dir):
    work = tmp_path_factory.mktemp("errata-apply")
    config = {
        "datasets": {"longmemeval-s": {"enabled": False}, "procedural": {"enabled": False},
                     "locomo": {"kind": "locomo", "path": str(locomo_slice(locomo_dir, work / "slice"))}},
        "adapters": {name: {"enabled": False} for name in RUNS}, "facts": {"source": "none"},
        "errata": "apply",
        "report": {"bootstrap_resamples": 200},
    }
    (work / "apply.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = run_snakemake(work, work / "apply.yaml", "--cores", "2", "results/report.md")
    assert done.returncode == 0, done.stderr[-5000:]
    return work


def _recall(run: pd.DataFrame, evidence: pd.DataFrame, questions: list[str], k: int) -> float:
    """LoCoMo's evidence recall@k written out afresh, averaged over `questions`: the share of a question's
    evidence entries (an entry listed twice counts twice) among its top k turns; 1.0 without evidence (upstream)."""
    top = {q: set(g.sort_values("rank").item_id[:k]) for q, g in run.groupby("question_id")}
    gold = {q: list(zip(g.item_id, g.relevance)) for q, g in evidence.groupby("question_id")}
    values = [sum(r for i, r in gold[q] if i in top.get(q, set())) / sum(r for _, r in gold[q]) if q in gold else 1.0
              for q in questions]
    return sum(values) / len(values)


def test_corrections_are_counted_and_scored(work):
    norm = json.loads((work / "results" / "locomo" / "normalization.json").read_text(encoding="utf-8"))
    # conv-26 holds 9 of the 38 shipped corrections, conv-30 holds 3; the other 26 are in conversations left out
    assert norm["counts"]["evidence_errata"] == {"known": 38, "applied": 12, "question_absent": 26}
    assert {n["code"]: n["count"] for n in norm["normalizations"]}["evidence_erratum_applied"] == 12
    qrels = pd.read_parquet(work / "results" / "locomo" / "qrels.parquet")
    assert set(qrels[qrels.question_id == "conv-26_q139"].item_id) == {"D17:19"}
    published = pd.read_parquet(work / "results" / "locomo" / "scores-published" / "bm25.parquet")
    assert published.question_id.nunique() == 12


def test_report_shows_each_moved_figure_both_ways(work):
    results = work / "results" / "locomo"
    run = pd.read_parquet(results / "runs" / "bm25.parquet")
    qrels = pd.read_parquet(results / "qrels.parquet")
    errata = pd.read_parquet(results / "evidence_errata.parquet")
    as_published = pd.concat([qrels[~qrels.question_id.isin(errata.question_id)],
                              errata[errata.evidence == "published"][list(qrels.columns)]])
    report = (work / "results" / "report.md").read_text(encoding="utf-8")
    section = report[report.index("#### Evidence errata — locomo"):]
    assert "12 known wrong evidence labels were corrected" in section
    scores = pd.read_parquet(results / "scores" / "bm25.parquet")
    for k in (1, 5, 10, 25, 50):
        scored = list(scores[(scores.metric == f"evidence_recall@{k}") & scores.skip.isna()].question_id)
        before, after = _recall(run, as_published, scored, k), _recall(run, qrels, scored, k)
        row = f"| bm25 | evidence_recall@{k} | {before:.4f} | {after:.4f} | {after - before:+.4f} |"
        assert (row in section) == bool(round(before, 12) != round(after, 12)), (k, before, after)
    moved = re.findall(r"^\| bm25 \| evidence_recall@\d+ \|", section, flags=re.M)
    assert moved, "the corrections move no recall figure on this slice"
    assert "| locomo-ev-conv-26-q139 | conv-26_q139 | D17:18 | D17:19 |" in section


def test_the_default_run_scores_nothing_twice(work):
    dry = run_snakemake(work, work / "apply.yaml", "results/report.md", "-n", "--config", "errata=published",
                        "--quiet", "rules")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "parse" in dry.stdout and "score_published" not in dry.stdout
