"""QA you can trust: fail fast and loud, SIGINT like SIGTERM, the judge calibrated on probes built from the
data, re-asked verdicts and gold-label errata -- against the real loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from membench.benchmarks.registry import benchmark
from membench.datasets.errata import apply_errata, load_errata
from membench.benchmarks.registry import parse_dataset
from membench.llm.cache import make_key
from membench.qa.calibration import calibration_summary, wilson
from membench.qa.probes import near_miss, paraphrase
from membench.report.model_stages import qa_section
from membench.stages import qa, qa_calibration as calibration
from membench.llm.stage_calls import StageStopped
from openai_server import FakeOpenAIServer, default_responder, prompt_input, prompt_task

ROOT = Path(__file__).resolve().parents[1]
MODEL = "fake-model"
LOCOMO_ERRATA = benchmark("locomo").errata  # the shipped LoCoMo answer errata


def llm(url: str, **kw) -> dict:
    return {"model": MODEL, "base_url": url, "concurrency": 2, "backoff": 0.01, "budget_usd": None, **kw}


@pytest.fixture(scope="module")
def locomo(ingested, locomo_dir, tmp_path_factory):
    """The ingested LoCoMo copy with the shipped errata applied (as the parse rule does), and a hand-made run:
    the first five turns of conv-26 for every question."""
    folder = tmp_path_factory.mktemp("locomo-errata")
    for name in ("turns", "haystacks", "qrels"):
        (folder / f"{name}.parquet").symlink_to(ingested["locomo"] / f"{name}.parquet")
    parsed = parse_dataset("locomo", locomo_dir)
    apply_errata(parsed, {"enabled": True}, LOCOMO_ERRATA)
    parsed.tables()["questions"].to_parquet(folder / "questions.parquet")
    turns = pd.read_parquet(folder / "turns.parquet")
    conv = turns[turns.conversation_id == "conv-26"].sort_values(["session_key", "turn_index"])
    questions = pd.read_parquet(folder / "questions.parquet")
    run = pd.DataFrame([(qid, r + 1, item, 1.0 / (r + 1), "turn") for qid in questions.question_id
                        for r, item in enumerate(conv.item_id.head(5))],
                       columns=["question_id", "rank", "item_id", "score", "granularity"])
    run.to_parquet(folder / "run.parquet")
    return folder


def run_qa(folder: Path, tmp: Path, cfg: dict, **kw) -> pd.DataFrame:
    return qa.run(benchmark("locomo"), folder, folder / "run.parquet", tmp / "qa.parquet", tmp / "s.parquet", cfg,
                  tmp / "calls.jsonl", tmp / "cost.json", dataset="locomo", adapter="hand", progress=False, **kw)


# ------------------------------------------------------------------------------------------- fail fast

STAGE_SCRIPT = ("import json, sys\nfrom pathlib import Path\nfrom membench.logs import log_to\n"
                "from membench.benchmarks.registry import benchmark\nfrom membench.stages import qa\n"
                "with log_to(None):\n"
                "    d = Path(sys.argv[2])\n"
                "    qa.run(benchmark('locomo'), d, d / 'run.parquet', Path(sys.argv[3]) / 'qa.parquet', None,\n"
                "           json.loads(sys.argv[1]), Path(sys.argv[3]) / 'calls.jsonl', None, progress=False)\n")


def stage_process(cfg: dict, folder: Path, tmp: Path, env: dict | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-c", STAGE_SCRIPT, json.dumps(cfg), str(folder), str(tmp)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if " ERROR " in line]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("case", ["refused", "401", "404"])
def test_unusable_endpoint_stops_at_once_with_one_clear_line(locomo, tmp_path, case):
    with FakeOpenAIServer() as server:
        url = {"refused": f"http://127.0.0.1:{free_port()}/v1", "401": server.url,
               "404": server.url.replace("/v1", "/wrong/v1")}[case]
        if case == "401":
            server.add_fault("401", times=100)
        cfg = {"llm": llm(url, max_retries=5, backoff=1.0), "qa": {"limit": 30}}
        started = time.monotonic()
        proc = stage_process(cfg, locomo, tmp_path, env={"OPENAI_API_KEY": "sk-secret-never-shown-123"})
        _, stderr = proc.communicate(timeout=60)
        elapsed = time.monotonic() - started
    assert proc.returncode == 1 and elapsed < 10, (elapsed, stderr[-2000:])
    assert "Traceback" not in stderr and "sk-secret-never-shown-123" not in stderr
    [line] = error_lines(stderr)
    endpoint = url.rsplit("/v1", 1)[0]
    assert endpoint in line and f"'{MODEL}'" in line and "check" in line and "call cache" in line
    expected = {"refused": "connection refused", "401": "rejected the API key", "404": "model or endpoint not found"}
    assert expected[case] in line
    assert server.total <= 2  # at most the calls in flight when the first error came back: no retries


def test_failed_share_above_threshold_fails_the_stage(locomo, tmp_path):
    with FakeOpenAIServer() as server:
        server.add_fault("500", times=2, match="TASK: answer")  # 2 of 10 answers fail (no retries)
        cfg = {"llm": llm(server.url, max_retries=0), "qa": {"limit": 10}}
        with pytest.raises(StageStopped, match=r"2 of 10 qa-answer calls failed \(20.0%, above "
                                               r"llm.max_failed_share 2.0%\)") as stopped:
            run_qa(locomo, tmp_path, cfg)
        assert stopped.value.status == "failed" and "call cache" in stopped.value.message
        cost = json.loads((tmp_path / "cost.json").read_text())
        assert cost["status"] == "failed" and cost["summary"]["stages"]["qa-answer"]["failures"] == 2
        assert server.by_task == {"answer": 10}  # a failed answer batch starts no verdicts
        # the same faults under a threshold that tolerates them: complete, and the failures are counted
        server.add_fault("500", times=2, match="TASK: answer")
        done = run_qa(locomo, tmp_path, {"llm": llm(server.url, max_retries=0, max_failed_share=0.25),
                                         "qa": {"limit": 10}})
    assert json.loads((tmp_path / "cost.json").read_text())["status"] == "complete"
    assert (done.status == "failed").sum() == 2


def test_sigint_mid_stage_ends_cleanly_and_the_rerun_repays_nothing(locomo, tmp_path):
    with FakeOpenAIServer(delay=0.1) as server:
        cfg = {"llm": llm(server.url), "qa": {"limit": 16}}
        proc = stage_process(cfg, locomo, tmp_path)
        deadline = time.monotonic() + 60
        while server.answered < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 1, stderr[-2000:]
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
        [line] = error_lines(stderr)
        assert "stop requested (SIGINT)" in line and "kept: every answered call" in line
        assert "not kept: this job's partial outputs" in line
        first = server.total
        assert 4 <= first < 16 and server.answered == first
        run_qa(locomo, tmp_path, cfg)
        assert set(server.by_hash.values()) == {1}  # nothing answered before the interrupt was asked again


# ------------------------------------------------------------------------------------------- calibration

def conv26(folder: Path) -> list[str]:
    q = pd.read_parquet(folder / "questions.parquet")
    return list(q[q.haystack_id == "conv-26"].question_id)


def test_probe_builders_on_hand_made_golds():
    assert paraphrase("7 May 2023") == "May 7, 2023" and paraphrase("June 9, 2023") == "9 June 2023"
    assert paraphrase("3") == "three" and paraphrase("hiking, pottery, camping") == "camping, pottery and hiking"
    assert paraphrase("Adoption agencies.") == "As far as I recall, adoption agencies."
    assert near_miss("The week before 9 June 2023") == "The week before 9 June 2022"
    assert near_miss("in June") == "in September" and near_miss("last Sunday") == "last Tuesday"
    assert near_miss("3 times") == "5 times" and near_miss("two dogs") == "four dogs" and near_miss("hiking") is None
    assert wilson(0, 0)[0] != wilson(0, 0)[0]  # NaN without probes
    p, lo, hi = wilson(3, 10)
    assert p == 0.3 and round(lo, 4) == 0.1078 and round(hi, 4) == 0.6032


def test_calibration_on_conv26_counts_every_probe_kind(locomo, tmp_path):
    with FakeOpenAIServer() as server:
        cfg = {"llm": llm(server.url, concurrency=4), "qa": {"question_ids": conv26(locomo),
                                                             "judge_calibration": {"enabled": True, "n": None}}}
        probes = calibration.run(benchmark("locomo"), locomo, tmp_path / "cal.parquet", cfg, tmp_path / "calls.jsonl",
                                 tmp_path / "cost.json", dataset="locomo", progress=False)
        asked = server.total
        # 199 conv-26 questions; 2 withdrawn by errata; 47 category-5 (rule, no call, made-up = adversarial answer)
        assert Counter(probes.probe) == {"gold": 197, "paraphrase": 197, "other_gold": 150, "made_up": 47,
                                         "near_miss": 45}
        assert asked == (probes.judged_by == "llm").sum() == (197 - 47) * 2 + 150 + 45
        by = probes.set_index(["question_id", "probe"]).answer
        assert by[("conv-26_q5", "gold")] == "The Saturday before 25 May 2023"  # the erratum's answer
        assert by[("conv-26_q5", "paraphrase")] == "The Saturday before May 25, 2023"
        assert by[("conv-26_q5", "near_miss")] == "The Saturday before 25 May 2022"
        assert by[("conv-26_q152", "made_up")] == "self-care is important"
        assert ("conv-26_q138", "gold") not in by.index
        summary = calibration_summary(probes).set_index("group")
        # the server accepts when the normalised gold is inside the answer: every wrong probe is rejected, and
        # the rewordings (dates turned round, a decline the upstream rule does not know) are rejected too
        assert summary.loc["all", "false_accepts"] == 0 and summary.loc["all", "should_reject"] == 242
        assert summary.loc["5 adversarial", "false_rejects"] == 47  # upstream's rule rejects the reworded decline
        report = qa_section({("locomo", "hand"): pd.DataFrame(columns=list(qa.QA_COLUMNS)).astype(qa.QA_COLUMNS)},
                            resamples=200, calibration={"locomo": probes})
        assert "#### Judge calibration" in report
        assert "| all | 197 | 197 | 197 | 150 | 45 | 47 | 0.000 [0.000, 0.016] (0/242) |" in report

        # rerun: every verdict is a cache hit
        calibration.run(benchmark("locomo"), locomo, tmp_path / "cal.parquet", cfg, tmp_path / "calls.jsonl", None,
                        progress=False)
        assert server.total == asked


def test_a_judge_that_always_says_correct_has_false_accept_one(locomo, tmp_path):
    def yes(body):
        return json.dumps({"correct": True}) if prompt_task(body) == "verdict" else default_responder(body)

    with FakeOpenAIServer(yes) as server:
        cfg = {"llm": llm(server.url, concurrency=4),
               "qa": {"question_ids": conv26(locomo), "judge_calibration": {"enabled": True, "n": 40}}}
        probes = calibration.run(benchmark("locomo"), locomo, tmp_path / "cal.parquet", cfg, tmp_path / "calls.jsonl", None,
                                 progress=False)
    summary = calibration_summary(probes).set_index("group")
    judged_by_model = [g for g in summary.index if g != "all" and not g.startswith("5 ")]
    assert judged_by_model and all(summary.loc[g, "false_accept"] == 1.0 for g in judged_by_model)
    assert all(summary.loc[g, "false_reject"] == 0.0 for g in judged_by_model)
    llm_probes = probes[probes.judged_by == "llm"]
    assert llm_probes.accepted.all() and len(llm_probes) == server.total
    report = qa_section({("locomo", "hand"): pd.DataFrame(columns=list(qa.QA_COLUMNS)).astype(qa.QA_COLUMNS)},
                        resamples=200, calibration={"locomo": probes})
    assert "**Warning:** on locomo / 2 temporal the judge accepted" in report


# ------------------------------------------------------------------------------------------- stability

def test_judge_samples_three_rerun_pays_nothing_and_report_shows_flips(locomo, tmp_path):
    seen: Counter = Counter()

    def flippy(body):  # the same verdict prompt is accepted, rejected, accepted... as a sampling judge might
        if prompt_task(body) != "verdict":
            return default_responder(body)
        key = prompt_input(body)
        seen[key] += 1
        return json.dumps({"correct": seen[key] % 2 == 1})

    q = pd.read_parquet(locomo / "questions.parquet")
    ids = list(q[(q.haystack_id == "conv-26") & (q.category != 5) & q.erratum.isna()].question_id[:6])
    with FakeOpenAIServer(flippy) as server:
        cfg = {"llm": llm(server.url, concurrency=1), "qa": {"question_ids": ids, "judge_samples": 3}}
        out = run_qa(locomo, tmp_path, cfg)
        assert server.by_task == {"answer": 6, "verdict": 18}
        first = server.total
        again = run_qa(locomo, tmp_path, cfg)
        assert server.total == first  # three samples are three cache keys, all hits
    pd.testing.assert_frame_equal(out, again)
    assert list(out.verdicts) == ["101"] * 6 and out.correct.all()
    report = qa_section({("locomo", "hand"): out}, resamples=200)
    assert "| locomo | hand | 3 | 0.6667 | 0.0000–1.0000 | 0.5774 | 1.000 (6/6) |" in report
    records = [json.loads(x) for x in (tmp_path / "calls.jsonl").read_text().splitlines()]
    verdict_tags = [r["request"]["tags"] for r in records if r["stage"] == "qa-verdict"]
    assert Counter(t.get("sample", 0) for t in verdict_tags) == {0: 6, 1: 6, 2: 6}
    assert all(t["rubric"].startswith("default@") and t["prompt"].startswith("verdict@") for t in verdict_tags)
    assert "#### Rubrics and prompts" in report and "`default@" in report


def test_cache_key_tags_are_hashed_not_sent():
    msgs = [{"role": "user", "content": "x"}]
    assert make_key(MODEL, msgs, {}) == make_key(MODEL, msgs, {}, {})  # no tags: the old key
    assert make_key(MODEL, msgs, {}, {"sample": 1}) != make_key(MODEL, msgs, {}, {"sample": 2})
    assert make_key(MODEL, msgs, {}, {"sample": None}) == make_key(MODEL, msgs, {})


# ------------------------------------------------------------------------------------------- errata

def test_errata_are_visible_switchable_and_verified_against_the_data(locomo_dir, tmp_path):
    errata = load_errata(LOCOMO_ERRATA)
    assert len(errata) == 5 and all(s.startswith("https://github.com/snap-research/locomo/") for e in errata
                                    for s in e.sources)
    parsed = parse_dataset("locomo", locomo_dir)
    assert apply_errata(parsed, {"enabled": True}, LOCOMO_ERRATA) == 5
    log = {n["code"]: n for n in parsed.log.as_list()}
    assert log["gold_erratum_corrected"]["count"] == 3 and log["gold_erratum_withdrawn"]["count"] == 2
    q = parsed.tables()["questions"].set_index("question_id")
    assert q.loc["conv-26_q5", "answer"] == "The Saturday before 25 May 2023"
    assert q.loc["conv-26_q5", "upstream_answer"] == "The sunday before 25 May 2023"
    assert pd.isna(q.loc["conv-26_q138", "answer"]) and q.loc["conv-26_q138", "erratum"] == "locomo-27-3"

    off = parse_dataset("locomo", locomo_dir)
    assert apply_errata(off, {"enabled": False}, LOCOMO_ERRATA) == 0
    assert {n["code"]: n["count"] for n in off.log.as_list()}["gold_errata_off"] == 5
    assert off.tables()["questions"].erratum.isna().all()

    mine = json.loads((ROOT / "membench/benchmarks/locomo/errata.json").read_text())
    mine["errata"][0]["upstream_answer"] = "something else"
    (tmp_path / "e.json").write_text(json.dumps(mine))
    other = parse_dataset("locomo", locomo_dir)
    assert apply_errata(other, {"enabled": True, "path": str(tmp_path / "e.json")}, LOCOMO_ERRATA) == 4
    assert {n["code"]: n["count"] for n in other.log.as_list()}["gold_erratum_not_applicable"] == 1


def test_qa_reports_with_and_without_errata(locomo, tmp_path):
    answers = {"When did Melanie run a charity race?": "The Saturday before 25 May 2023",
               "What fields would Caroline be likely to pursue in her educaton?": "Counseling or mental health",
               "What kind of painting did Caroline share with Melanie on October 13, 2023?": "An abstract painting "
                                                                                               "with blue streaks",
               "When did Caroline go to the LGBTQ support group?": "7 May 2023"}

    def responder(body):
        if prompt_task(body) == "answer":
            question = prompt_input(body).rsplit("Question: ", 1)[1].split(" Use the dates")[0].strip()
            return answers[question]
        return default_responder(body)

    with FakeOpenAIServer(responder) as server:
        cfg = {"llm": llm(server.url), "qa": {"question_ids": ["conv-26_q0", "conv-26_q2", "conv-26_q5",
                                                               "conv-26_q138"]}}
        out = run_qa(locomo, tmp_path, cfg).set_index("question_id")
        # one verdict per question against the gold in use, one more against the upstream answer where an
        # erratum changed it; the withdrawn question only against upstream
        assert server.by_task == {"answer": 4, "verdict": 1 + 2 + 2 + 1}
    assert out.correct.tolist()[:3] == [True, True, True]
    assert out.loc["conv-26_q138", "status"] == "excluded" and pd.isna(out.loc["conv-26_q138", "correct"])
    assert out.correct_upstream.tolist() == [True, False, False, False]
    assert out.loc["conv-26_q5", "f1"] == 1.0 and out.loc["conv-26_q5", "f1_upstream"] < 1.0
    report = qa_section({("locomo", "hand"): out.reset_index()}, resamples=200)
    # 3 of 3 scored with errata; 1 of 4 without (q2, q5 judged against the upstream answer, q138 back in)
    assert "| locomo | hand | 3 | 1.0000 [1.0000, 1.0000] | 0.2500 [0.0000, 0.7500] |" in report
