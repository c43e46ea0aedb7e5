"""membench.llm against a real OpenAI-compatible HTTP server on loopback (tests/openai_server.py)."""

from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from conftest import fresh_python
from membench.config import SCHEMA
from membench.errors import InputError
from membench.llm.cache import CallCache, make_key
from membench.llm.client import LLMClient
from membench.llm.errors import LLMConfigError
from membench.llm.policy import CallPolicy
from membench.llm.pricing import BudgetExceeded, CostMeter
from membench.llm.replies import MalformedReply, json_object_parser, parse_json_object
from membench.llm.section import from_config
from openai_server import FakeOpenAIServer, fake_server  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[1]
MODEL = "fake-model"
KEY = "sk-test-TOPSECRET-7f3a9c1e5b"
GRADE = json_object_parser({"score": int, "reason": str})


def grade_msgs(i) -> list[dict]:
    return [{"role": "system", "content": "You grade relevance.\nTASK: grade"},
            {"role": "user", "content": f"INPUT: question {i} / passage {i}"}]


def first_user(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


class Sleeps(list):
    """A recording stand-in for time.sleep."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(server, tmp_path, *, prices=None, budget=None, name="calls.jsonl", sleep=None, **policy) -> LLMClient:
    """A client of the fake server; ``policy``: CallPolicy fields (backoff 0.01 unless given)."""
    policy.setdefault("backoff", 0.01)
    meter = CostMeter(prices or {MODEL: {"input_per_1m": 1.0, "output_per_1m": 2.0}}, budget)
    return LLMClient(MODEL, server.url, api_key=KEY, cache=CallCache(tmp_path / name), meter=meter,
                     policy=CallPolicy(**policy), sleep=sleep if sleep is not None else Sleeps())


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# ---------------------------------------------------------------------------------------------- basics


def test_happy_path_result_usage_cost(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path)
    msgs = [{"role": "user", "content": "TASK: facts\nINPUT: Alice moved to Oslo. She adopted a cat!"}]
    reply = client.complete(msgs, stage="facts", parse=json_object_parser(["facts"]), temperature=0)
    assert reply.ok and not reply.cached
    assert reply.value == {"facts": ["Alice moved to Oslo.", "She adopted a cat!"]}
    # usage from the server: 11 prompt words, 9 reply words; $1/M in, $2/M out
    assert reply.usage == {"prompt_tokens": 11, "completion_tokens": 9}
    assert reply.cost_usd == pytest.approx((11 * 1.0 + 9 * 2.0) / 1e6)
    assert fake_server.total == 1
    assert fake_server.requests[0]["temperature"] == 0
    assert fake_server.auth_headers == [f"Bearer {KEY}"]
    summ = client.summary()
    assert summ["stages"]["facts"]["calls"] == 1 and summ["spent_usd"] == pytest.approx(29e-6)
    (rec,) = lines(tmp_path / "calls.jsonl")
    assert rec["status"] == "ok" and rec["key"] == make_key(MODEL, msgs, {"temperature": 0})
    assert rec["request"] == {"model": MODEL, "messages": msgs, "params": {"temperature": 0}}
    assert rec["usage"] == {"prompt_tokens": 11, "completion_tokens": 9}
    assert json.loads(rec["response_text"]) == reply.value


def test_responder_protocol(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path)
    ans = client.complete([{"role": "user", "content": "TASK: answer\nINPUT: Paris is the capital. Of France."}])
    assert ans.value == "Paris is the capital."
    v = client.complete([{"role": "user", "content": "TASK: verdict\nINPUT:\nGOLD: Paris\nANSWER: it is paris."}],
                        parse=json_object_parser({"correct": bool}))
    assert v.value == {"correct": True}
    g1 = client.complete(grade_msgs(1), parse=GRADE).value
    assert 0 <= g1["score"] <= 10 and g1 == client.complete(grade_msgs(1), parse=GRADE).value
    with urllib.request.urlopen(fake_server.url + "/models") as r:
        assert json.load(r)["data"][0]["id"] == MODEL
    with urllib.request.urlopen(fake_server.url.removesuffix("/v1") + "/_stats") as r:
        stats = json.load(r)
    assert stats["total"] == 3 and stats["by_task"] == {"answer": 1, "verdict": 1, "grade": 1}
    assert KEY not in json.dumps(stats)


def test_cache_hit_makes_zero_requests(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path)
    reqs = [grade_msgs(i) for i in range(6)]
    first = client.complete_many(reqs, stage="judge", parse=GRADE, progress=False)
    assert fake_server.total == 6
    again = client.complete_many(reqs, stage="judge", parse=GRADE, progress=False)
    assert fake_server.total == 6
    assert [r.value for r in again] == [r.value for r in first] and all(r.cached for r in again)
    assert client.meter.stage("judge")["cache_hits"] == 6 and client.meter.stage("judge")["calls"] == 6
    client.close()
    # a new process (fresh cache object) against another deployment of the same model: still hits
    with FakeOpenAIServer() as other:
        fresh = make_client(other, tmp_path)
        third = fresh.complete_many(reqs, stage="judge", parse=GRADE, progress=False)
        assert other.total == 0 and fake_server.total == 6
        assert [r.value for r in third] == [r.value for r in first]
        assert fresh.summary()["spent_usd"] == 0
    # different params are a different request
    client2 = make_client(fake_server, tmp_path)
    client2.complete(reqs[0], parse=GRADE, temperature=0.7)
    assert fake_server.total == 7


CACHED_RUN = r"""
import json, sys
from membench.llm.cache import CallCache
from membench.llm.client import LLMClient
from membench.llm.pricing import CostMeter
url, cache, msgs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with LLMClient("fake-model", url, api_key="sk-x", cache=CallCache(cache), meter=CostMeter({})) as client:
    replies = client.complete_many(msgs, stage="judge", progress=False)
    print(json.dumps({"cached": sum(r.cached for r in replies), "openai": "openai" in sys.modules}))
"""


def test_a_stage_the_cache_answers_never_imports_openai(fake_server, tmp_path):
    """The openai package (about 1 s to import) is loaded on the first paid attempt, not with the client."""
    def fresh(n: int) -> dict:
        msgs = json.dumps([grade_msgs(i) for i in range(n)])
        return fresh_python(CACHED_RUN, fake_server.url, str(tmp_path / "calls.jsonl"), msgs, timeout=120)

    assert fresh(3) == {"cached": 0, "openai": True} and fake_server.total == 3
    assert fresh(3) == {"cached": 3, "openai": False} and fake_server.total == 3
    assert fresh(4) == {"cached": 3, "openai": True} and fake_server.total == 4


def test_duplicates_in_one_batch_are_asked_once_and_order_kept(fake_server, tmp_path):
    fake_server.delay = 0.05
    client = make_client(fake_server, tmp_path, concurrency=3)
    reqs = [grade_msgs(i % 4) for i in range(12)]
    out = client.complete_many(reqs, parse=GRADE, progress=False)
    assert fake_server.total == 4
    assert fake_server.max_in_flight <= 3
    assert [r.value for r in out] == [out[i % 4].value for i in range(12)]
    assert [json.loads(r.text) for r in out] == [r.value for r in out]


# ---------------------------------------------------------------------------------------------- retries


def test_429_is_retried_and_retry_after_honoured(fake_server, tmp_path):
    sleeps = Sleeps()
    client = make_client(fake_server, tmp_path, backoff=5.0, sleep=sleeps)  # Retry-After: 0 beats backoff
    fake_server.add_fault("429", times=2)
    reply = client.complete(grade_msgs(0), parse=GRADE)
    assert reply.ok and reply.attempts == 3
    assert sleeps == [0.0, 0.0]
    assert fake_server.total == 3 and client.meter.stage("default")["retries"] == 2
    assert client.meter.stage("default")["calls"] == 1  # the 429s are not paid calls


@pytest.mark.parametrize("kind", ["500", "503", "broken_body", "disconnect"])
def test_server_errors_are_retried_with_backoff(fake_server, tmp_path, kind):
    sleeps = Sleeps()
    client = make_client(fake_server, tmp_path, backoff=0.2, sleep=sleeps)
    fake_server.add_fault(kind, times=2)
    reply = client.complete(grade_msgs(0), parse=GRADE)
    assert reply.ok and reply.value["score"] in range(11)
    assert fake_server.total == 3
    assert len(sleeps) == 2
    assert 0.1 <= sleeps[0] <= 0.2 and 0.2 <= sleeps[1] <= 0.4  # exponential, jittered to 50-100 %


def test_timeout_is_retried(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path, timeout=0.5)
    fake_server.add_fault("hang", times=1, hang_seconds=5)
    t0 = time.monotonic()
    reply = client.complete(grade_msgs(0), parse=GRADE)
    assert reply.ok and reply.attempts == 2
    assert time.monotonic() - t0 < 3
    assert fake_server.total == 2


def test_exhausted_retries_record_a_failure_that_the_next_run_retries(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path, max_retries=2)
    fake_server.add_fault("500", times=3)
    reply = client.complete(grade_msgs(0), parse=GRADE)
    assert not reply.ok and reply.value is None and "HTTP 500" in reply.error
    assert fake_server.total == 3
    (rec,) = lines(tmp_path / "calls.jsonl")
    assert rec["status"] == "failed" and rec["response_text"] is None
    assert client.cache.get(reply.key) is None and client.cache.last_failure(reply.key) is not None
    client.close()
    # rule: a recorded failure is never a result; the next run asks again
    again = make_client(fake_server, tmp_path).complete(grade_msgs(0), parse=GRADE)
    assert again.ok and fake_server.total == 4
    # ...unless retry_failed=False, which serves the recorded failure without a call
    client3 = make_client(fake_server, tmp_path, name="other.jsonl", max_retries=0, retry_failed=False)
    fake_server.add_fault("500", times=1)
    assert not client3.complete(grade_msgs(9), parse=GRADE).ok
    assert not client3.complete(grade_msgs(9), parse=GRADE).ok
    assert fake_server.total == 5


def test_auth_error_stops_the_stage(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path)
    fake_server.add_fault("401", times=5)
    with pytest.raises(LLMConfigError, match="rejected the API key"):
        client.complete_many([grade_msgs(i) for i in range(4)], parse=GRADE, progress=False)


# ---------------------------------------------------------------------------------------------- malformed


def test_malformed_reply_is_repaired_and_cached_under_the_original_key(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path)
    fake_server.add_fault("malformed", times=1)
    reply = client.complete(grade_msgs(0), parse=GRADE)
    assert reply.ok and reply.malformed == 1 and reply.value["score"] in range(11)
    assert fake_server.total == 2
    repair = fake_server.requests[1]["messages"]
    assert repair[:2] == grade_msgs(0) and repair[2]["role"] == "assistant"
    assert "not valid JSON" in repair[3]["content"]
    bad, good = lines(tmp_path / "calls.jsonl")
    assert bad["status"] == "failed" and bad["error"].startswith("malformed reply")
    assert good["status"] == "ok" and good["key"] == bad["key"] == reply.key
    assert good["request"]["messages"] == grade_msgs(0) and len(good["repair_messages"]) == 2
    client.close()
    again = make_client(fake_server, tmp_path).complete(grade_msgs(0), parse=GRADE)
    assert again.cached and again.value == reply.value and fake_server.total == 2


def test_all_malformed_is_a_recorded_failure_not_a_value(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path, malformed_retries=2)
    fake_server.add_fault("malformed", times=100, match="question 1 ")
    out = client.complete_many([grade_msgs(0), grade_msgs(1), grade_msgs(2)], parse=GRADE, progress=False)
    assert [r.ok for r in out] == [True, False, True]
    bad = out[1]
    assert bad.value is None and bad.malformed == 3 and "malformed reply" in bad.error
    assert bad.text.startswith("Sure!")  # kept for the record, never parsed into a score
    assert fake_server.total == 5
    assert client.cache.get(bad.key) is None
    assert [r["status"] for r in lines(tmp_path / "calls.jsonl") if r["key"] == bad.key] == ["failed"] * 3
    st = client.meter.stage("default")
    assert st["failures"] == 1 and st["malformed"] == 3 and st["calls"] == 5


def test_repair_off_reasks_the_identical_request(fake_server, tmp_path):
    client = make_client(fake_server, tmp_path, repair=False)
    fake_server.add_fault("malformed", times=1)
    assert client.complete(grade_msgs(0), parse=GRADE).ok
    assert fake_server.requests[0] == fake_server.requests[1]


# ---------------------------------------------------------------------------------------------- durability


KILL_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from membench.llm.cache import CallCache
from membench.llm.client import LLMClient
from membench.llm.policy import CallPolicy
from membench.llm.pricing import CostMeter
from membench.llm.replies import json_object_parser
reqs = [[{{"role": "system", "content": "TASK: grade"}}, {{"role": "user", "content": f"INPUT: item {{i}}"}}]
        for i in range({n})]
client = LLMClient("fake-model", {url!r}, api_key="sk-kill-test-1234567", cache=CallCache({cache!r}),
                   meter=CostMeter(), policy=CallPolicy(concurrency={conc}))
client.complete_many(reqs, stage="judge", parse=json_object_parser(["score"]), progress=False)
print("FINISHED", flush=True)
"""


def test_killed_run_resumes_without_repaying(fake_server, tmp_path):
    n, conc = 20, 2
    cache_path = tmp_path / "judge.jsonl"
    fake_server.delay = 0.1
    script = tmp_path / "run.py"
    script.write_text(KILL_SCRIPT.format(root=str(ROOT), n=n, url=fake_server.url, conc=conc, cache=str(cache_path)))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while fake_server.answered < 6 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.kill()
    out, _ = proc.communicate(timeout=10)
    assert b"FINISHED" not in out, "the run finished before it was killed"
    before = cache_path.read_bytes()
    done = {r["request"]["messages"][1]["content"] for r in lines(cache_path) if r["status"] == "ok"}
    assert 4 <= len(done) < n

    fake_server.delay = 0.0
    client = LLMClient(MODEL, fake_server.url, api_key=KEY, cache=CallCache(cache_path), meter=CostMeter(),
                       policy=CallPolicy(concurrency=conc))
    reqs = [[{"role": "system", "content": "TASK: grade"}, {"role": "user", "content": f"INPUT: item {i}"}]
            for i in range(n)]
    out = client.complete_many(reqs, stage="judge", parse=json_object_parser(["score"]), progress=False)
    assert all(r.ok for r in out)
    assert sum(r.cached for r in out) == len(done)
    counts = Counter(first_user(b) for b in fake_server.requests)
    assert set(counts) == {m[1]["content"] for m in reqs}  # nothing lost
    assert all(counts[c] == 1 for c in done)  # completed calls are never repaid
    repeated = [c for c, k in counts.items() if k > 1]
    assert len(repeated) <= conc and all(counts[c] == 2 for c in repeated)  # at most the calls in flight
    after = cache_path.read_bytes()
    assert after.startswith(before)  # append-only
    assert len(CallCache(cache_path)) == n


def test_truncated_last_line_is_ignored_and_appends_start_on_a_new_line(fake_server, tmp_path, caplog):
    path = tmp_path / "calls.jsonl"
    client = make_client(fake_server, tmp_path)
    client.complete_many([grade_msgs(i) for i in range(3)], parse=GRADE, progress=False)
    client.close()
    with open(path, "ab") as fh:  # a crash in the middle of writing a 4th line
        fh.write(b'{"key": "abc123", "model": "fake-model", "request": {"mod')
    with caplog.at_level(logging.WARNING, logger="membench.llm"):
        cache = CallCache(path)
    assert "truncated last line 4" in caplog.text
    assert len(cache) == 3 and cache.skipped_lines == 1
    client = LLMClient(MODEL, base_url=fake_server.url, api_key=KEY, cache=cache, meter=CostMeter())
    out = client.complete_many([grade_msgs(i) for i in range(4)], parse=GRADE, progress=False)
    assert [r.cached for r in out] == [True, True, True, False] and fake_server.total == 4
    client.close()
    raw = path.read_text().split("\n")
    assert raw[3].endswith('"request": {"mod') and json.loads(raw[4])["status"] == "ok"
    reopened = CallCache(path)
    assert len(reopened) == 4 and reopened.skipped_lines == 1


# ---------------------------------------------------------------------------------------------- budget


@pytest.mark.parametrize("concurrency", [1, 4])
def test_budget_stops_after_exactly_n_calls(fake_server, tmp_path, concurrency):
    fake_server.usage = (10, 0)  # every call: 10 input tokens at $1000/M = $0.01
    fake_server.delay = 0.02
    prices = {MODEL: {"input_per_1m": 1000, "output_per_1m": 0}}
    reqs = [grade_msgs(i) for i in range(12)]
    client = make_client(fake_server, tmp_path, prices=prices, budget=0.05, concurrency=concurrency)
    with pytest.raises(BudgetExceeded) as info:
        client.complete_many(reqs, stage="judge", parse=GRADE, progress=False)
    stop = info.value
    assert fake_server.total == 5 and stop.calls == 5
    assert str(stop).startswith("budget of $0.05 reached after 5 calls")
    assert "rerun with a higher budget to continue — cached calls are not repaid" in str(stop)
    assert sum(r is not None for r in stop.results) == 5 and all(r.ok for r in stop.results if r)
    summ = client.summary()
    assert summ["budget_reached"] and summ["spent_usd"] == pytest.approx(0.05)
    assert summ["stages"]["judge"]["budget_stopped"] == 7
    assert len(lines(tmp_path / "calls.jsonl")) == 5  # what was done is recorded
    with pytest.raises(BudgetExceeded):
        client.complete(grade_msgs(99), stage="judge")
    client.close()

    # same budget again: the cache's earlier spend counts, so no new paid call; hits are still served
    client = make_client(fake_server, tmp_path, prices=prices, budget=0.05, concurrency=concurrency)
    with pytest.raises(BudgetExceeded, match="after 0 calls") as info:
        client.complete_many(reqs, stage="judge", parse=GRADE, progress=False)
    assert fake_server.total == 5 and sum(r is not None and r.cached for r in info.value.results) == 5
    client.close()

    # a higher budget continues where it stopped, repaying nothing
    client = make_client(fake_server, tmp_path, prices=prices, budget=0.20, concurrency=concurrency)
    out = client.complete_many(reqs, stage="judge", parse=GRADE, progress=False)
    assert all(r.ok for r in out) and fake_server.total == 12
    assert max(Counter(json.dumps(b, sort_keys=True) for b in fake_server.requests).values()) == 1
    assert client.summary()["total_usd"] == pytest.approx(0.12)


# ---------------------------------------------------------------------------------------------- secrets


def test_api_key_never_written_or_logged(fake_server, tmp_path, caplog, capsys, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("MB_TEST_KEY", KEY)
    cfg = {"llm": {"model": MODEL, "base_url": fake_server.url, "api_key_env": "MB_TEST_KEY", "max_retries": 1,
                   "backoff": 0.01, "prices": {MODEL: {"input_per_1m": 1, "output_per_1m": 1}}, "budget_usd": 1}}
    client = from_config(cfg, tmp_path / "llm" / "judge.jsonl", stage="judge")
    texts = [repr(client), str(client), repr(client.cache), json.dumps(client.summary())]
    fake_server.add_fault("500", times=2, echo_auth=True, match="question 1 ")  # error body echoes the key
    fake_server.add_fault("429", times=1)
    fake_server.add_fault("malformed", times=1)
    out = client.complete_many([grade_msgs(i) for i in range(4)], parse=GRADE, progress=True)
    assert [r.ok for r in out] == [True, False, True, True]
    assert "***" in out[1].error and KEY not in out[1].error
    texts += [r.error or "" for r in out]
    fake_server.add_fault("401", times=1, echo_auth=True)
    with pytest.raises(LLMConfigError) as info:
        client.complete(grade_msgs(7))
    texts.append(str(info.value))
    client.close()
    assert fake_server.auth_headers and set(fake_server.auth_headers) == {f"Bearer {KEY}"}  # sent, every time
    captured = capsys.readouterr()
    texts += [caplog.text, captured.out, captured.err] + [r.getMessage() for r in caplog.records]
    for t in texts:
        assert KEY not in t
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for p in files:
        assert KEY.encode() not in p.read_bytes(), p
    with pytest.raises(TypeError):
        import pickle
        pickle.dumps(client)


# ---------------------------------------------------------------------------------------------- config


def test_from_config_env_overrides_and_validation(fake_server, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    env = {"MEMBENCH_LLM_BASE_URL": fake_server.url, "MEMBENCH_LLM_MODEL": MODEL}
    cfg = {"llm": {"model": "gpt-elsewhere", "base_url": "http://127.0.0.1:9/v1", "concurrency": 2, "budget_usd": None,
                   "stages": {"facts": {"timeout": 5}}}}
    client = from_config(cfg, tmp_path / "c.jsonl", stage="facts", env=env)
    assert client.model == MODEL and client.base_url == fake_server.url and client.policy.timeout == 5
    assert client.policy.concurrency == 2
    assert client.complete(grade_msgs(0), parse=GRADE).ok and fake_server.total == 1
    assert fake_server.auth_headers == ["Bearer EMPTY"]  # local server, no key configured
    client.close()
    with pytest.raises(InputError, match="needs a price"):
        from_config({"llm": {"model": "m", "base_url": fake_server.url, "budget_usd": 1}}, tmp_path / "x", env={})
    with pytest.raises(InputError, match="budget_usd"):
        from_config({"llm": {"model": "m", "base_url": fake_server.url, "budget": 1}}, tmp_path / "x", env={})
    with pytest.raises(InputError, match="llm.model"):
        from_config({"llm": {"model": None}}, tmp_path / "x", env={})
    with pytest.raises(InputError, match="llm.concurrency"):  # the schema's checks, on the merged stage overrides
        from_config({"llm": {"model": "m", "stages": {"facts": {"concurrency": 0}}}}, tmp_path / "x", "facts", env={})
    with pytest.raises(LLMConfigError, match="no API key"):
        from_config({"llm": {"model": "m", "budget_usd": None}}, tmp_path / "x", env={})


def test_from_config_defaults_are_the_schema_defaults(fake_server, tmp_path):
    """A config passed directly (not validated by the workflow) gets the schema's defaults, e.g. its budget."""
    llm_schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))["properties"]["llm"]["properties"]
    assert llm_schema["budget_usd"]["default"] == 5.0
    client = from_config({"llm": {"base_url": fake_server.url}}, tmp_path / "c.jsonl", env={})
    assert client.model == llm_schema["model"]["default"] == "gpt-4o-mini"
    assert client.meter.budget_usd == Decimal("5.0")
    assert client.policy == CallPolicy()  # the schema's defaults are the policy's
    assert (client.policy.concurrency, client.policy.timeout, client.policy.max_retries, client.policy.backoff,
            client.policy.malformed_retries, client.policy.max_failed_share, client.api_key_env) == (
        4, 60.0, 5, 1.0, 2, 0.02, "OPENAI_API_KEY")
    assert client.summary()["budget_usd"] == 5.0
    client.close()
    with pytest.raises(InputError, match="a budget needs a price for model 'fake-model'"):
        from_config({"llm": {"model": "fake-model", "base_url": fake_server.url}}, tmp_path / "x", env={})


def test_call_policy_is_one_checked_frozen_value(fake_server, tmp_path):
    """The policy is checked where it is built, with the field named; the config's llm section builds it."""
    assert CallPolicy(concurrency="3", timeout=5).concurrency == 3
    for bad, field in (({"concurrency": 0}, "concurrency"), ({"max_retries": -1}, "max_retries"),
                       ({"malformed_retries": -1}, "malformed_retries"), ({"timeout": 0}, "timeout"),
                       ({"max_failed_share": 1.5}, "max_failed_share"), ({"backoff": "soon"}, "backoff")):
        with pytest.raises(ValueError, match=f"^{field} must be"):
            CallPolicy(**bad)
    policy = CallPolicy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.concurrency = 2  # type: ignore[misc]
    assert policy.replace(repair=False) == CallPolicy(repair=False) and policy.repair
    with pytest.raises(TypeError, match="needs a CallCache"):
        LLMClient(MODEL, fake_server.url, cache=None)  # type: ignore[arg-type]
    cfg = {"llm": {"model": MODEL, "base_url": fake_server.url, "budget_usd": None, "max_retries": 1,
                   "stages": {"judge": {"malformed_retries": 0}}}}
    client = from_config(cfg, tmp_path / "c.jsonl", stage="judge", env={}, retry_failed=False, sleep=Sleeps())
    assert client.policy == CallPolicy(max_retries=1, malformed_retries=0, retry_failed=False)
    client.close()
    with pytest.raises(InputError, match="field 'llm.max_failed_share'"):
        from_config(cfg, tmp_path / "c.jsonl", env={}, max_failed_share=2)


# ---------------------------------------------------------------------------------------------- replies


def test_parse_json_object():
    assert parse_json_object('```json\n{"score": 3, "reason": "x"}\n```', ["score"]) == {"score": 3, "reason": "x"}
    assert parse_json_object('Here you go:\n```\n{"a": 1}\n```\nthanks', ["a"]) == {"a": 1}
    assert parse_json_object('Sure: {"a": {"b": 2}} hope it helps', {"a": dict}) == {"a": {"b": 2}}
    cases = [("", "empty"), ("no json here", "not valid JSON"), ("[1, 2]", "got a JSON list"),
             ('{"a": 1}', "lacks required key(s) score"), ('{"score": "7"}', "should be int"),
             ('{"score": true}', "should be int")]
    for text, reason in cases:
        with pytest.raises(MalformedReply, match=reason.replace("(", r"\(").replace(")", r"\)")):
            parse_json_object(text, {"score": int})
    rng = json_object_parser({"score": int}, check=lambda o: None if 0 <= o["score"] <= 10 else
                             (_ for _ in ()).throw(ValueError("score out of range 0-10")))
    with pytest.raises(MalformedReply, match="out of range"):
        rng('{"score": 11}')


# ---------------------------------------------------------------------------------------------- server CLI


def test_fake_server_runs_as_a_separate_process(tmp_path):
    script = tmp_path / "faults.json"
    script.write_text(json.dumps({"faults": [{"kind": "429", "times": 1}], "usage": [7, 3]}))
    url_file = tmp_path / "url.txt"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openai_server.py"), "--port", "0",
                             "--script", str(script), "--url-file", str(url_file)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("MEMBENCH_FAKE_LLM_URL=http://127.0.0.1:")
        url = line.split("=", 1)[1]
        assert url_file.read_text().strip() == url
        client = LLMClient(MODEL, base_url=url, api_key=KEY, cache=CallCache(tmp_path / "c.jsonl"),
                           meter=CostMeter(), sleep=Sleeps())
        reply = client.complete(grade_msgs(0), parse=GRADE)
        assert reply.ok and reply.attempts == 2 and reply.usage == {"prompt_tokens": 7, "completion_tokens": 3}
        with urllib.request.urlopen(url.removesuffix("/v1") + "/_stats") as r:
            stats = json.load(r)
        assert stats["total"] == 2 and stats["faults_applied"] == {"429": 1}
        client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0


def test_json_mode_speaks_the_llama_cpp_dialect():
    """`json_mode` (llm.provider local): a parser's schema and OpenAI's json_schema format both become llama.cpp's
    json_object + schema; a request that asks for plain JSON or text is left as it is."""
    from membench.llm.request import json_mode_params

    schema = {"type": "object", "properties": {"correct": {"type": "boolean"}}}
    assert json_mode_params({"temperature": 0}, schema) == {
        "temperature": 0, "response_format": {"type": "json_object", "schema": schema}}
    assert json_mode_params({}, None) == {}
    openai_style = {"response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}}}
    assert json_mode_params(openai_style, None) == {"response_format": {"type": "json_object", "schema": schema}}
    assert json_mode_params({"response_format": {"type": "json_schema", "json_schema": {"name": "r"}}}, schema) == {
        "response_format": {"type": "json_object"}}
    for kept in ({"type": "json_object"}, {"type": "text"}):
        assert json_mode_params({"response_format": kept}, schema) == {"response_format": kept}
