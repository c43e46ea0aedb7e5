"""Rule explorer: an offline results explorer, `results/explorer/index.html`, opened from disk (file://) with no
server and no network: a leaderboard (CIs, paired tests, efficiency), a question browser with outcome filters
("A finds the evidence, B does not"), each question's gold turns in context and every system's top k.

Browsers forbid fetch() of local files, so the data ships as scripts that assign to a global
(`data/d<N>.js`: `MEMBENCH_DATA[...] = {...}`), loaded by injected <script> tags; a haystack's transcript text
(`data/d<N>/h<M>.js`) loads only when one of its questions is opened. The folder is built beside its place and
renamed in, so a failed run leaves none.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from membench.jobs.job import Job
from membench.explorer.data import dataset_payload, haystack_sessions

ASSETS = Path(__file__).parent / "assets"
DATA_FILES = ("assets/*",)  # the page, its script and style; part of this rule's code version


def _script(variable: str, key: str, value: Any) -> str:
    """A data file the page loads with a <script> tag: `window.VARIABLE[key] = value`."""
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return f"window.{variable}=window.{variable}||{{}};window.{variable}[{json.dumps(key)}]={body};\n"


def _nth(job: Job, name: str, index: int) -> Path:
    """The input `name` of the index-th dataset: per-dataset inputs are lists in the order of `params.datasets`."""
    return job.input.paths(name)[index]


def qa_inputs(job: Job, name: str) -> tuple[dict[str, pd.DataFrame], pd.DataFrame | None]:
    """In QA mode, the dataset's answers (QA'd run or full-context -> qa.parquet) and calibration probes; the
    rule has these inputs only when QA is on, so a run without QA reads nothing here."""
    p, i = job.params, job.input
    answers = {a: pd.read_parquet(f) for (d, a), f in zip(p.get("answered", []), i.get("qa", [])) if d == name}
    probes = [pd.read_parquet(f) for d, f in zip(p.get("calibrated", []), i.get("calibration", [])) if d == name]
    return answers, (probes[0] if probes else None)


def write_dataset(folder: Path, index: int, name: str, job: Job, summary: Mapping[str, Any],
                  significance: pd.DataFrame) -> dict[str, Any]:
    """`data/d<index>.js` and its haystack files; returns the dataset's entry in the page's index."""
    p = job.params
    runs = {a: (s, r) for (d, a), s, r in zip(p.runs, job.input.paths("scores"), job.input.paths("ranked"))
            if d == name}
    efficiency = json.loads(_nth(job, "efficiency", index).read_text(encoding="utf-8"))
    tables = {t: pd.read_parquet(_nth(job, t, index)) for t in ("questions", "qrels")}
    if job.input.get("gold_roles"):  # every parse writes one (empty but for BEAM); a hand-built job may have none
        tables["gold_roles"] = pd.read_parquet(_nth(job, "gold_roles", index))
    payload = dataset_payload(name, summary["datasets"][name], efficiency, tables, runs, significance,
                              *qa_inputs(job, name))
    hays = haystack_sessions(pd.read_parquet(_nth(job, "turns", index)), pd.read_parquet(_nth(job, "haystacks", index)),
                             payload)
    payload["haystack_files"] = {h: f"data/d{index}/h{n}.js" for n, h in enumerate(sorted(hays))}
    (folder / "data" / f"d{index}").mkdir(parents=True)
    for hay, sessions in hays.items():
        (folder / payload["haystack_files"][hay]).write_text(
            _script("MEMBENCH_EVIDENCE", f"{name}/{hay}", sessions), encoding="utf-8")
    (folder / "data" / f"d{index}.js").write_text(_script("MEMBENCH_DATA", name, payload), encoding="utf-8")
    return {"name": name, "kind": payload["kind"], "file": f"data/d{index}.js", "metrics": payload["metrics"],
            "questions": len(payload["questions"]["id"]), "runs": payload["runs"]}


def build_explorer(folder: Path, job: Job) -> None:
    """Every file of the explorer into `folder` (an empty new folder)."""
    summary = json.loads(job.input.path("summary").read_text(encoding="utf-8"))
    significance = pd.read_parquet(job.input.path("significance"))
    (folder / "data").mkdir()
    datasets = [write_dataset(folder, n, name, job, summary, significance)
                for n, name in enumerate(job.params.datasets)]
    index = {"datasets": datasets, "baseline": job.params.baseline, "subset": summary.get("subset")}  # its line
    (folder / "data" / "index.js").write_text(_script("MEMBENCH_INDEX", "run", index), encoding="utf-8")
    for asset in sorted(ASSETS.iterdir()):
        shutil.copyfile(asset, folder / asset.name)
