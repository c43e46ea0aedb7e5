"""BEAM in QA mode, on a slice of BEAM-100K's real questions (chats 1 and 5: one without, one with
chat_trunecated.json) against the loopback test server:

- parity: membench's BEAM scores per question, per ability and overall equal those of an independent restatement of
  BEAM's own evaluation (below: src/evaluation/compute_metrics.py, run_evaluation.py and report_results.py of
  mohammadtavakoli78/BEAM at b2a3ee8, step for step, sharing no code with membench) fed the same judge replies,
  recorded in tests/fixtures/beam-judge-replies.json in the shapes upstream meets;
- every call goes through the call cache: a rerun pays nothing, no call is paid twice;
- the full-context baseline answers from the whole chat;
- the prompts are upstream's, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from json_repair import repair_json
from scipy.stats import kendalltau

from conftest import shared_path
from membench.scoring.qa import BY_EVIDENCE, EVIDENCE_IN
from membench.analysis.aggregate import Resampling, summarize_dataset
from membench.benchmarks.beam.judge import item_score, ordering_item_score, says_yes
from membench.benchmarks.beam.parse import parse
from membench.benchmarks.registry import benchmark
from membench.stages import qa
from openai_server import FakeOpenAIServer, default_responder, prompt_task

pytestmark = pytest.mark.data

CHATS = ("1", "5")
HERE = Path(__file__).parent
REPLIES = json.loads((HERE / "fixtures" / "beam-judge-replies.json").read_text(encoding="utf-8"))
ABILITIES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction",
             "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
             "summarization", "temporal_reasoning")
# sha256 of upstream's texts at b2a3ee8, computed from the repository's src/prompts.py (unified_llm_judge_base_prompt)
# and src/evaluation/compute_metrics.py (llm_equivalence's system message, and its user f-string with the two
# placeholders written as {first_paragraph} and {second_paragraph})
UPSTREAM_SHA256 = {"judge": "d349c9a8559bed9c14bfe2e624212225b09218ff864258a739229c15f4c8e869",
                   "system": "0863c78c1b27d36c97bb7bfd2d4d6b88ef69b093e92bb4719e665527722413e2",
                   "user": "6bf789b815decbeb1c27f5058e2416c2a6e167724c0433b1da27b0abe5cc73df"}
MIRROR = Path("/work/.mirror/mohammadtavakoli78+BEAM/repo")


# --------------------------------------------------------------------------- upstream, restated


def sections(path: Path) -> dict[str, str]:
    """A prompt file's sections (its format: `=== name ===` lines; each text less the newline that ends it)."""
    parts = re.split(r"^=== (\w+) ===\n", path.read_text(encoding="utf-8"), flags=re.M)
    return {parts[i]: parts[i + 1][:-1] for i in range(1, len(parts), 2)}


PACKAGE = HERE.parent / "membench" / "benchmarks" / "beam"
JUDGE_PROMPT = sections(PACKAGE / "judge-prompt.txt")["prompt"]
EQUIVALENCE = sections(PACKAGE / "equivalence-prompt.txt")


def upstream_parse_json_response(response):
    response = response.strip()
    if response.startswith("```"):
        found = re.search(r"```(?:json)?\s*(\[.*\]|\{.*\})\s*```", response, re.DOTALL)
        if found:
            response = found.group(1).strip()
    try:
        return json.loads(response)
    except json.JSONDecodeError:
        pass
    found = re.search(r"(\{.*?\}|\[.*?\])", response, re.DOTALL)
    if found:
        try:
            return json.loads(found.group(1))
        except Exception as err:
            raise ValueError(f"possible JSON that does not parse: {err}")
    raise ValueError("no JSON")


class UpstreamModel:
    """`model.invoke` of upstream's evaluation, answered by the test's responder (the server's, without HTTP)."""

    def __init__(self, respond):
        self.respond = respond
        self.asked = []

    def invoke(self, prompt):
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        self.asked.append(json.dumps(messages))
        return self.respond({"messages": messages})


def upstream_rubric_judge(rubric, llm_response, model, as_float):
    scores = []
    for item in rubric:
        prompt = JUDGE_PROMPT.replace("<rubric_item>", item).replace("<llm_response>", llm_response)
        response = model.invoke(prompt).strip()
        try:
            response = upstream_parse_json_response(response)
        except Exception:
            response = json.loads(repair_json(response))
        scores.append(float(response["score"]) if as_float else int(response["score"]))
    return sum(scores) / len(rubric)


