"""LoCoMo's own facts: the `observation` field of locomo10.json as fact logs, with zero model calls.

Upstream shape: ``sample["observation"]["session_<N>_observation"] = {<speaker>: [[fact, dia_id], ...]}``
where ``dia_id`` is one id (``"D1:3"``), a list of ids, or -- 5 times in locomo10 -- several ids joined by
commas in one string (``"D22:21, D22:23"``); upstream's RAG code (task_eval/evaluate_gpts.py,
``get_rag_context``) splits such strings on ``,``, and so does this module (counted as ``comma_split``).

Mapping: ``sample_id`` + ``session_<N>`` -> the session key through turns.parquet (``session_id`` is
``<sample_id>/session_<N>``); a dia_id -> that conversation's turn with ``item_id == dia_id`` -> event ref
``<session_key>_<turn_index + 1>``. A dia_id that names no turn is dropped from ``about`` and counted
(``unmapped_refs``, with examples); an observation of a session that is not in the parsed data is counted
in ``unmapped_sessions`` and skipped. Nothing is dropped silently.

Each fact becomes ``{"ref": "<session_key>_f<n>", "kind": "fact", "role": "memory", "speaker": <speaker>,
"text": fact, "timestamp": <session time>, "about": [refs], "source": "locomo-observation"}`` in
``<out_dir>/<session_key>.jsonl`` (the same format as model-extracted facts), plus ``manifest.json``.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from membench.benchmarks.locomo.dia_ids import split_dia_ids
from membench.errors import InputError
from membench.facts.extract import write_fact_log
from membench.io import atomic_write_text

__all__ = ["SOURCE", "observation_facts", "write_observations"]

SOURCE = "locomo-observation"
_OBS_KEY = re.compile(r"session_(\d+)_observation")


def observation_facts(locomo_json: Path, turns: pd.DataFrame) -> tuple[dict[str, list[dict]], dict]:
    """Fact records per session key, and the counts for the manifest."""
    path = Path(locomo_json)
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the LoCoMo file: {err}") from None
    if not isinstance(samples, list):
        raise InputError(path, "expected a list of conversations")
    sessions = turns.drop_duplicates("session_id").set_index("session_id")
    refs = {(c, item): f"{k}_{int(t) + 1}" for c, item, k, t in
            zip(turns.conversation_id, turns.item_id, turns.session_key, turns.turn_index)}
    by_session: dict[str, list[dict]] = {}
    counts: Counter = Counter()
    per_session: dict[str, int] = {}
    unmapped_examples: list[str] = []
    for s, sample in enumerate(samples):
        sample_id = sample.get("sample_id") if isinstance(sample, dict) else None
        observation = sample.get("observation") if isinstance(sample, dict) else None
        if not sample_id or not isinstance(observation, dict):
            counts["samples_without_observation"] += 1
            continue
        for obs_key in sorted(observation, key=lambda k: (len(k), k)):
            m = _OBS_KEY.fullmatch(obs_key)
            by_speaker = observation[obs_key]
            if not m or not isinstance(by_speaker, dict):
                counts["unreadable_observation_keys"] += 1
                continue
            session_id = f"{sample_id}/session_{m.group(1)}"
            if session_id not in sessions.index:
                counts["unmapped_sessions"] += 1
                counts["facts_in_unmapped_sessions"] += sum(len(v) for v in by_speaker.values()
                                                            if isinstance(v, list))
                continue
            key = sessions.at[session_id, "session_key"]
            timestamp = sessions.at[session_id, "session_date"]
            timestamp = None if pd.isna(timestamp) else str(timestamp)
            records = by_session.setdefault(key, [])
            for speaker, items in by_speaker.items():
                for item in items if isinstance(items, list) else []:
                    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                            and item[0].strip()):
                        counts["malformed_observations"] += 1
                        continue
                    ids, split = split_dia_ids(item[1])
                    counts["comma_split"] += split
                    about = []
                    for dia in ids:
                        counts["refs"] += 1
                        ref = refs.get((sample_id, dia))
                        if ref is None:
                            counts["unmapped_refs"] += 1
                            if len(unmapped_examples) < 20:
                                unmapped_examples.append(f"{sample_id} {obs_key}: {dia!r}")
                        elif ref not in about:
                            about.append(ref)
                    if not about:
                        counts["facts_without_turns"] += 1
                    records.append({"ref": f"{key}_f{len(records) + 1}", "kind": "fact", "role": "memory",
                                    "speaker": speaker, "text": " ".join(item[0].split()), "timestamp": timestamp,
                                    "about": about, "source": SOURCE})
                    counts["facts"] += 1
            per_session[session_id] = len(records)
    summary = {"source": SOURCE, "file": str(path), "facts": counts["facts"], "sessions": len(by_session),
               "refs": counts["refs"], "comma_split": counts["comma_split"], "unmapped_refs": counts["unmapped_refs"],
               "unmapped_ref_examples": unmapped_examples, "facts_without_turns": counts["facts_without_turns"],
               "unmapped_sessions": counts["unmapped_sessions"],
               "facts_in_unmapped_sessions": counts["facts_in_unmapped_sessions"],
               "malformed_observations": counts["malformed_observations"],
               "samples_without_observation": counts["samples_without_observation"],
               "facts_by_session": dict(sorted(per_session.items()))}
    return by_session, summary


def write_observations(locomo_json: Path, turns_path: Path, out_dir: Path) -> dict:
    """Write one fact log per LoCoMo session with observations, plus ``manifest.json``; returns the manifest."""
    turns = pd.read_parquet(turns_path)
    by_session, manifest = observation_facts(locomo_json, turns)
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(f".{out_dir.name}.part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for key, records in sorted(by_session.items()):
        write_fact_log(tmp / f"{key}.jsonl", records)
    manifest = {"stage": "facts", "status": "complete", **manifest}
    atomic_write_text(tmp / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.replace(out_dir)
    return manifest
