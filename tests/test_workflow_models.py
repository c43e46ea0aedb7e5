"""The whole pipeline with every model stage on, against a real OpenAI-compatible server on loopback:
facts, fact-augmented ranking, the Procedural judge and answer-mode QA, on the real data (LoCoMo: two of its ten
conversations; QA on 20 questions).
A second run from an empty results folder must pay for nothing: the call cache answers everything."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import jobs_reading, locomo_slice, real_datasets, run_snakemake
from membench.qa.calibration import calibration_summary
from membench.report.headlines import p_text
from membench.report.judge_trust import rate_ci
from openai_server import FakeOpenAIServer
from test_explorer import browser, checked_page, url  # noqa: F401  (browser: the fixture)

pytestmark = pytest.mark.slow
KEY = "sk-membench-test-SECRET-7f3a9c"


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    return run_snakemake(work, work / "models.yaml", *args, env={"OPENAI_API_KEY": KEY})


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def work(tmp_path_factory, server, locomo_dir, procedural_dir, longmemeval_dir, embedding_dir):
    work = tmp_path_factory.mktemp("models")
    locomo_dir = locomo_slice(locomo_dir, work / "locomo-slice")  # conv-26 (QA's first 20, an erratum) + conv-30
    config = {
        "embeddings_dir": str(embedding_dir),
        "llm_cache": str(work / "cache" / "calls.jsonl"),
        "datasets": real_datasets(longmemeval_dir, locomo_dir, procedural_dir),
        # dense off: the model stages judge and answer on bm25 and state-aware runs, so dense's jobs were work for nothing
        "adapters": {name: {"enabled": False} for name in
                     ("bm25-upstream", "bm25-time", "bm25-v2", "dense", "hybrid", "substring", "action-only")},
        "llm": {"model": "fake-model", "base_url": server.url, "concurrency": 4, "timeout": 10,
                "prices": {"fake-model": {"input_per_1m": 0.5, "output_per_1m": 1.5}}, "budget_usd": 100.0},
        "facts": {"source": "llm", "adapters": ["bm25"]},
        "judge": {"enabled": True, "k": 10, "adapters": ["bm25", "state-aware"]},
        "qa": {"enabled": True, "adapters": ["bm25"], "k": 5, "limit": 20, "full_context": True,
               "judge_calibration": {"enabled": True, "n": 10}},
        "report": {"bootstrap_resamples": 1000},
    }
    (work / "models.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = snakemake(work, "--cores", "2", "results/report.md")
    assert done.returncode == 0, done.stderr[-5000:]
    return work


def test_report_shows_model_stages_and_costs(work):
    report = (work / "results" / "report.md").read_text(encoding="utf-8")
    for part in ("## Model-call stages", "### Answer-mode QA", "### Procedural: official labels vs the LLM-judge",
                 "### Model-call costs", "bm25+facts"):
        assert part in report, part
    costs = report[report.index("### Model-call costs"):]
    for stage in ("facts", "judge", "qa-answer", "qa-verdict", "qa-calibration"):
        assert f"| {stage}" in costs, stage
    for part in ("#### Judge calibration", "#### Rubrics and prompts", "judge false-accept [95% CI]",
                 "gold_erratum_corrected"):
        assert part in report, part


def test_every_call_was_made_once(work, server):
    turns = pd.read_parquet(work / "results" / "locomo" / "turns.parquet")
    lme = pd.read_parquet(work / "results" / "lme-fragment" / "turns.parquet")
    assert server.by_task["facts"] == turns.session_key.nunique() + lme.session_key.nunique() == 19 + 19 + 80
    assert max(server.by_hash.values()) == 1  # no prompt was ever sent twice
    qa = pd.read_parquet(work / "results" / "locomo" / "qa" / "bm25.parquet")
    assert len(qa) == 20 and (qa.status == "ok").all()
    full = pd.read_parquet(work / "results" / "locomo" / "qa" / "full-context.parquet")
    conv26 = turns[turns.conversation_id == "conv-26"].session_id.nunique()
    assert conv26 == 19 and len(full) == 20 and (full.status == "ok").all() and (full.n_context == conv26).all()
    judged = pd.concat(pd.read_parquet(p) for p in (work / "results" / "procedural" / "judgments").glob("*.parquet"))
    assert (judged.status == "ok").all() and judged.score.between(0, 10).all()


def test_the_full_context_baseline_sits_beside_the_runs(work, server):
    """qa.full_context: every question answered from its whole history, the last session's last turn included."""
    turns = pd.read_parquet(work / "results" / "locomo" / "turns.parquet")
    last = turns[turns.conversation_id == "conv-26"].sort_values(["session_key", "turn_index"]).text.iloc[-1]
    assert any(last in r["messages"][-1]["content"] for r in server.requests)
    summary = pd.read_parquet(work / "results" / "summary.parquet")
    full = summary[(summary.adapter == "full-context") & (summary.split == "all") & (summary.group_by == "all")]
    assert set(full.dataset) == {"locomo", "lme-fragment"} and "qa/accuracy" in set(full.metric)
    report = (work / "results" / "report.md").read_text(encoding="utf-8")
    assert "full-context" in report[report.index("### Answer-mode QA"):report.index("### Model-call costs")]


