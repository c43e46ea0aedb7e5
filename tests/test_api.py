"""The public Python API (membench.api): `load` a dataset, `evaluate` a run on it without the workflow.

A run the workflow wrote (bm25 on LoCoMo and the LongMemEval fragment, run here with --cores 1), fed back to
`membench.evaluate` as its Parquet table and as its TREC file, gives the workflow's own per-question scores and
summary rows, exactly; a three-question LoCoMo case worked out by hand pins the formulas and the aggregation."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

import membench
from conftest import REPO, run_snakemake

OFF = ("bm25-upstream", "bm25-time", "bm25-v2", "dense", "hybrid", "substring", "state-aware", "action-only")
DATASETS = {"locomo": ("locomo", "locomo_dir"), "lme-fragment": ("longmemeval", "longmemeval_dir")}


@pytest.fixture(scope="module")
def workflow(tmp_path_factory, locomo_dir, longmemeval_dir):
    """The workflow's bm25 run, scores and summary (default bootstrap) on LoCoMo and the LongMemEval fragment."""
    work = tmp_path_factory.mktemp("api-workflow")
    config = {"datasets": {"longmemeval-s": {"enabled": False}, "procedural": {"enabled": False},
                           "locomo": {"kind": "locomo", "path": str(locomo_dir)},
                           "lme-fragment": {"kind": "longmemeval", "path": str(longmemeval_dir)}},
              "adapters": {name: {"enabled": False} for name in OFF}, "facts": {"source": "none"}}
    (work / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = run_snakemake(work, work / "cfg.yaml", "--cores", "1", "results/summary.json")
    assert done.returncode == 0, done.stderr[-5000:]
    return work


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("form", ["parquet", "trec"])
@pytest.mark.parametrize("dataset", sorted(DATASETS))
def test_a_workflow_run_scores_as_the_workflow_scored_it(workflow, request, dataset, form):
    kind, fixture = DATASETS[dataset]
    results = workflow / "results"
    data = membench.load(kind, request.getfixturevalue(fixture), name=dataset)
    run = results / dataset / "runs" / "bm25.trec"
    if form == "parquet":
        run = pd.read_parquet(results / dataset / "runs" / "bm25.parquet")  # the benchmark's own ids
    scores, summary = membench.evaluate(run, data, name="bm25" if form == "parquet" else None)

    pd.testing.assert_frame_equal(scores, pd.read_parquet(results / dataset / "scores" / "bm25.parquet"))
    want = pd.read_parquet(results / "summary.parquet")
    want = want[(want.dataset == dataset) & (want.adapter == "bm25")].reset_index(drop=True)
    assert len(summary) == len(want) > 0
    assert set(summary.split) == {"all", "tune", "holdout"}
    assert set(summary.unit) == {"conversation" if kind == "locomo" else "question"}
    pd.testing.assert_frame_equal(summary, want, check_exact=True)  # the same code: every figure to the bit

    cells = json.loads((results / "summary.json").read_text(encoding="utf-8"))["datasets"][dataset]["adapters"]["bm25"]
    top = summary[(summary.group_by == "all") & summary.metric.isin(data.record.headlines)]
    assert {(s, m) for s, metrics in cells.items() for m in metrics} == set(zip(top.split, top.metric))
    for row in top.itertuples():  # summary.json: the headlines, rounded to 6 places
        assert cells[row.split][row.metric] == {key: None if math.isnan(getattr(row, key)) else
                                                round(float(getattr(row, key)), 6)
                                                for key in ("mean", "ci_lo", "ci_hi")} | {"n": int(row.n)}


@pytest.mark.data
@pytest.mark.slow
def test_a_parsed_folder_loads_as_the_native_files_do(workflow, locomo_dir):
    from_folder = membench.load(workflow / "results" / "locomo")
    from_files = membench.load("locomo", locomo_dir)
    assert (from_folder.name, from_folder.kind, from_folder.record) == ("locomo", "locomo", from_files.record)
    for table in ("questions", "turns", "haystacks", "qrels"):
        pd.testing.assert_frame_equal(from_folder.tables[table], from_files.tables[table], check_dtype=False)


@pytest.mark.data
@pytest.mark.slow
def test_the_readme_example_runs(workflow, locomo_dir, monkeypatch, capsys):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Scoring a run from Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 10
    monkeypatch.chdir(workflow)  # the README's paths: results/... of a finished run, LoCoMo's file in data/locomo
    exec(compile(code.replace('"data/locomo"', repr(str(locomo_dir))), "README.md", "exec"), {})
    assert "evidence_recall@10" in capsys.readouterr().out


# ---------------------------------------------------------------- three questions worked out by hand

def _turns(session: int) -> list[dict]:
    return [{"speaker": "Ann" if t % 2 else "Ben", "dia_id": f"D{session}:{t}", "text": f"turn {t} of {session}"}
            for t in (1, 2, 3)]


@pytest.fixture
def tiny(tmp_path):
    """One LoCoMo conversation (two sessions of three turns) and three QAs: q0 (tune, category 4) on D1:1,
    q1 (holdout, category 1) on D1:2 and D2:1, q2 (tune, category 4) on D2:2."""
    qa = [{"question": "a?", "answer": "a", "evidence": ["D1:1"], "category": 4},
          {"question": "b?", "answer": "b", "evidence": ["D1:2", "D2:1"], "category": 1},
          {"question": "c?", "answer": "c", "evidence": ["D2:2"], "category": 4}]
    sample = {"sample_id": "conv-x", "qa": qa, "conversation": {
        "speaker_a": "Ann", "speaker_b": "Ben", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": _turns(1), "session_2_date_time": "2:00 pm on 9 May, 2023", "session_2": _turns(2)}}
    (tmp_path / "locomo10.json").write_text(json.dumps([sample]), encoding="utf-8")
    return membench.load("locomo", tmp_path)


RANKED = {"conv-x_q0": ["D2:3", "D1:1"],                                      # @1 0, @5 1
          "conv-x_q1": ["D2:1", "D1:1", "D1:3", "D2:3", "D2:2", "D1:2"],      # @1 1/2, @5 1/2, @10 1
          "conv-x_q2": ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]}      # @1 0, @5 1


def _run() -> pd.DataFrame:
    """RANKED as scores only (no rank column, no granularity), rows shuffled: evaluate ranks by score."""
    rows = [(q, item, float(10 - r)) for q, items in RANKED.items() for r, item in enumerate(items)]
    return pd.DataFrame(rows, columns=["question_id", "item_id", "score"]).sample(frac=1, random_state=1)


def test_three_questions_by_hand(tiny):
    scores, summary = membench.evaluate(_run(), tiny, name="mine", cluster=False, resamples=1000, seed=0)
    by = scores.set_index(["question_id", "metric"]).value
    assert [by[(q, "evidence_recall@1")] for q in RANKED] == [0.0, 0.5, 0.0]
    assert [by[(q, "evidence_recall@5")] for q in RANKED] == [1.0, 0.5, 1.0]
    assert [by[(q, "evidence_recall@10")] for q in RANKED] == [1.0, 1.0, 1.0]

    cell = summary.set_index(["split", "group_by", "group", "metric"])
    expected = {("all", "all", "all", "evidence_recall@1"): (1 / 6, 3), ("all", "all", "all", "evidence_recall@5"): (5 / 6, 3),
                ("all", "all", "all", "evidence_recall@50"): (1.0, 3), ("tune", "all", "all", "evidence_recall@1"): (0.0, 2),
                ("tune", "all", "all", "evidence_recall@5"): (1.0, 2), ("holdout", "all", "all", "evidence_recall@5"): (0.5, 1),
                ("all", "question_type", "4 single-hop", "evidence_recall@5"): (1.0, 2),
                ("all", "question_type", "1 multi-hop", "evidence_recall@1"): (0.5, 1)}
    for key, (mean, n) in expected.items():
        assert cell.loc[key, "mean"] == pytest.approx(mean, abs=1e-15) and cell.loc[key, "n"] == n, key
    assert set(summary.adapter) == {"mine"} and set(summary.dataset) == {"locomo"} and set(summary.unit) == {"question"}
    assert len(summary) == 5 * 5 and (summary.n_skipped == 0).all()  # 5 metrics x (3 splits + 2 groups)

    # the percentile bootstrap written out: numpy's draws for seed 0, 1000 resamples of the 3 questions
    values = np.array([0.0, 0.5, 0.0])
    means = values[np.random.default_rng(0).integers(0, 3, size=(1000, 3))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    row = cell.loc[("all", "all", "all", "evidence_recall@1")]
    assert (row.ci_lo, row.ci_hi) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert math.isnan(cell.loc[("holdout", "all", "all", "evidence_recall@1"), "ci_lo"])  # one question: no spread

    # by default as the workflow: LoCoMo resampled by conversation; one conversation cannot show its own spread
    _, clustered = membench.evaluate(_run(), tiny)
    assert set(clustered.unit) == {"conversation"} and clustered.ci_lo.isna().all()
    assert clustered["mean"].tolist() == summary["mean"].tolist()


def test_a_trec_file_reads_as_the_dataframe(tiny, tmp_path):
    path = tmp_path / "mine.trec"
    path.write_text("".join(f"{q} Q0 {item} {r} {10 - r:.6f} my-tag\n" for q, items in RANKED.items()
                            for r, item in enumerate(items, 1)), encoding="utf-8")
    from_file = membench.evaluate(path, tiny, resamples=200)
    from_frame = membench.evaluate(_run(), tiny, name="my-tag", resamples=200)
    pd.testing.assert_frame_equal(from_file.scores, from_frame.scores)
    pd.testing.assert_frame_equal(from_file.summary, from_frame.summary)


def test_a_run_must_name_the_benchmarks_own_ids(tiny):
    opaque = pd.DataFrame({"question_id": ["conv-x_q0"], "item_id": ["s0123456789abcdef_1"], "rank": [1]})
    with pytest.raises(ValueError, match=r"not in their question's haystack.*dia_ids such as D1:3"):
        membench.evaluate(opaque, tiny)
    with pytest.raises(ValueError, match="question"):
        membench.evaluate(opaque.assign(question_id="q00000", item_id="D1:1"), tiny)
    with pytest.raises(ValueError, match="ranked twice"):
        membench.evaluate(pd.DataFrame({"question_id": ["conv-x_q0"] * 2, "item_id": ["D1:1"] * 2, "rank": [1, 2]}),
                          tiny)
    with pytest.raises(ValueError, match="granularity"):
        membench.evaluate(opaque.assign(item_id="D1:1", granularity="session"), tiny)


def test_importing_membench_loads_no_pandas():
    code = "import sys, membench; assert 'pandas' not in sys.modules; membench.evaluate; assert 'pandas' in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
