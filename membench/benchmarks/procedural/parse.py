"""Procedural Memory Benchmark (ALFWorld / AgentInstruct): rank past trajectories for a new task.

Every query searches the whole corpus of trajectories. Gold is the graded labels (6-10) of the query bank;
they were pooled from keyword-matched candidates, so an unlabelled trajectory is unjudged, not irrelevant.
"""

from __future__ import annotations

from pathlib import Path

from membench.datasets.fields import expect, get, load_json, nonempty_str, unique
from membench.datasets.gold import LEFT_OUT
from membench.datasets.tables import ParsedDataset, split_of
from membench.errors import InputError
from membench.benchmarks.procedural.metrics import REL_THRESHOLD
from membench.datasets.session_keys import SessionKeys

KIND = "procedural"
CORPUS_FILE = "agentinstruct_trajectories.json"
QUERIES_FILE = "query_bank.json"
HAYSTACK = "corpus"
GOLD_ISSUES = ("unlabeled", "no_relevant_label")


def find_files(source: Path) -> tuple[Path, Path]:
    if not source.is_dir():
        raise InputError(source, f"the procedural dataset needs a folder holding {CORPUS_FILE} and {QUERIES_FILE}")
    paths = source / CORPUS_FILE, source / QUERIES_FILE
    for p in paths:
        if not p.exists():
            raise InputError(p, "procedural benchmark file not found in the dataset folder")
    return paths


def parse(source: Path) -> ParsedDataset:
    corpus_path, queries_path = find_files(source)
    data = ParsedDataset(KIND, gold_issues=GOLD_ISSUES)
    trajectory_ids = _parse_corpus(corpus_path, data)
    _parse_queries(queries_path, trajectory_ids, data)
    data.counts = {
        "trajectories": len(trajectory_ids),
        "steps": sum(t["kind"] == "step" for t in data.turns),
        "queries": len(data.questions),
        "labels": len(data.qrels),
        "relevant_labels": sum(q["relevance"] >= 6 for q in data.qrels),
        "queries_by_tier": {t: sum(q["tier"] == t for q in data.questions) for t in ("EASY", "MEDIUM", "HARD")},
    }
    return data


def _parse_corpus(path: Path, data: ParsedDataset) -> set[str]:
    root = expect(load_json(path), dict, path, None, None)
    trajectories = get(root, "trajectories", list, path, None)
    if not trajectories:
        raise InputError(path, "empty haystack: the corpus holds no trajectories", None, "trajectories")
    keys = SessionKeys()
    ids = []
    for position, traj in enumerate(trajectories):
        rec = f"trajectories[{position}]"
        expect(traj, dict, path, rec, None)
        tid = nonempty_str(traj, "task_instance_id", path, rec)
        rec = f"task_instance_id={tid}"
        ids.append(tid)
        task = get(traj, "task_description", str, path, rec)
        pairs = get(traj, "state_action_pairs", list, path, rec)
        if not pairs:
            raise InputError(path, "trajectory has no steps", rec, "state_action_pairs")
        total = get(traj, "total_steps", int, path, rec, optional=True)
        if total is not None and total != len(pairs):
            data.log.note("total_steps_mismatch", "flagged", "total_steps differs from the number of steps; "
                          "the steps are used", f"{tid}: {total} vs {len(pairs)}")
        events = [{"kind": "task", "role": "user", "speaker": None, "text": task, "state": None, "action": None}]
        for s, pair in enumerate(pairs):
            field = f"state_action_pairs[{s}]"
            expect(pair, dict, path, rec, field)
            state = get(pair, "state", str, path, rec, f"{field}.")
            action = get(pair, "action", str, path, rec, f"{field}.")
            events.append({"kind": "step", "role": "agent", "speaker": None, "state": state, "action": action,
                           "text": f"State: {state} -> Action: {action}"})
        key, _ = keys.key(tid, None, events)
        data.haystacks.append({"haystack_id": HAYSTACK, "position": position, "session_key": key})
        for t, event in enumerate(events):
            data.turns.append({"session_key": key, "session_id": tid, "session_date": None,
                               "conversation_id": None, "turn_index": t,
                               "item_id": tid if t == 0 else f"{tid}#{t}", "caption": None, **event})
    unique(ids, path, "task_instance_id")
    return set(ids)


def _parse_queries(path: Path, trajectory_ids: set[str], data: ParsedDataset) -> None:
    root = expect(load_json(path), dict, path, None, None)
    queries = get(root, "queries", list, path, None)
    if not queries:
        raise InputError(path, "the query bank holds no queries", None, "queries")
    ids, texts = [], {}
    for index, query in enumerate(queries):
        expect(query, dict, path, f"queries[{index}]", None)
        qid = nonempty_str(query, "query_id", path, f"queries[{index}]")
        rec = f"query_id={qid}"
        ids.append(qid)
        text = nonempty_str(query, "query_text", path, rec)
        tier = get(query, "tier", str, path, rec)
        qtype = get(query, "query_type", str, path, rec)
        if text in texts:
            data.log.note("duplicate_query_text", "kept", "two queries share one text but have different label "
                          "sets; both kept under their own ids", f"{texts[text]} = {qid}: {text!r}")
        texts.setdefault(text, qid)
        labels = get(query, "relevant_trajectories", list, path, rec)
        issue = _gold_issue(_parse_labels(path, rec, qid, labels, trajectory_ids, data))
        if issue:
            data.log.note(f"query_{issue}", "flagged", LEFT_OUT[issue] + ": left out of retrieval scoring", qid)
        data.questions.append({
            "question_id": qid, "index": index, "split": split_of(index), "question": text,
            "question_date": None, "question_type": qtype, "category": None, "tier": tier,
            "answer": None, "adversarial_answer": None, "is_abstention": False, "haystack_id": HAYSTACK,
            "gold_issue": issue,
        })
    unique(ids, path, "query_id")


def _parse_labels(path: Path, rec: str, qid: str, labels: list, trajectory_ids: set[str],
                  data: ParsedDataset) -> list[float]:
    """The query's labels as qrels; returns their scores."""
    seen = set()
    for j, label in enumerate(labels):
        field = f"relevant_trajectories[{j}]"
        expect(label, dict, path, rec, field)
        tid = nonempty_str(label, "trajectory_id", path, rec, f"{field}.")
        score = get(label, "relevance_score", (int, float), path, rec, f"{field}.")
        if tid not in trajectory_ids:
            raise InputError(path, f"label points at trajectory {tid!r}, which is not in the corpus",
                             rec, f"{field}.trajectory_id")
        if not 0 <= score <= 10:
            raise InputError(path, f"relevance_score must be within 0-10, got {score}", rec,
                             f"{field}.relevance_score")
        if tid in seen:
            raise InputError(path, f"trajectory {tid!r} is labelled twice", rec, f"{field}.trajectory_id")
        seen.add(tid)
        data.qrels.append({"question_id": qid, "item_id": tid, "granularity": "trajectory",
                           "relevance": float(score)})
    return [float(label["relevance_score"]) for label in labels]


def _gold_issue(scores: list[float]) -> str | None:
    """Why a query has no relevant label to score against (membench.datasets.gold), or None."""
    if not scores:
        return "unlabeled"
    return None if max(scores) >= REL_THRESHOLD else "no_relevant_label"
