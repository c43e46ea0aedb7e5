"""The offline results explorer (issue 26) in real headless Chromium, on the end-to-end run of test_workflow.py:
the leaderboard shows summary.json's figures and draws each system's CI, the outcome filter keeps exactly the
questions the score files say, an opened question shows its gold turns, a shared URL restores the view, a run
without QA shows no QA panel, and the page logs no error and asks for nothing but its own files. BEAM (issue 33)
on a run of its own, 2 chats of BEAM-100K: the measures of change equal summary.json's, a question shows its
gold roles.

Skips when Playwright or Debian's chromium is absent; MEMBENCH_REQUIRE_BROWSER=1 (CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_snakemake, shared_path
from membench.jobs.job import Job, Named
from membench.report.change import MEASURES as CHANGE_MEASURES
from membench.stages.explorer import rule_explorer
from test_workflow import workflow_results, workflow_run  # noqa: F401  (the shared end-to-end run)

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
def workflow(workflow_results):  # noqa: F811
    """test_workflow.py's end-to-end run as it left it (which builds results/explorer), read and never edited."""
    return workflow_results


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


def svg_value(svg, coordinate: str) -> float:
    """An x coordinate of an interval chart back on its axis (the <svg> carries its domain and plot span)."""
    lo, hi, x0, x1 = (float(svg.get_attribute(f"data-{k}")) for k in ("lo", "hi", "x0", "x1"))
    return lo + (float(coordinate) - x0) / (x1 - x0) * (hi - lo)


def test_the_leaderboard_draws_each_systems_ci_on_one_axis_with_the_baseline_marked(browser, workflow, page):  # noqa: F811
    summary = json.loads((workflow / "results" / "summary.json").read_text(encoding="utf-8"))
    baseline = "bm25"
    for dataset, record in summary["datasets"].items():
        metric = record["headline_metrics"][0]
        goto(page, url(workflow, f"#ds={dataset}&metric={metric}"), "#board-chart-svg svg")
        page.wait_for_function(  # this dataset's chart, not the one drawn before it
            "runs => { const drawn = new Set([...document.querySelectorAll('#board-chart-svg svg g.interval')]"
            ".map((g) => g.dataset.run)); return drawn.size === runs.length && runs.every((r) => drawn.has(r)); }",
            arg=list(record["adapters"]))
        svg = page.locator("#board-chart-svg svg")
        intervals = {g.get_attribute("data-run"): g for g in svg.locator("g.interval").all()}
        assert set(intervals) == set(record["adapters"]) and svg.locator("g.interval").count() == len(intervals)
        for run, figures in record["adapters"].items():
            fig, g = figures["all"][metric], intervals[run]
            tol = (float(svg.get_attribute("data-hi")) - float(svg.get_attribute("data-lo"))) * 1e-5
            assert svg_value(svg, g.locator("circle.mean").get_attribute("cx")) == pytest.approx(fig["mean"], abs=tol)
            if fig["ci_lo"] is None:
                assert g.locator("line.ci").count() == 0
                continue
            bar = g.locator("line.ci")
            assert bar.get_attribute("y1") == bar.get_attribute("y2")  # horizontal
            ends = sorted(svg_value(svg, bar.get_attribute(a)) for a in ("x1", "x2"))
            assert ends == [pytest.approx(fig["ci_lo"], abs=tol), pytest.approx(fig["ci_hi"], abs=tol)], (dataset, run)
            assert (float(g.get_attribute("data-ci-lo")), float(g.get_attribute("data-ci-hi"))) == (
                fig["ci_lo"], fig["ci_hi"])
            tip = g.locator("title").inner_html()  # the figures on hover: "run: mean [lo, hi], n = N"
            assert tip.startswith(f"{run}: ") and float(tip.split(": ")[1].split(" ")[0]) == fig["mean"]
        base = svg.locator("line.base")  # the baseline: a line at its mean, its row named so in words
        assert base.get_attribute("data-baseline") == baseline
        assert svg_value(svg, base.get_attribute("x1")) == pytest.approx(
            record["adapters"][baseline]["all"][metric]["mean"], abs=1e-5)
        assert "(baseline)" in intervals[baseline].locator("text.run").inner_html()
        assert page.locator("#board-table tbody tr").count() == len(intervals)  # the numbers stay beside it
        assert not page.locator("#change").is_visible()  # no measures of change outside BEAM