def upstream_equivalent(first_paragraph, second_paragraph, model):
    user = f"""First snippet: {first_paragraph} \n
                       Second snippet: {second_paragraph}
                    """
    reply = model.invoke([{"role": "system", "content": EQUIVALENCE["system"]}, {"role": "user", "content": user}])
    return "yes" in reply.lower()


def upstream_event_ordering(rubric, llm_response, model):
    system = llm_response.split("\n")  # upstream's extract_facts result is overwritten by this: not asked
    used, system_out = set(), []
    for s in system:
        hit = None
        for index, r in enumerate(rubric):
            if index in used:
                continue
            if upstream_equivalent(r, s, model):
                hit = index
                break
        if hit is not None:
            system_out.append(rubric[hit])
            used.add(hit)
        else:
            system_out.append(s)
    reference = rubric
    tp = len(set(reference) & set(system_out))
    fp = len([x for x in system_out if x not in reference])
    fn = len([x for x in reference if x not in system_out])
    precision = tp / (tp + fp) if tp + fp else 0
    recall = tp / (tp + fn) if tp + fn else 0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0
    union = list(dict.fromkeys(reference + system_out))
    tie = len(union) + 1

    def to_rank(seq):
        r = {item: i + 1 for i, item in enumerate(seq)}
        return [r.get(u, tie) for u in union]

    tau_b, _ = kendalltau(to_rank(reference), to_rank(system_out), variant="b", method="auto")
    tau_norm = (tau_b + 1) / 2
    result = dict(precision=precision, recall=recall, f1=f1, tau_norm=tau_norm, final_score=tau_norm * f1)
    result["llm_judge_score"] = upstream_rubric_judge(rubric, llm_response, model, as_float=True)
    return result


