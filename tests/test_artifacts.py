"""Artifacts to paste (summary.json, LaTeX, console, per-question CSV) and the stratified subset."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter

import numpy as np
import pandas as pd

from conftest import pdflatex_compiles
from membench.benchmarks.registry import benchmark
from membench.datasets.normalization import NormalizationLog
from membench.datasets.subset import covering_haystacks, subset
from membench.report.artifacts import console_table, latex_table, per_question_frame, summary_json, write_per_question
from membench.report.headlines import with_ci
from membench.report.results import resampling_note

SUBSET = {"per_group": 3, "seed": 0}


def _summary() -> pd.DataFrame:
    rows = []
    for adapter, (a, b) in {"bm25": (0.5, 0.6), "my_sys&co": (0.7, 0.55)}.items():
        for metric, mean in (("evidence_recall@1", a), ("evidence_recall@10", b)):
            rows.append({"dataset": "locomo", "adapter": adapter, "split": "all", "group_by": "all", "group": "all",
                         "metric": metric, "mean": mean, "ci_lo": mean - 0.05, "ci_hi": mean + 0.05, "n": 100,
                         "n_skipped": 0, "unit": "conversation"})
    return pd.DataFrame(rows)


def _significance() -> pd.DataFrame:
    return pd.DataFrame([{"dataset": "locomo", "adapter": "my_sys&co", "split": "all", "metric": m, "p_value": p,
                          "p_holm": h, "family_size": 2} for m, p, h in
                         (("evidence_recall@1", 0.01, 0.02), ("evidence_recall@10", 0.04, 0.08))])


def test_latex_table_bold_best_marks_holm_and_compiles(tmp_path):
    tex = latex_table("locomo", benchmark("locomo"), _summary(), _significance(), "bm25")
    lines = tex.splitlines()
    assert lines[0] == "% membench: locomo (locomo), split all"
    assert r"my\_sys\&co & \textbf{.700}$^{*}$ {\scriptsize[.650, .750]} & .550 {\scriptsize[.500, .600]} \\" in lines
    assert r"bm25 & .500 {\scriptsize[.450, .550]} & \textbf{.600} {\scriptsize[.550, .650]} \\" in lines
    assert "family of 2 tests" in tex and "resampling unit: conversation" in tex and r"\toprule" in tex
    path = tmp_path / "locomo.tex"
    path.write_text(tex, encoding="utf-8")
    subset_tex = tmp_path / "subset.tex"
    subset_tex.write_text(latex_table("locomo", benchmark("locomo"), _summary(), _significance(), "bm25", SUBSET))
    assert subset_tex.read_text().startswith("% SUBSET RUN (3 questions per question group, seed 0)")
    pdflatex_compiles([path, subset_tex], tmp_path)


def test_summary_json_and_console_say_subset_first():
    text = summary_json(_summary(), {"locomo": benchmark("locomo")}, SUBSET)
    assert text.splitlines()[0].startswith('{"subset": "SUBSET RUN (3 questions per question group')
    data = json.loads(text)
    cell = data["datasets"]["locomo"]["adapters"]["bm25"]["all"]["evidence_recall@10"]
    assert cell == {"mean": 0.6, "ci_lo": 0.55, "ci_hi": 0.65, "n": 100}
    assert data["datasets"]["locomo"]["resampling_unit"] == "conversation"
    assert json.loads(summary_json(_summary(), {"locomo": benchmark("locomo")}))["subset"] is None
    console = console_table(_summary(), {"locomo": benchmark("locomo")}, SUBSET).splitlines()
    assert console[0].startswith("SUBSET RUN") and "0.700 [0.650, 0.750]" in console[-1]


def test_per_question_csv(tmp_path):
    paths = {}
    for adapter in ("bm25", "dense"):
        frame = pd.DataFrame({"question_id": ["q1", "q1", "q2", "q2"], "metric": ["m@1", "m@5"] * 2,
                              "value": [0.0, 1.0, 0.5, 1.0], "split": ["holdout"] * 2 + ["tune"] * 2,
                              "question_type": ["x"] * 4, "tier": [None] * 4, "skip": [None] * 4})
        paths[adapter] = [tmp_path / f"{adapter}.parquet"]
        frame.to_parquet(paths[adapter][0])
    wide = per_question_frame(paths)
    assert list(wide.columns) == ["question_id", "adapter", "split", "question_type", "tier", "skip", "m@1", "m@5"]
    assert len(wide) == 4 and wide.loc[(wide.adapter == "dense") & (wide.question_id == "q2"), "m@1"].item() == 0.5
    write_per_question(wide, tmp_path / "pq.parquet", tmp_path / "pq.csv", SUBSET)
    lines = (tmp_path / "pq.csv").read_text().splitlines()
    assert lines[0].startswith("# SUBSET RUN") and lines[1].startswith("question_id,adapter,split")
    assert pd.read_csv(tmp_path / "pq.csv", comment="#").shape == (4, 8)


def _fresh(data):
    """The session fixture with its own normalisation log (subset() notes into it)."""
    return dataclasses.replace(data, log=NormalizationLog(), counts=dict(data.counts))


def test_subset_is_stratified_deterministic_and_self_contained(parsed):
    cut = subset(_fresh(parsed["locomo"]), 3, 0)
    assert Counter(q["question_type"] for q in cut.questions) == {
        c: 3 for c in ("adversarial", "multi-hop", "open-domain", "single-hop", "temporal")}
    again = subset(_fresh(parsed["locomo"]), 3, 0)
    assert [q["question_id"] for q in cut.questions] == [q["question_id"] for q in again.questions]
    assert all(q["split"] == ("tune", "holdout")[q["index"] % 2] for q in cut.questions)  # the full run's split
    ids = {q["question_id"] for q in cut.questions}
    assert {r["question_id"] for r in cut.qrels} <= ids and cut.qrels
    assert {h["haystack_id"] for h in cut.haystacks} == {q["haystack_id"] for q in cut.questions}
    assert cut.log.count("subset") == 1986 - 15
    # drawn from the fewest conversations (at least two) that hold 3 of every category: for seed 0 those are
    # conv-43 and conv-47, whose dialogs in locomo10.json hold 680 + 689 turns, all kept (searched whole)
    assert cut.counts["subset"]["haystacks"] == 2 and cut.counts["subset"]["of_haystacks"] == 10
    assert {h["haystack_id"] for h in cut.haystacks} == {"conv-43", "conv-47"} and len(cut.turns) == 680 + 689
    tiers = subset(_fresh(parsed["procedural"]), 2, 1)
    assert Counter(q["tier"] for q in tiers.questions) == {"EASY": 2, "MEDIUM": 2, "HARD": 2}
    assert tiers.counts["subset"]["of_questions"] == 40 and len(tiers.turns) == len(parsed["procedural"].turns)


def test_covering_haystacks_stop_at_the_first_cover_of_at_least_two():
    """Three haystacks h1: [x], h2: [x], h3: [y] and one question wanted per group. Every seed's draw covers
    both groups with at least two haystacks, and takes the third only when the first two are h1 and h2."""
    questions = [{"haystack_id": h, "question_type": t} for h, t in (("h1", "x"), ("h2", "x"), ("h3", "y"))]
    seen = set()
    for seed in range(12):
        order = [["h1", "h2", "h3"][i] for i in np.random.default_rng(seed).permutation(3)]
        chosen = covering_haystacks(questions, {"x": 1, "y": 1}, False, np.random.default_rng(seed))
        expected = set(order) if set(order[:2]) == {"h1", "h2"} else set(order[:2])
        assert chosen == expected and "h3" in chosen
        seen.add(len(chosen))
    assert seen == {2, 3}


def test_one_conversation_has_no_ci_and_every_artifact_says_why(tmp_path):
    """stats.bootstrap_matrix gives no bounds for one unit: the cells say so instead of printing nan."""
    one = _summary().assign(ci_lo=np.nan, ci_hi=np.nan)
    console = console_table(one, {"locomo": benchmark("locomo")})
    assert "nan" not in console
    assert re.search(r"\n  bm25 +0\.500 \[n/a: 1 conversation\]  0\.600 \[n/a: 1 conversation\]\n", console)
    tex = latex_table("locomo", benchmark("locomo"), one, _significance(), "bm25")
    assert r"bm25 & .500 {\scriptsize [n/a: 1 conversation]} & \textbf{.600} {\scriptsize [n/a: 1 conversation]} \\" \
        in tex.splitlines()
    note = resampling_note(one)
    assert note.endswith("This run's figures rest on a single conversation, so they have no conversation-level CI "
                         "(a bootstrap needs two units to show any spread: the cells say `n/a: 1 conversation`) and "
                         "no paired test can find a difference (p = 1). `report.cluster_bootstrap: false` resamples "
                         "its questions instead.")
    assert "single" not in resampling_note(_summary())  # two or more conversations: CIs, no such note
    assert with_ci(0.25, np.nan, np.nan, "question") == "0.2500 [n/a: 1 question]"
    (tmp_path / "one.tex").write_text(tex, encoding="utf-8")
    pdflatex_compiles([tmp_path / "one.tex"], tmp_path)
