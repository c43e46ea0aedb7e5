"""ingest stage: turn the parsed tables into gold-free session logs plus the maps only the scorer reads.

Written for adapters (gold-free): `sessions/<key>/events.jsonl`, `view/queries.parquet` (opaque query
keys, text, date, metadata) and `view/haystacks.parquet` (opaque haystack keys -> session keys).
Written for the scorer: `maps/item_map.parquet` (opaque item id -> the benchmark's own item id) and
`maps/query_map.parquet` (opaque query key -> benchmark question id).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Mapping
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from pathlib import Path

import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.benchmarks.registry import parsed_with
from membench.datasets.tables import dataset_files, needed
from membench.io import atomic_write_parquet
from membench.jobs.job import Job
from membench.sessions.reader import STORE_FILES, plain, store_files

log = logging.getLogger("membench")

EVENT_FIELDS = ("ref", "kind", "role", "speaker", "text", "timestamp", "caption", "state", "action")
METADATA_FIELDS = ("question_type", "category", "tier")


def event_ref(session_key: str, turn_index: int) -> str:
    return f"{session_key}_{turn_index + 1}"


def write_session_logs(turns: pd.DataFrame, out_dir: Path, unit_format=None) -> int:
    """One events.jsonl per distinct session key, mtime = session time; returns the number written.

    `unit_format(session_date, speaker, text, caption)`, when given, writes each turn's retrieval unit too. One pass
    over plain columns in (session, turn) order: a pandas group and row tuples per session cost ~9 of S-100's 18
    profiled seconds, on the serial path before any other job can start."""
    tmp = out_dir.with_name(f".{out_dir.name}.part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    firsts = turns.drop_duplicates("session_key")  # a session's date: that of its first row as listed
    dates = dict(zip(firsts.session_key, firsts.session_date))
    ordered = turns.sort_values(["session_key", "turn_index"], kind="stable")
    rows = zip(*(ordered[c].tolist() for c in ("session_key", "turn_index", "kind", "role", "speaker", "text",
                                                 "caption", "state", "action")))
    written = 0
    for key, group in groupby(rows, key=itemgetter(0)):
        folder = tmp / key
        folder.mkdir()
        date = plain(dates[key])
        with open(folder / "events.jsonl", "w", encoding="utf-8") as fh:
            for _, turn_index, kind, role, speaker, text, caption, state, action in group:
                record = {"ref": event_ref(key, turn_index), "kind": kind, "role": role, "speaker": plain(speaker),
                          "text": text, "timestamp": date, "caption": plain(caption), "state": plain(state),
                          "action": plain(action)}
                if unit_format is not None and kind == "turn":
                    record["unit"] = unit_format(date, plain(speaker), text, plain(caption))
                fh.write(json.dumps({k: v for k, v in record.items() if v is not None}, ensure_ascii=False) + "\n")
        if date:
            stamp = datetime.fromisoformat(date).timestamp()
            os.utime(folder / "events.jsonl", (stamp, stamp))
        written += 1
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp, out_dir)
    return written


UNITS = ("upstream", "plain")


def ingest(parsed: Path | Mapping[str, Path], out: Path | Mapping[str, Path],
           units: str = "upstream", record: Benchmark | None = None) -> dict[str, int]:
    """Read the parse outputs and write the session logs, view tables and maps (`parsed`, `out`: their paths,
    or the folder holding them; see `membench.sessions.reader.STORE_FILES`).

    units: "upstream" writes the benchmark's own retrieval unit for each turn where membench knows one
    (LoCoMo); "plain" indexes the turn's text and image caption only. `record`: the dataset's benchmark (the job's;
    by default the one its parse names)."""
    if units not in UNITS:
        raise ValueError(f"units must be one of {UNITS}, got {units!r}")
    files = needed(dataset_files(parsed), "normalization", "questions", "turns", "haystacks")
    record = record or parsed_with(files[0])
    unit_format = record.unit_format if units == "upstream" else None
    questions, turns, haystacks = (pd.read_parquet(p) for p in files[1:])

    haystack_keys = {h: f"h{i:05d}" for i, h in enumerate(pd.unique(haystacks["haystack_id"]))}
    query_keys = [f"q{i:05d}" for i in range(len(questions))]
    queries = pd.DataFrame({
        "query_key": query_keys, "text": questions["question"], "date": questions["question_date"],
        "haystack": questions["haystack_id"].map(haystack_keys), "split": questions["split"],
        **{f: questions[f] for f in METADATA_FIELDS},
    })
    view = haystacks.assign(haystack=haystacks["haystack_id"].map(haystack_keys))[["haystack", "position", "session_key"]]
    item_map = turns.assign(ref=[event_ref(k, t) for k, t in zip(turns["session_key"], turns["turn_index"])])
    session_rows = turns.drop_duplicates("session_key")[["session_key", "session_id"]]
    item_map = pd.concat([
        pd.DataFrame({"opaque_id": item_map["ref"], "granularity": "turn", "item_id": item_map["item_id"],
                      "session_id": item_map["session_id"]}),
        pd.DataFrame({"opaque_id": session_rows["session_key"], "granularity": "session",
                      "item_id": session_rows["session_id"], "session_id": session_rows["session_id"]}),
    ], ignore_index=True)

    sessions_dir, queries_path, view_path, item_map_path, query_map_path = needed(store_files(out), *STORE_FILES)
    n_sessions = write_session_logs(turns, sessions_dir, unit_format)
    atomic_write_parquet(queries, queries_path)
    atomic_write_parquet(view, view_path)
    atomic_write_parquet(item_map, item_map_path)
    atomic_write_parquet(pd.DataFrame({"query_key": query_keys, "question_id": questions["question_id"]}),
                         query_map_path)
    return {"sessions": n_sessions, "queries": len(queries), "haystacks": len(haystack_keys)}


def rule_ingest(job: Job) -> None:
    """Rule ingest: one dataset's tables -> its session logs, view and id maps."""
    done = ingest(job.input.files(), job.output.files(), job.params.units, job.benchmark)
    log.info("ingested %s", done)