def test_a_run_without_qa_shows_no_qa_panel(browser, workflow, page):  # noqa: F811
    """QA is off in this run: no dataset ships answers, and neither the question view nor the filters show a QA
    panel, empty or not (a CSS display once overrode the panel's `hidden`)."""
    goto(page, url(workflow, "#ds=locomo&view=questions"), "#qtable tbody tr")
    assert page.evaluate("Object.values(MEMBENCH_DATA).every((d) => !d.qa && !d.calibration)")
    assert not page.locator("#f-verdict-box").is_visible()
    page.locator("#qtable tbody button").first.click()
    page.wait_for_selector('#question[data-ready="1"]')
    for panel in ("#q-qa", "#q-answers", "#q-calibration", "#f-verdict-box"):
        assert not page.locator(panel).is_visible(), panel
    shown = page.locator("body").inner_text()  # what is rendered: hidden elements have no text here
    for words in ("Generated answers", "Judge calibration", "QA verdict", "Verdict"):
        assert words not in shown, words


BEAM_CHATS = ("1", "2")  # 40 of BEAM-100K's 400 questions, 4 of each ability


@pytest.fixture(scope="module")
def beam(browser, tmp_path_factory):
    """A small BEAM run of its own, built up to results/explorer (about 25 s on one core): 2 chats of BEAM-100K,
    the three lexical systems, QA off. Its own run rather than test_workflow.py's, whose pinned report it would
    change."""
    source = shared_path("beam", "100K")
    work = tmp_path_factory.mktemp("beam-explorer")
    for chat in BEAM_CHATS:
        shutil.copytree(source / chat, work / "beam" / chat)
    off = {"enabled": False}
    config = {"resources_dir": str(work / "resources"), "embeddings_dir": str(work / "embeddings"),
              "datasets": {"longmemeval-s": {"kind": "longmemeval", **off}, "locomo": {"kind": "locomo", **off},
                           "procedural": {"kind": "procedural", **off},
                           "beam-slice": {"kind": "beam", "path": str(work / "beam")}},
              "adapters": {a: off for a in ("bm25-upstream", "bm25-v2", "dense", "hybrid", "state-aware",
                                            "action-only")},
              "facts": {"adapters": ["bm25"]}}
    (work / "test-config.yaml").write_text(json.dumps(config), encoding="utf-8")
    done = run_snakemake(work, work / "test-config.yaml", "--cores", "1", "results/explorer")
    assert done.returncode == 0, done.stderr[-4000:]
    return work


@pytest.fixture
def beam_page(browser, beam):
    yield from checked_page(browser)


def test_the_change_view_shows_summary_jsons_measures_and_coverage(beam, beam_page):
    pg, record = beam_page, json.loads((beam / "results" / "summary.json").read_text())["datasets"]["beam-slice"]
    change, coverage = record["change"], record["data_counts"]["change"]
    goto(pg, url(beam, "#ds=beam-slice"), "#change-table tbody tr")
    assert pg.locator("#change").is_visible()
    wanted = [(f"{name}@10", ability, up) for name, ability, up in CHANGE_MEASURES if ability in coverage]
    heads = pg.locator("#change-table thead th[data-measure]")
    assert [h.get_attribute("data-measure") for h in heads.all()] == [m for m, _, _ in wanted]
    for head, (measure, ability, up) in zip(heads.all(), wanted):  # each labelled with its ability and direction
        text = head.inner_text()
        assert ability.replace("_", " ") in text and ("more is better" if up else "less is better") in text
        caption = pg.locator(f'#change-charts figure[data-measure="{measure}"] figcaption').inner_text()
        assert ability.replace("_", " ") in caption and ("more is better" if up else "less is better") in caption
    rows = {r.get_attribute("data-run"): r for r in pg.locator("#change-table tbody tr").all()}
    assert set(rows) == set(change) == set(record["adapters"])
    for run, row in rows.items():
        for measure, _, _ in wanted:
            cell, fig = row.locator(f'td[data-measure="{measure}"]'), change[run].get(measure)
            if fig is None:
                assert cell.inner_text().startswith("—"), (run, measure)
                continue
            assert float(cell.locator('[data-field="mean"]').inner_text()) == fig["mean"], (run, measure)
            if fig["ci_lo"] is None:
                assert cell.locator('[data-field="ci"]').inner_text() == "n/a"
                continue
            lo, hi = (float(x) for x in cell.locator('[data-field="ci"]').inner_text().strip("[]").split(", "))
            assert (lo, hi) == (fig["ci_lo"], fig["ci_hi"])
            assert int(cell.locator('[data-field="n"]').inner_text()) == fig["n"]
            g = pg.locator(f'#change-charts figure[data-measure="{measure}"] g.interval[data-run="{run}"]')
            assert (float(g.get_attribute("data-ci-lo")), float(g.get_attribute("data-ci-hi"))) == (lo, hi)
    for measure, _, _ in wanted:  # one interval per system in each measure's chart
        assert pg.locator(f'#change-charts figure[data-measure="{measure}"] g.interval').count() == len(rows)
    for ability, counts in coverage.items():
        row = pg.locator(f'#change-coverage tr[data-ability="{ability}"]')
        assert int(row.locator('[data-field="questions"]').inner_text()) == counts["questions"]
        assert int(row.locator('[data-field="scored"]').inner_text()) == counts["scored"]
        assert int(row.locator('[data-field="not-scored"]').inner_text()) == counts["questions"] - counts["scored"]
    assert "both sides name the same messages: 1" in pg.locator("#change-coverage").inner_text()


