"""The explorer at BEAM-500K scale (700 questions, 35 chats, ~38,000 messages, 7 systems), built from a BEAM-100K run.

    python bench/explorer_beam_scale.py [results] [--out /tmp/explorer-beam500k] then
    python bench/explorer.py /tmp/explorer-beam500k/explorer --dataset beam-500k-synthetic \
        --metric turn/recall@10 --a dense --b bm25

BEAM-500K has 35 chats of ~1,087 messages (10 sessions of ~109), 20 questions each; BEAM-100K has 20 chats of ~255
(4 sessions of ~62). Each synthetic chat h (0..34) asks the 20 questions of 100K chat h mod 20, and its transcript
is that chat followed by copies of the next 100K chats until the messages reach BEAM-500K's 38,058 in all; every id
is suffixed with its copy (`~h.j`). The questions' gold, gold roles, scores and top-k lists are the 100K run's
own; a ranked item that is not gold is moved to the copy numbered by its rank, so the top-10 lists reach across
the whole transcript, as a ranking over a 500K chat does, and the page ships (and a question loads) a 500K chat's
worth of session text rather than one 100K chat's. It measures the page, not a figure: the leaderboard, the
measures of change and the coverage show the 100K run's summary.json. Prints the sizes; times nothing itself.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pandas as pd

from membench.explorer.build import build_explorer
from membench.jobs.job import Job, Named

SOURCE = "beam-100k"
DATASET = "beam-500k-synthetic"
CHATS, QUESTIONS_PER_CHAT, MESSAGES = 35, 20, 38_058  # BEAM-500K's published shape


def suffixed(values: pd.Series, tag: str) -> pd.Series:
    return values.astype(str) + tag


def build_tables(source: Path) -> tuple[dict[str, pd.DataFrame], dict[str, tuple[pd.DataFrame, pd.DataFrame]]]:
    """The synthetic dataset's tables and, per run, its (scores, ranked list) frames."""
    questions, turns = pd.read_parquet(source / "questions.parquet"), pd.read_parquet(source / "turns.parquet")
    haystacks, qrels = pd.read_parquet(source / "haystacks.parquet"), pd.read_parquet(source / "qrels.parquet")
    roles = pd.read_parquet(source / "gold_roles.parquet")
    chats = sorted(questions.haystack_id.unique(), key=int)
    order = haystacks.sort_values(["haystack_id", "position"])
    session_keys = {c: list(order[order.haystack_id == c].session_key) for c in chats}
    turns_of = {c: turns[turns.session_key.isin(session_keys[c])] for c in chats}
    parts: dict[str, list[pd.DataFrame]] = {t: [] for t in ("questions", "turns", "haystacks", "qrels", "gold_roles")}
    copies: dict[str, int] = {}  # synthetic chat -> how many 100K chats its transcript holds
    made = 0
    for h in range(CHATS):
        own, tag = chats[h % len(chats)], f"~{h}"
        wanted = round(MESSAGES * (h + 1) / CHATS) - made
        chain, count = [], 0
        while count < wanted or not chain:  # its own chat first, then the next ones
            chat = chats[(h + len(chain)) % len(chats)]
            chain.append(chat)
            count += len(turns_of[chat])
        made += count
        copies[str(h)] = len(chain)
        for j, chat in enumerate(chain):
            part = turns_of[chat].copy()
            for column in ("session_key", "session_id", "item_id"):
                part[column] = suffixed(part[column], f"{tag}.{j}")
            part["conversation_id"] = str(h)
            parts["turns"].append(part)
            keys = [f"{k}{tag}.{j}" for k in session_keys[chat]]
            parts["haystacks"].append(pd.DataFrame({"haystack_id": str(h), "session_key": keys}))
        q = questions[questions.haystack_id == own].copy()
        ids = set(q.question_id)
        q["question_id"], q["haystack_id"] = suffixed(q.question_id, tag), str(h)
        parts["questions"].append(q)
        for name, frame in (("qrels", qrels), ("gold_roles", roles)):
            rows = frame[frame.question_id.isin(ids)].copy()
            rows["question_id"], rows["item_id"] = suffixed(rows.question_id, tag), suffixed(rows.item_id, f"{tag}.0")
            parts[name].append(rows)
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}
    tables["questions"]["index"] = range(len(tables["questions"]))
    hay = tables["haystacks"]
    hay["position"] = hay.groupby("haystack_id").cumcount()
    gold = set(zip(tables["qrels"].question_id, tables["qrels"].item_id))
    runs = {}
    for path in sorted((source / "runs").glob("*.parquet")):
        ranked, scores = pd.read_parquet(path), pd.read_parquet(source / "scores" / path.name)
        out_ranked, out_scores = [], []
        for h in range(CHATS):
            own, tag = chats[h % len(chats)], f"~{h}"
            ids = set(questions[questions.haystack_id == own].question_id)
            r = ranked[ranked.question_id.isin(ids)].copy()
            r["question_id"] = suffixed(r.question_id, tag)
            at_home = [(q, f"{i}{tag}.0") in gold for q, i in zip(r.question_id, r.item_id)]
            copy = [0 if home else rank % copies[str(h)] for home, rank in zip(at_home, r["rank"])]
            r["item_id"] = [f"{i}{tag}.{c}" for i, c in zip(r.item_id, copy)]
            out_ranked.append(r)
            s = scores[scores.question_id.isin(ids)].copy()
            s["question_id"] = suffixed(s.question_id, tag)
            out_scores.append(s)
        runs[path.stem] = (pd.concat(out_scores, ignore_index=True), pd.concat(out_ranked, ignore_index=True))
    return tables, runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="?", default="results", type=Path)
    ap.add_argument("--out", type=Path, default=Path("/tmp/explorer-beam500k"))
    args = ap.parse_args()
    source, work = args.results / SOURCE, args.out / "inputs"
    shutil.rmtree(args.out, ignore_errors=True)
    (work / "scores").mkdir(parents=True)
    (work / "runs").mkdir()
    tables, runs = build_tables(source)
    for name, frame in tables.items():
        frame.to_parquet(work / f"{name}.parquet")
    for run, (scores, ranked) in runs.items():
        scores.to_parquet(work / "scores" / f"{run}.parquet")
        ranked.to_parquet(work / "runs" / f"{run}.parquet")
    summary = json.loads((args.results / "summary.json").read_text(encoding="utf-8"))
    summary["datasets"] = {DATASET: summary["datasets"][SOURCE]}  # the 100K run's figures, under the new name
    (work / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    significance = pd.read_parquet(args.results / "significance.parquet")
    significance = significance[significance.dataset == SOURCE].assign(dataset=DATASET)
    significance.to_parquet(work / "significance.parquet")
    names = sorted(runs)
    job = Job(input=Named({
        "summary": str(work / "summary.json"), "significance": str(work / "significance.parquet"),
        **{t: [str(work / f"{t}.parquet")] for t in tables},
        "scores": [str(work / "scores" / f"{r}.parquet") for r in names],
        "ranked": [str(work / "runs" / f"{r}.parquet") for r in names],
        "efficiency": [str(source / "efficiency" / "efficiency.json")], "qa": [], "calibration": []}),
        params=Named({"datasets": [DATASET], "runs": [(DATASET, r) for r in names], "answered": [], "calibrated": [],
                      "baseline": "bm25"}))
    folder = args.out / "explorer"
    folder.mkdir()
    build_explorer(folder, job)
    data = folder / "data" / "d0.js"
    transcripts = sorted((folder / "data" / "d0").glob("*.js"))
    sizes = [p.stat().st_size for p in transcripts]
    t = tables
    print(f"{len(t['questions'])} questions, {t['haystacks'].haystack_id.nunique()} chats, "
          f"{t['haystacks'].session_key.nunique():,} sessions, {len(t['turns']):,} messages, {len(runs)} runs")
    print(f"data script {data.stat().st_size / 1e6:.1f} MB; {len(transcripts)} transcript scripts, "
          f"{sum(sizes) / 1e6:.1f} MB in all, {max(sizes) / 1e3:.0f} kB the largest (one loads per opened question)")


if __name__ == "__main__":
    main()