def test_what_retrieval_buys_sits_beside_the_runs(work):
    """The no-memory and oracle baselines (on by default) answer every QA question; the oracle from exactly the
    sessions holding its gold turns; summary.json and the report test bm25 against each baseline."""
    results = work / "results"
    turns = pd.read_parquet(results / "locomo" / "turns.parquet")
    qrels = pd.read_parquet(results / "locomo" / "qrels.parquet")
    gold = qrels[(qrels.relevance > 0) & (qrels.granularity == "turn")]
    sessions = gold.merge(turns[turns.conversation_id == "conv-26"], on="item_id").groupby("question_id").session_id
    oracle = pd.read_parquet(results / "locomo" / "qa" / "oracle.parquet").set_index("question_id")
    none = pd.read_parquet(results / "locomo" / "qa" / "no-memory.parquet")
    assert len(oracle) == len(none) == 20 and (oracle.status == "ok").all() and (none.n_context == 0).all()
    assert oracle.n_context.to_dict() == sessions.nunique().reindex(oracle.index, fill_value=0).to_dict()
    bm25 = pd.read_parquet(results / "locomo" / "qa" / "bm25.parquet")
    assert bm25.evidence_in_top_k.notna().sum() == oracle.index.isin(gold.question_id).sum() == 20
    answers = json.loads((results / "summary.json").read_text(encoding="utf-8"))["datasets"]["locomo"]["answers"]
    assert set(answers["runs"]["bm25"]["vs"]) == {"no-memory", "oracle", "full-context"}
    found = bm25.dropna(subset=["evidence_in_top_k"])
    found = found[found.correct.notna()]
    assert answers["runs"]["bm25"]["evidence_in_top_k"]["n"] == len(found)
    assert answers["runs"]["bm25"]["evidence_in_top_k"]["mean"] == pytest.approx(
        (found.evidence_in_top_k >= 1).mean(), abs=1e-6)
    report = (results / "report.md").read_text(encoding="utf-8")
    section = report[report.index("### What retrieval buys (answer mode)"):]
    assert "| bm25 |" in section[:section.index("#### lme-fragment")] and "accuracy − no-memory" in section


def test_fact_runs_use_the_facts(work):
    plain = pd.read_parquet(work / "results" / "locomo" / "runs" / "bm25.parquet")
    facts = pd.read_parquet(work / "results" / "locomo" / "runs" / "bm25+facts.parquet")
    assert len(plain) == len(facts) and not plain.item_id.equals(facts.item_id)
    summary = pd.read_parquet(work / "results" / "summary.parquet")
    metrics = set(summary[summary.dataset == "procedural"].metric)
    assert {"extended/nDCG@10", "extended/judged@10", "judged@10"} <= metrics
    ext = summary[(summary.dataset == "procedural") & (summary.metric == "extended/judged@10") & (summary.split == "all")
                  & (summary.group_by == "all") & (summary.adapter == "bm25")]
    assert ext["mean"].iloc[0] == 1.0  # every top-10 item is labelled or judged after the judge stage