def upstream_evaluation(raw: Path, answers: dict[str, str], model, keep_half=False) -> dict[str, dict]:
    """run_evaluation per chat folder: {chat: {ability: [result per question]}}. `keep_half`: float for every
    ability (the figure with 0.5 kept)."""
    out = {}
    for chat in sorted(CHATS, key=int):
        data = json.loads((raw / chat / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
        values = {}
        for key in data:
            results = []
            for question in data[key]:
                llm_response = answers[" ".join(question["question"].split())]
                if key == "event_ordering":
                    results.append(upstream_event_ordering(question["rubric"], llm_response, model))
                else:
                    results.append({"llm_judge_score": upstream_rubric_judge(question["rubric"], llm_response, model,
                                                                             as_float=keep_half)})
            values[key] = results
        out[chat] = values
    return out


def upstream_report(evaluation: dict[str, dict], field_for=lambda key: "tau_norm" if key == "event_ordering"
                    else "llm_judge_score") -> dict[str, float]:
    """report_results.report_llms_accuracies for one result file: per chat, per ability the mean; then over chats."""
    directory_scores = []
    for chat in sorted(evaluation, key=int):
        scores = []
        for key, objects in evaluation[chat].items():
            score = 0
            for obj in objects:
                score += obj[field_for(key)]
            scores.append(score / len(objects))
        directory_scores.append(scores)
    n = len(directory_scores)
    keys = list(evaluation[sorted(evaluation, key=int)[0]])
    return {key: sum(directory_scores[c][k] for c in range(n)) / n for k, key in enumerate(keys)}


# --------------------------------------------------------------------------- the recorded replies


def _pick(options, *texts):
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).digest()
    return options[int.from_bytes(digest[:8], "big") % len(options)]


_RUBRIC = re.compile(r"- RUBRIC CRITERION \(what to check\): (.*)\n- RESPONSE TO EVALUATE: (.*)\n\n## EVALUATION RUBRIC:",
                     re.DOTALL)
_PAIR = re.compile(r"^First snippet: (.*) \n\n {23}Second snippet: (.*)\n {20}$", re.DOTALL)


def make_responder(answers: dict[str, str]):
    """Answers by question; each judge request its recorded reply (the fixture's rule); verdicts the default's."""

    def respond(body):
        messages = body["messages"]
        task = prompt_task(body)
        if task == "answer":
            asked = messages[-1]["content"].rsplit("Question: ", 1)[1].strip()
            return answers[asked]
        if task is not None:
            return default_responder(body)
        if messages[0]["role"] == "system" and messages[0]["content"] == EQUIVALENCE["system"]:
            first, second = _PAIR.match(messages[1]["content"]).groups()
            return _pick(REPLIES["equivalence"]["yes" if first in second else "no"], first, second)
        item, response = _RUBRIC.search(messages[0]["content"]).groups()
        return _pick(REPLIES["rubric"], item, response)["text"]

    return respond


def slice_answers(raw: Path) -> dict[str, str]:
    """A made-up answer per question (question text -> answer): event orderings as numbered lines of their rubric
    items, rotated, some with one left out, with a lead-in line and a blank line (so alignment meets every case)."""
    out = {}
    for chat in CHATS:
        data = json.loads((raw / chat / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
        for ability, questions in data.items():
            for n, q in enumerate(questions):
                key = " ".join(q["question"].split())
                if ability == "event_ordering":
                    items = list(q["rubric"])
                    turn = (int(chat) + n) % len(items)
                    items = items[turn:] + items[:turn]
                    if n == 1:
                        items = items[:-1]
                    lines = ["Here is the order in which you brought them up:", ""]
                    out[key] = "\n".join(lines + [f"{i}. {item}" for i, item in enumerate(items, 1)])
                else:
                    reference = next((q[f] for f in ("answer", "ideal_answer", "ideal_response", "ideal_summary")
                                      if q.get(f)), "Not mentioned in the conversation.")
                    out[key] = str(reference).split(". ")[0].strip() if n == 0 else "I am not sure about that."
    return out


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def beam_slice(tmp_path_factory):
    source = shared_path("beam", "100K")
    root = tmp_path_factory.mktemp("beam-slice")
    for chat in CHATS:
        shutil.copytree(source / chat, root / "100K" / chat)
    parse(root / "100K").write(root / "tables", {})
    return root / "100K", root / "tables"


def first_messages_run(tables: Path, path: Path, k: int = 10) -> Path:
    """A stand-in run: each question's top k = the first k messages of its chat (what is retrieved does not matter
    to the judging)."""
    turns = pd.read_parquet(tables / "turns.parquet")
    haystacks = pd.read_parquet(tables / "haystacks.parquet").sort_values(["haystack_id", "position"])
    items = {h: [i for key in g.session_key for i in turns[turns.session_key == key].sort_values("turn_index").item_id]
             for h, g in haystacks.groupby("haystack_id")}
    rows = [{"question_id": q, "granularity": "turn", "rank": r, "item_id": item, "score": float(-r)}
            for q, h in pd.read_parquet(tables / "questions.parquet")[["question_id", "haystack_id"]].itertuples(
                index=False) for r, item in enumerate(items[h][:k], 1)]
    pd.DataFrame(rows).to_parquet(path)
    return path


def config(server, **qa_opts) -> dict:
    return {"llm": {"model": "fake-model", "base_url": server.url, "concurrency": 4, "backoff": 0.01,
                    "budget_usd": None}, "qa": qa_opts}


@pytest.fixture(scope="module")
def parity(beam_slice, tmp_path_factory):
    raw, tables = beam_slice
    out_dir = tmp_path_factory.mktemp("beam-qa")
    answers = slice_answers(raw)
    run = first_messages_run(tables, out_dir / "run.parquet")
    with FakeOpenAIServer(make_responder(answers)) as server:
        out = qa.run(benchmark("beam"), tables, run, out_dir / "qa.parquet", out_dir / "scores.parquet",
                     config(server), out_dir / "calls.jsonl", out_dir / "cost.json", dataset="beam-slice",
                     adapter="first", progress=False)
        requests = list(server.requests)
    return {"out": out, "requests": requests, "answers": answers, "raw": raw, "tables": tables, "dir": out_dir,
            "run": run, "cost": json.loads((out_dir / "cost.json").read_text())}


# --------------------------------------------------------------------------- tests


def test_prompts_are_upstreams_byte_for_byte():
    texts = {"judge": JUDGE_PROMPT, "system": EQUIVALENCE["system"], "user": EQUIVALENCE["user"]}
    assert {k: hashlib.sha256(v.encode("utf-8")).hexdigest() for k, v in texts.items()} == UPSTREAM_SHA256
    assert "<question>" in JUDGE_PROMPT and "<rubric_item>" in JUDGE_PROMPT and "<llm_response>" in JUDGE_PROMPT
    if (MIRROR / "HEAD").exists():  # where the upstream snapshot is at hand, compare with it directly
        source = subprocess.run(["git", "-C", str(MIRROR), "show", "HEAD:src/prompts.py"], capture_output=True,
                                text=True, check=True).stdout
        start = source.index('unified_llm_judge_base_prompt = """') + len('unified_llm_judge_base_prompt = """')
        assert source[start:source.index('"""', start)] == JUDGE_PROMPT


def test_slice_parity_per_question_and_per_ability(parity):
    out = parity["out"].set_index("question_id")
    assert len(out) == 40 and (out.status == "ok").all() and (out.judge_status == "ok").all()
    model = UpstreamModel(make_responder(parity["answers"]))
    upstream = upstream_evaluation(parity["raw"], parity["answers"], model)
    half = upstream_evaluation(parity["raw"], parity["answers"], UpstreamModel(model.respond), keep_half=True)
    assert out.answer.to_dict() == {qid: parity["answers"][" ".join(q.split())] for qid, q in pd.read_parquet(
        parity["tables"] / "questions.parquet").set_index("question_id").question.items()}

    diffs = []
    for chat, by_key in upstream.items():
        for key, results in by_key.items():
            for n, result in enumerate(results):
                row = out.loc[f"{chat}/{key}/{n}"]
                detail = json.loads(row.judge_detail)
                kept = half[chat][key][n]["llm_judge_score"]
                if key == "event_ordering":
                    pairs = [(row.beam, result["tau_norm"]), (row.beam_half, result["tau_norm"]),
                             (row.beam_rubric, result["llm_judge_score"])]
                    pairs += [(detail[f], result[f]) for f in ("precision", "recall", "f1", "final_score")]
                else:
                    pairs = [(row.beam, result["llm_judge_score"]), (row.beam_half, kept), (row.beam_rubric, kept)]
                diffs += [abs(a - b) for a, b in pairs]
    assert max(diffs) < 1e-4 and len(diffs) == 36 * 3 + 4 * 7

    summary = parity["cost"]["judge_summary"]
    for metric, report in (("qa/beam", upstream_report(upstream)), ("qa/beam_half", upstream_report(half)),
                           ("qa/beam_rubric", upstream_report(half, lambda key: "llm_judge_score"))):
        ours = summary[metric]
        assert set(ours) == {*ABILITIES, "overall"}
        per_ability = [abs(ours[a] - report[a]) for a in ABILITIES]
        assert max(per_ability) < 1e-4, metric
        assert abs(ours["overall"] - sum(report.values()) / len(report)) < 1e-4
    # the 0.5 really is dropped in the upstream figure and kept in the other
    assert (out.beam <= out.beam_half + 1e-12).all() and (out.beam < out.beam_half).any()
    assert summary["questions"] == dict.fromkeys(ABILITIES, 4) and summary["left_out"] == 0


def test_every_reply_shape_is_met_and_no_call_is_paid_twice(parity):
    requests = parity["requests"]
    judge = [r for r in requests if prompt_task(r) is None]
    rubric = [r for r in judge if len(r["messages"]) == 1]
    eq = [r for r in judge if len(r["messages"]) == 2]
    shapes = {_pick(REPLIES["rubric"], *_RUBRIC.search(r["messages"][0]["content"]).groups())["shape"]
              for r in rubric}
    assert shapes == {r["shape"] for r in REPLIES["rubric"]}
    # one call per rubric item of each question, but one for all the questions asking the same item of the same answer
    items = pd.read_parquet(parity["tables"] / "rubrics.parquet").merge(
        parity["out"][["question_id", "answer"]], on="question_id")
    assert len(rubric) == len(set(zip(items.text, items.answer))) < len(items)
    assert all(r.get("temperature") == 0 for r in judge)
    assert "<question>" in rubric[0]["messages"][0]["content"]  # upstream never fills it
    # every request the stage sent is distinct (a repeated pair, e.g. a blank line asked against the same item twice,
    # is served by the cache), and exactly the distinct requests the restated upstream evaluation makes
    sent = [json.dumps(r["messages"]) for r in judge]
    assert len(sent) == len(set(sent))
    model = UpstreamModel(make_responder(parity["answers"]))
    upstream_evaluation(parity["raw"], parity["answers"], model)
    assert set(sent) == set(model.asked) and len(model.asked) >= len(sent)
    yes_quirk = REPLIES["equivalence"]["no"][-1]
    assert any(make_responder(parity["answers"])(r) == yes_quirk for r in eq)  # a NO that upstream reads as YES
    cost = parity["cost"]
    assert cost["summary"]["stages"]["qa-judge"]["calls"] == len(judge)
    assert cost["judge"].startswith("beam-rubric@") and {p["name"] for p in cost["prompts"]} >= {
        "beam-judge", "beam-equivalence"}

    everything = pd.read_parquet(parity["dir"] / "scores.parquet")
    scores = everything[~everything.metric.isin(BY_EVIDENCE)]
    assert set(scores.metric) == {"qa/accuracy", "qa/beam", "qa/beam_half", "qa/beam_rubric"}
    assert scores.skip.isna().all() and len(scores) == 40 * 3 + 32
    # each judged question with gold ids once under the evidence figure, once under its condition's accuracy
    answered = parity["out"]
    with_gold = answered[answered.evidence_in_top_k.notna() & answered.correct.notna()]
    assert (everything.metric == EVIDENCE_IN).sum() == len(with_gold) > 0
    assert everything.metric.isin(BY_EVIDENCE[1:]).sum() == len(with_gold)
    # instruction and preference following have no reference answer: no generic verdict, BEAM's score only
    unjudged = set(scores.question_id) - set(scores[scores.metric == "qa/accuracy"].question_id)
    assert {q.split("/")[1] for q in unjudged} == {"instruction_following", "preference_following"}
    assert parity["out"].set_index("question_id").loc[sorted(unjudged)].correct.isna().all()

    with FakeOpenAIServer(make_responder(parity["answers"])) as server:  # the rerun pays nothing
        again = qa.run(benchmark("beam"), parity["tables"], parity["run"], parity["dir"] / "qa2.parquet", None,
                       config(server), parity["dir"] / "calls.jsonl", progress=False)
        assert server.total == 0
    pd.testing.assert_frame_equal(again, parity["out"])


def test_the_aggregate_gives_cis_per_ability(parity):
    scores = pd.read_parquet(parity["dir"] / "scores.parquet")
    questions = pd.read_parquet(parity["tables"] / "questions.parquet")
    summary = summarize_dataset("beam-slice", {"first": scores}, 500, 0,
                                Resampling("chat", questions.set_index("question_id").haystack_id))
    beam = summary[(summary.metric == "qa/beam") & (summary.group_by == "question_type")].set_index("group")
    assert set(beam.index) == set(ABILITIES) and (beam.n == 4).all()
    upstream = parity["cost"]["judge_summary"]["qa/beam"]
    for ability, row in beam.iterrows():  # 2 questions per chat and ability: the question mean is upstream's
        assert row["mean"] == pytest.approx(upstream[ability], abs=1e-12)
        assert row.ci_lo <= row["mean"] <= row.ci_hi


def test_replies_upstream_cannot_read_are_asked_again_never_scored(beam_slice, tmp_path):
    raw, tables = beam_slice
    answers = slice_answers(raw)
    run = first_messages_run(tables, tmp_path / "run.parquet")
    ids = ["1/knowledge_update/0", "1/event_ordering/0"]
    with FakeOpenAIServer(make_responder(answers)) as server:
        server.add_fault("malformed", times=2, match="RUBRIC CRITERION")  # prose, no JSON even after json_repair
        out = qa.run(benchmark("beam"), tables, run, tmp_path / "qa.parquet", None,
                     config(server, question_ids=ids, judge_options={"fill_question": True}), tmp_path / "calls.jsonl",
                     tmp_path / "cost.json", progress=False)
        rubric = [r for r in server.requests if prompt_task(r) is None and len(r["messages"]) >= 1
                  and "RUBRIC CRITERION" in r["messages"][0]["content"]]
    assert (out.judge_status == "ok").all()
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert cost["summary"]["stages"]["qa-judge"]["malformed"] == 2
    questions = pd.read_parquet(tables / "questions.parquet").set_index("question_id")
    first = rubric[0]["messages"][0]["content"]
    assert "<question>" not in first and any(questions.loc[q, "question"] in first for q in ids)

    for text in ("I cannot evaluate this response.", '{"reason": "no score given"}', '[{"score": 1.0}]',
                 '{"score": "0.5", "reason": "a string upstream cannot int()"}', '{"score": null}'):
        with pytest.raises(ValueError):
            item_score(text)
    assert ordering_item_score('{"score": "0.5"}')["counted"] == 0.5  # event ordering takes float()
    assert item_score('{"score": 0.5}')["counted"] == 0 and item_score("```json\n{\"score\": 1}\n```")["counted"] == 1
    assert says_yes("Yes.") and says_yes("NO: yesterday's plan differs") and not says_yes("No.")


def test_full_context_answers_from_the_whole_chat(beam_slice, tmp_path):
    raw, tables = beam_slice
    answers = slice_answers(raw)
    ids = ["1/event_ordering/1", "5/summarization/0"]
    with FakeOpenAIServer(make_responder(answers)) as server:
        out = qa.run(benchmark("beam"), tables, None, tmp_path / "qa.parquet", tmp_path / "scores.parquet",
                     config(server, question_ids=ids, full_context=True), tmp_path / "calls.jsonl",
                     tmp_path / "cost.json", dataset="beam-slice", adapter="full-context", progress=False)
        asked = {r["messages"][-1]["content"].rsplit("Question: ", 1)[1].strip(): r["messages"][-1]["content"]
                 for r in server.requests if prompt_task(r) == "answer"}
    assert (out.status == "ok").all() and (out.judge_status == "ok").all()
    turns = pd.read_parquet(tables / "turns.parquet")
    haystacks = pd.read_parquet(tables / "haystacks.parquet")
    questions = pd.read_parquet(tables / "questions.parquet").set_index("question_id")
    for qid, row in out.set_index("question_id").iterrows():
        chat = questions.loc[qid, "haystack_id"]
        prompt = asked[" ".join(questions.loc[qid, "question"].split())]
        keys = haystacks[haystacks.haystack_id == chat].sort_values("position").session_key
        mine = turns[turns.session_key.isin(set(keys))]
        assert row.n_context == len(keys)  # every batch of the chat, none cut
        assert prompt.count("\nuser: ") + prompt.count("\nassistant: ") == len(mine)
        for text in mine.text:  # every message of the chat is in the prompt
            assert " ".join(str(text).split())[:200] in prompt
    scores = pd.read_parquet(tmp_path / "scores.parquet")
    assert set(scores.metric) == {"qa/accuracy", "qa/beam", "qa/beam_half", "qa/beam_rubric"}
    assert json.loads((tmp_path / "cost.json").read_text())["judge_summary"]["questions"] == {
        "event_ordering": 1, "summarization": 1}


def test_a_budget_stop_mid_judging_then_the_rerun_pays_only_the_rest(beam_slice, tmp_path):
    from membench.llm.stage_calls import StageStopped

    raw, tables = beam_slice
    answers = slice_answers(raw)
    run = first_messages_run(tables, tmp_path / "run.parquet")
    cache = tmp_path / "calls.jsonl"
    prices = {"fake-model": {"input_per_1m": 1.0, "output_per_1m": 0.0}}
    with FakeOpenAIServer(make_responder(answers), usage=(1000, 0)) as server:  # every call costs $0.001

        def cfg(budget):
            return {"llm": {"model": "fake-model", "base_url": server.url, "concurrency": 1, "backoff": 0.01,
                            "prices": prices, "budget_usd": budget},
                    "qa": {"question_ids": ["1/event_ordering/0", "5/temporal_reasoning/1"]}}

        # 2 answers and 2 generic verdicts, then 3 of the judge's calls
        with pytest.raises(StageStopped) as stopped:
            qa.run(benchmark("beam"), tables, run, tmp_path / "qa.parquet", tmp_path / "scores.parquet", cfg(0.007),
                   cache, tmp_path / "cost.json", progress=False)
        assert stopped.value.status == "budget" and server.total == 7
        partial = pd.read_parquet(tmp_path / "qa.parquet")
        assert set(partial.judge_status) == {"budget"} and partial.beam.isna().all()
        assert set(pd.read_parquet(tmp_path / "scores.parquet").query("metric == 'qa/beam'").skip) == {"budget"}

        done = qa.run(benchmark("beam"), tables, run, tmp_path / "qa.parquet", None, cfg(1.0), cache,
                      tmp_path / "cost.json", progress=False)
        assert (done.judge_status == "ok").all() and done.beam.notna().all()
        assert server.total == len(server.by_hash) and set(server.by_hash.values()) == {1}  # nothing paid twice
