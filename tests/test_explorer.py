"""The offline results explorer (issue 26) in real headless Chromium, on the end-to-end run of test_workflow.py:
the leaderboard shows summary.json's figures, the outcome filter keeps exactly the questions the score files say,
an opened question shows its gold turns, a shared URL restores the view, and the page logs no error and asks for
nothing but its own files.

Skips when Playwright or Debian's chromium is absent; MEMBENCH_REQUIRE_BROWSER=1 (CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from membench.jobs.job import Job, Named
from membench.stages.explorer import rule_explorer
from test_workflow import workflow  # noqa: F401  (the module's end-to-end run, which builds results/explorer)

CHROMIUM = os.environ.get("MEMBENCH_CHROMIUM", "/usr/bin/chromium")


def _browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[browser]')"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser():
    missing = _browser_missing()
    if missing:
        if os.environ.get("MEMBENCH_REQUIRE_BROWSER") == "1":
            pytest.fail(missing + "; MEMBENCH_REQUIRE_BROWSER=1 makes this a failure", pytrace=False)
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


def checked_page(browser):
    """A 1280x800 page; at the end, no console error and no request but for file:// URLs (a generator, so the
    `page` fixtures of other test modules check the same)."""
    pg = browser.new_page(viewport={"width": 1280, "height": 800})
    errors, requests = [], []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("request", lambda r: requests.append(r.url))
    yield pg
    pg.close()
    assert errors == []
    assert requests and [u for u in requests if not u.startswith("file://")] == []


@pytest.fixture
def page(browser, workflow):  # noqa: F811  (browser first: a missing browser skips before the pipeline runs)
    yield from checked_page(browser)


def url(workflow, fragment: str = "") -> str:  # noqa: F811
    return (workflow / "results" / "explorer" / "index.html").as_uri() + fragment


def goto(pg, address: str, selector: str) -> None:
    pg.goto(address)
    pg.wait_for_selector(selector)


def test_the_report_links_the_explorer(workflow):  # noqa: F811
    report = (workflow / "results" / "report.md").read_text(encoding="utf-8")
    assert "](explorer/index.html)" in report and (workflow / "results" / "explorer" / "index.html").is_file()


def test_leaderboard_lists_every_system_with_the_summary_figures(browser, workflow, page):  # noqa: F811
    summary = json.loads((workflow / "results" / "summary.json").read_text(encoding="utf-8"))
    sig = pd.read_parquet(workflow / "results" / "significance.parquet")
    for dataset, record in summary["datasets"].items():
        metric = record["headline_metrics"][-1]
        goto(page, url(workflow, f"#ds={dataset}&metric={metric}"), "#board-table tbody tr")
        page.reload()
        page.wait_for_selector("#board-table tbody tr")
        shown = {r.get_attribute("data-run"): r for r in page.locator("#board-table tbody tr").all()}
        assert set(shown) == set(record["adapters"]), dataset
        for run, figures in record["adapters"].items():
            fig, row = figures["all"][metric], shown[run]
            assert float(row.locator('[data-field="mean"]').inner_text()) == fig["mean"]
            ci = row.locator('[data-field="ci"]').inner_text()
            if fig["ci_lo"] is None:
                assert ci == "n/a"
            else:
                lo, hi = (float(x) for x in ci.strip("[]").split(", "))
                assert (lo, hi) == (fig["ci_lo"], fig["ci_hi"])
            test = sig[(sig.dataset == dataset) & (sig.adapter == run) & (sig.split == "all") & (sig.metric == metric)]
            p_text = row.locator('[data-field="p_holm"]').inner_text()
            assert p_text == (f"{test.p_holm.iloc[0]:.4f}" if len(test) else "—"), (dataset, run)
    page.set_viewport_size({"width": 390, "height": 800})  # phone width: wide tables scroll inside, the page does not
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def expected_outcome(workflow, dataset: str, metric: str, a: str, b: str) -> set[str]:  # noqa: F811
    """The questions where `a` finds evidence (value > 0) and `b` does not (== 0), from the score files."""
    def values(run):
        s = pd.read_parquet(workflow / "results" / dataset / "scores" / f"{run}.parquet")
        s = s[(s.metric == metric) & s.skip.isna()]
        return dict(zip(s.question_id, s.value))
    va, vb = values(a), values(b)
    return {q for q, v in va.items() if v > 0 and q in vb and vb[q] == 0}


def filter_dense_misses_bm25_finds(pg, workflow):  # noqa: F811
    goto(pg, url(workflow, "#ds=locomo"), "#board-table tbody tr")
    pg.click("#show-browser")
    pg.select_option("#f-metric", "evidence_recall@10")
    pg.select_option("#f-a", "bm25")
    pg.select_option("#f-b", "dense")


def test_outcome_filter_keeps_exactly_the_questions_the_score_files_say(browser, workflow, page):  # noqa: F811
    filter_dense_misses_bm25_finds(page, workflow)
    expected = expected_outcome(workflow, "locomo", "evidence_recall@10", "bm25", "dense")
    assert expected  # the filter is tried on a non-empty answer
    rows = page.locator("#qtable tbody tr")
    assert rows.count() == min(len(expected), 200)  # the first rows at once, the rest on request
    if page.locator("#show-all").is_visible():
        page.click("#show-all")
    assert {r.get_attribute("data-qid") for r in rows.all()} == expected
    assert page.locator("#count").inner_text().startswith(f"{len(expected)} of ")
    page.select_option("#f-split", "holdout")  # filters combine
    if page.locator("#show-all").is_visible():
        page.click("#show-all")
    questions = pd.read_parquet(workflow / "results" / "locomo" / "questions.parquet")
    holdout = set(questions[questions.split == "holdout"].question_id)
    assert {r.get_attribute("data-qid") for r in rows.all()} == expected & holdout


def test_an_opened_question_shows_its_gold_turns_and_a_shared_url_restores_the_view(browser, workflow, page):  # noqa: F811
    filter_dense_misses_bm25_finds(page, workflow)
    first = page.locator("#qtable tbody tr").first
    qid = first.get_attribute("data-qid")
    first.locator("button").focus()
    page.keyboard.press("Enter")  # keyboard alone opens it
    page.wait_for_selector('#question[data-ready="1"]')
    qrels = pd.read_parquet(workflow / "results" / "locomo" / "qrels.parquet")
    gold = set(qrels[(qrels.question_id == qid) & (qrels.relevance > 0)].item_id)
    shown = {e.get_attribute("data-item") for e in page.locator('#q-gold [data-gold="1"]').all()}
    assert gold and gold <= shown
    assert "✓ gold" in page.locator("#q-gold").inner_text()  # marked in words, not by colour alone
    bm25_hits = page.locator('#q-top section[data-run="bm25"] tr[data-gold="1"]')
    assert bm25_hits.count() > 0 and "✓ gold" in bm25_hits.first.inner_text()
    title = page.locator("#q-title").inner_text()

    shared = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        goto(shared, page.url, '#question[data-ready="1"]')
        assert shared.locator("#q-title").inner_text() == title
        assert shared.locator("#q-top").inner_text() == page.locator("#q-top").inner_text()
        shared.click("#close-question")
        assert shared.input_value("#f-a") == "bm25" and shared.input_value("#f-b") == "dense"
        expected = expected_outcome(workflow, "locomo", "evidence_recall@10", "bm25", "dense")
        assert shared.locator("#count").inner_text().startswith(f"{len(expected)} of ")
    finally:
        shared.close()


def test_a_failed_build_leaves_no_explorer_folder(tmp_path):
    target = tmp_path / "results" / "explorer"
    job = Job(input=Named({"summary": str(tmp_path / "absent.json"), "significance": str(tmp_path / "absent.parquet")}),
              output=Named({"folder": str(target)}), params=Named({"datasets": [], "runs": [], "baseline": "bm25"}))
    with pytest.raises(FileNotFoundError):
        rule_explorer(job)
    assert list((tmp_path / "results").iterdir()) == []


def test_a_haystack_ships_only_the_sessions_its_questions_touch():
    """LongMemEval-S has ~50 sessions a haystack: the explorer ships the ones gold or a top-k item lies in."""
    from membench.explorer.data import haystack_sessions

    turns = pd.DataFrame({"session_key": ["k1", "k1", "k2", "k3"], "session_id": ["s1", "s1", "s2", "s3"],
                          "session_date": [None] * 4, "turn_index": [0, 1, 0, 0],
                          "item_id": ["s1_1", "s1_2", "s2_1", "s3_1"], "role": ["user"] * 4,
                          "speaker": [None] * 4, "text": ["a", "b", "c", "d"]})
    haystacks = pd.DataFrame({"haystack_id": ["h"] * 3, "position": [1, 2, 0], "session_key": ["k1", "k2", "k3"]})
    payload = {"questions": {"haystack": ["h"]}, "gold": {"turn": [["s1_2"]]},
               "top": {"bm25": {"session": [[["s3", 1.0, 0]]]}}}
    sessions = haystack_sessions(turns, haystacks, payload)["h"]["sessions"]
    assert [s["id"] for s in sessions] == ["s3", "s1"]  # in the haystack's order
    assert sessions[1]["turns"] == [["s1_1", "user", "a"], ["s1_2", "user", "b"]]


def test_skipped_questions_have_no_score_to_filter_on():
    from membench.explorer.data import _score_columns

    scores = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "metric": ["m"] * 3, "value": [1.0, 0.0, 0.0],
                           "skip": [None, None, "empty_evidence"]})
    assert _score_columns(scores, ["m"], ["q1", "q2", "q3", "q4"]) == {"m": [1.0, 0.0, None, None]}


def test_qa_mode_ships_answers_verdicts_and_the_judges_calibration():
    """Per question and QA'd run: the answer, the verdict (null without one: status says why), LoCoMo's F1; per
    dataset the calibration table as the report words it. Without QA files: no QA keys at all."""
    from membench.qa.calibration import calibration_summary
    from membench.explorer.data import qa_payload
    from membench.report.judge_trust import rate_ci

    qa = pd.DataFrame({"question_id": ["q2", "q1"], "answer": ["Paris", None], "correct": [True, None],
                       "status": ["ok", "failed"], "f1": [1.0, float("nan")]}).astype(
        {"answer": "string", "correct": "boolean", "status": "string"})
    probes = pd.DataFrame({"question_id": ["q1", "q1", "q2"], "question_type": ["single", "single", "multi"],
                           "category": [None, None, None], "probe": ["gold", "near_miss", "gold"],
                           "should_accept": [True, False, True], "accepted": [True, True, None]}).astype(
        {"accepted": "boolean", "category": "Int64"})
    got = qa_payload({"bm25": qa}, probes, ["q1", "q2", "q3"])
    assert got["qa"] == {"runs": ["bm25"], "answers": {"bm25": {
        "answer": [None, "Paris", None], "correct": [None, True, None], "status": ["failed", "ok", None],
        "f1": [None, 1.0, None]}}}
    every = calibration_summary(probes).iloc[0]
    assert got["calibration"]["rows"][0] == [
        "all", 2, rate_ci(every.false_accept, every.fa_low, every.fa_high, every.false_accepts, every.should_reject),
        rate_ci(every.false_reject, every.fr_low, every.fr_high, every.false_rejects, every.should_accept), 1]
    assert got["calibration"]["rows"][0][2].endswith("(1/1)")  # the near miss was accepted
    assert [r[0] for r in got["calibration"]["rows"]] == ["all", "multi", "single"]
    json.dumps(got, allow_nan=False)  # the page's data file holds no NaN
    assert qa_payload({}, None, ["q1"]) == {}