def readers_in(results: Path, table: str) -> set[str]:
    """What the finished run says reads ``<dataset>/<table>.parquet``, one first output per job, from the files
    it made (not from the rules): ingest (its session logs), score and score_extended (every score file; on
    LongMemEval the same job writes the retrieval logs), the Procedural judge, the plots (first: the difficulty table), QA and its
    baselines, LoCoMo's observation facts (on turns) and the results explorer (every dataset's tables)."""
    out = {"results/explorer"}
    for folder in sorted(p.parent for p in results.glob("*/questions.parquet")):
        files = [folder / "difficulty.parquet", *folder.glob("scores/*.parquet"),
                 *folder.glob("judgments/*.parquet")]
        answers = [p for p in folder.glob("qa/*.parquet")  # QA reads qrels: where the evidence is
                   if not p.name.endswith(".scores.parquet") and p.name != "calibration.parquet"]
        files += answers
        if table != "qrels":
            files.append(folder / "sessions")
        if table == "turns":
            files += folder.glob("facts/observation")  # LoCoMo's own facts map sessions through turns
            files.append(folder / "efficiency" / "tokens.parquet")  # what each turn costs to read
        out |= {p.relative_to(results.parent).as_posix() for p in files}
    return out


def test_touching_a_table_reruns_exactly_the_jobs_that_read_it(work, tmp_path):
    results = work / "results"
    touched = [f"results/{d}/{t}.parquet" for d in ("lme-fragment", "locomo", "procedural")
               for t in ("haystacks", "turns", "qrels")]
    readers = jobs_reading(work, work / "models.yaml", touched, tmp_path)
    for path in touched:
        dataset, table = path.split("/")[1], Path(path).stem
        expected = {f for f in readers_in(results, table)
                    if f.startswith(f"results/{dataset}/") or f == "results/explorer"}
        assert readers[path] == expected, path
    procedural = readers["results/procedural/haystacks.parquet"]
    assert {"results/procedural/judgments/bm25.parquet",
            "results/procedural/scores/bm25.extended.parquet"} <= procedural
    assert "results/locomo/qa/bm25.parquet" in readers["results/locomo/haystacks.parquet"]
    # LongMemEval's retrieval logs come from the job that scores the run, which reads the qrels
    assert "results/lme-fragment/scores/bm25.parquet" in readers["results/lme-fragment/qrels.parquet"]
    assert (results / "lme-fragment" / "runs" / "bm25.retrieval_log.turn.jsonl").stat().st_size > 0


@pytest.fixture
def page(browser, work):  # noqa: F811  (browser first: a missing browser skips before the pipeline runs)
    yield from checked_page(browser)


def verdict_text(row) -> str:
    """A verdict as the explorer words it (in words, not colour alone)."""
    if row.correct is True or row.correct is False:
        return "✓ correct" if row.correct else "✗ wrong"
    return f"no verdict ({row.status})"