def test_a_beam_question_shows_its_gold_roles(beam, beam_page):
    """Which gold message is the original and which the update, the two sides, the events in gold order; and
    where each system's top 10 holds them (from the run files)."""
    pg, results = beam_page, beam / "results" / "beam-slice"
    roles = pd.read_parquet(results / "gold_roles.parquet")
    ranked = pd.read_parquet(results / "runs" / "bm25.parquet")
    ranked = ranked[(ranked.granularity == "turn") & (ranked["rank"] <= 10)]
    questions = pd.read_parquet(results / "questions.parquet")
    labels = {"original_info": "original", "updated_info": "update", "first_statement": "side 1",
              "second_statement": "side 2", "first_event": "first event", "second_event": "second event"}
    for ability in ("knowledge_update", "contradiction_resolution", "temporal_reasoning", "event_ordering"):
        qid = questions[questions.question_type == ability].question_id.iloc[0]
        mine = roles[roles.question_id == qid]
        expected = [(role, g, list(rows.item_id)) for (role, g), rows in mine.groupby(["role", "group"], sort=False)]
        goto(pg, url(beam, f"#ds=beam-slice&view=questions&q={qid}"), '#question[data-ready="1"]')
        shown = pg.locator("#q-roles-table tbody tr").all()
        assert [(r.get_attribute("data-role"), int(r.get_attribute("data-group")),
                 r.locator('[data-field="items"]').inner_text().split(", ")) for r in shown] == expected, qid
        for n, ((role, _, items), row) in enumerate(zip(expected, shown)):
            label = row.locator("th").inner_text()
            events = f"event {n + 1} of {len(expected)} (gold order)"  # an ordering's events, all in gold order
            assert label.startswith(labels[role] if role != "event" else events), (qid, label)
            top = ranked[ranked.question_id == qid]
            hits = top[top.item_id.isin(items)]["rank"]
            found = row.locator('[data-field="found"]').inner_text()
            assert (f"bm25 #{hits.min()}" in found.split(", ")) if len(hits) else "bm25 #" not in found, (qid, role)
        if ability == "knowledge_update":
            gold = pg.locator("#q-gold").inner_text()
            assert "— original" in gold and "— update" in gold  # the gold turns say their role too
    plain = questions[questions.question_type == "abstention"].question_id.iloc[0]  # no gold, no roles
    goto(pg, url(beam, f"#ds=beam-slice&view=questions&q={plain}"), '#question[data-ready="1"]')
    assert not pg.locator("#q-roles").is_visible()


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


def test_beam_ships_its_measures_of_change_and_gold_roles_and_other_benchmarks_do_not():
    from membench.explorer.data import change_payload, roles_payload

    roles = pd.DataFrame({"question_id": ["q1", "q1", "q2", "q2", "q2", "q9"],
                          "role": ["original_info", "updated_info", "event", "event", "event", "event"],
                          "group": [0, 0, 0, 0, 2, 0], "item_id": ["5", "9", "1", "2", "7", "3"]})
    assert roles_payload(roles, ["q1", "q2", "q3"]) == {"roles": {  # gold order; an event may name several messages
        "q1": [["original_info", 0, ["5"]], ["updated_info", 0, ["9"]]],
        "q2": [["event", 0, ["1", "2"]], ["event", 2, ["7"]]]}}
    assert roles_payload(roles.iloc[:0], ["q1"]) == {} and roles_payload(None, ["q1"]) == {}
    fig = {"mean": 0.5, "ci_lo": 0.25, "ci_hi": 0.75, "n": 4}
    record = {"change": {"bm25": {"fresh@10": fig, "stale@10": fig, "fresh@5": fig}},
              "data_counts": {"change": {"knowledge_update": {"questions": 5, "scored": 4, "side_empty": 1}}}}
    got = change_payload(record, ["bm25", "dense"])["change"]
    assert got["measures"] == [{"name": "fresh@10", "ability": "knowledge_update", "up": True},
                               {"name": "stale@10", "ability": "knowledge_update", "up": False}]
    assert got["runs"] == {"bm25": {"fresh@10": fig, "stale@10": fig}, "dense": {"fresh@10": None, "stale@10": None}}
    assert got["coverage"] == record["data_counts"]["change"] and got["k"] == 10
    assert change_payload({"data_counts": {"conversations": 10}}, ["bm25"]) == {}