def test_the_explorer_shows_each_answer_its_verdict_and_the_judges_calibration(browser, work, page):  # noqa: F811
    """QA mode in the results explorer: an opened question lists bm25's and the full-context baseline's answers
    and verdicts as qa/*.parquet holds them, the judge's calibration beside them as the report states it, and
    the QA-verdict filter keeps the questions the judge rejected."""
    results = work / "results"
    answers = {run: pd.read_parquet(results / "locomo" / "qa" / f"{run}.parquet").astype(object)
               .set_index("question_id") for run in ("bm25", "full-context", "no-memory", "oracle")}
    buys = json.loads((results / "summary.json").read_text(encoding="utf-8"))["datasets"]["locomo"]["answers"]
    summary = calibration_summary(pd.read_parquet(results / "locomo" / "qa" / "calibration.parquet"))
    expected_calibration = [[r.group, str(r.questions),
                             rate_ci(r.false_accept, r.fa_low, r.fa_high, r.false_accepts, r.should_reject),
                             rate_ci(r.false_reject, r.fr_low, r.fr_high, r.false_rejects, r.should_accept),
                             str(r.not_judged)] for r in summary.itertuples(index=False)]
    report = (results / "report.md").read_text(encoding="utf-8")
    assert expected_calibration[0][2] in report  # the figure the report shows, not a second computation
    for n, qid in enumerate(answers["bm25"].index):
        page.goto(url(work, f"#ds=locomo&view=questions&q={qid}"))
        if n == 0:
            page.reload()  # a fresh load of the opened question; the rest are hash changes
        page.wait_for_function("q => document.getElementById('question').dataset.ready === '1' && "
                               "document.getElementById('q-title').textContent.startsWith(q + ': ')", arg=qid)
        rows = page.locator("#q-answers tbody tr")
        shown = {r.get_attribute("data-run"): (r.locator('[data-field="answer"]').text_content(),
                                               r.locator('[data-field="verdict"]').inner_text()) for r in rows.all()}
        assert shown == {run: ("" if pd.isna(df.answer[qid]) else df.answer[qid], verdict_text(df.loc[qid]))
                         for run, df in answers.items()}, qid
        share = answers["bm25"].evidence_in_top_k[qid]
        evidence = {r.get_attribute("data-run"): r.locator('[data-field="evidence"]').inner_text() for r in rows.all()}
        words = "✓ all" if share >= 1 else "✗ none" if share == 0 else f"{round(share * 100)}% of it"
        assert evidence == {"bm25": words, "full-context": "—", "no-memory": "—", "oracle": "—"}  # none retrieve
        if n == 0:  # what retrieval buys, as summary.json holds it
            cells = [[c.inner_text() for c in r.locator("th, td").all()]
                     for r in page.locator("#q-buys-table tbody tr").all()]
            assert [c[0] for c in cells] == ["bm25", "no-memory", "oracle", "full-context"]
            acc = buys["runs"]["bm25"]["accuracy"]  # conv-26's questions only: one conversation, no CI
            assert acc["ci_lo"] is None
            assert cells[0][2] == f"{acc['mean']:.4f} [n/a: 1 conversation] (n={acc['n']})"
            assert f"| bm25 | {cells[0][1]} | {cells[0][2]} |" in report  # the report's words
            vs = buys["runs"]["bm25"]["vs"]["no-memory"]
            assert cells[0][5] == f"{vs['mean_diff']:+.3f} [n/a: 1 conversation], p(Holm) {p_text(vs['p_holm'])}"
            assert f" | {cells[0][5]}" in report  # the report's words (and its * where significant)
        table = page.locator("#q-calibration-table tbody tr")
        assert [[c.inner_text() for c in r.locator("th, td").all()] for r in table.all()] == expected_calibration
    page.click("#close-question")
    for choice, verdict in (("bm25|0", False), ("bm25|1", True)):
        page.select_option("#f-verdict", choice)
        kept = {q for q, c in answers["bm25"].correct.items() if c is verdict}
        assert page.locator("#count").inner_text().startswith(f"{len(kept)} of ")
        assert {r.get_attribute("data-qid") for r in page.locator("#qtable tbody tr").all()} == kept


def test_rerun_from_empty_results_pays_nothing(work, server):
    before = server.total
    report = (work / "results" / "report.md").read_text(encoding="utf-8")
    shutil.rmtree(work / "results")
    done = snakemake(work, "--cores", "2", "results/report.md")
    assert done.returncode == 0, done.stderr[-5000:]
    assert server.total == before
    again = (work / "results" / "report.md").read_text(encoding="utf-8")
    strip = lambda text: text[text.index("### Answer-mode QA"):text.index("### Model-call costs")]  # noqa: E731
    assert strip(again) == strip(report)


def test_no_key_in_any_file(work):
    for path in work.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
