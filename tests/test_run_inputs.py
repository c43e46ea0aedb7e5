"""Inputs that cannot fool a run (issue 22, item 6), end to end on copies of the real data.

A name that would reach outside results/ is refused before anything is written; a run with nothing enabled
is an error; an error the project raises prints its one line, the traceback goes to the rule's log; an edit
inside a `path:` folder reruns that dataset's chain and nothing of another dataset; one dataset's files parse
and embed that dataset only; a one-conversation LoCoMo run says why it has no conversation-level CI.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from conftest import locomo_slice, run_snakemake

pytestmark = pytest.mark.slow

OFF = ("bm25-upstream", "bm25-time", "bm25-v2", "hybrid", "substring", "state-aware")  # bm25, dense, action-only run


def write_config(work: Path, datasets: dict, **rest) -> Path:
    config = {"resources_dir": str(work / "resources"), "datasets": {"longmemeval-s": {"enabled": False}, **datasets},
              "adapters": {name: {"enabled": False} for name in OFF}, "facts": {"source": "none"}, **rest}
    path = work / "inputs.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def copy_procedural(procedural_dir: Path, dest: Path) -> Path:
    """A writable copy (the shared files are read-only), so a test can edit it."""
    dest.mkdir(parents=True)
    for name in ("agentinstruct_trajectories.json", "query_bank.json"):
        (dest / name).write_bytes((procedural_dir / name).read_bytes())
    return dest


def planned(done) -> list[tuple[str, str | None]]:
    """(rule, dataset wildcard or scope, or None) of every job a dry run lists."""
    assert done.returncode == 0, done.stderr[-4000:]
    jobs = []
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        if match := re.fullmatch(r"(?:local)?rule (\w+):", line):
            jobs.append([match.group(1), None])
        elif jobs and (match := re.match(r"    wildcards: (?:dataset|scope)=([^,]+)", line)):
            jobs[-1][1] = match.group(1)
    return sorted(map(tuple, jobs), key=str)


# ---------------------------------------------------------------- refused before the DAG is built

@pytest.mark.parametrize("section", ["datasets", "adapters"])
def test_a_name_that_leaves_results_is_refused_before_anything_is_written(tmp_path, locomo_dir, section):
    work = tmp_path / "work"
    work.mkdir()
    datasets = {"locomo": {"kind": "locomo", "path": str(locomo_dir)}}
    if section == "datasets":
        datasets = {"../../x": datasets["locomo"]}
    config = write_config(work, datasets, **({"adapters": {"../../x": {"adapter": "bm25"}}} if section == "adapters"
                                             else {}))
    done = run_snakemake(work, config, "--cores", "1", "results/report.md")
    assert done.returncode == 1
    assert (f"membench: file config, field '{section}': config does not match config.schema.yaml: '../../x' does "
            "not match '^[A-Za-z0-9_-][A-Za-z0-9._-]*$'") in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert sorted(p.name for p in work.iterdir()) == [".snakemake", "inputs.yaml"]  # no results/, resources/, logs/
    assert not (tmp_path / "x").exists() and not (work.parent.parent / "x").exists()


@pytest.mark.parametrize("switched_off, message", [
    ({"datasets": {"locomo": {"enabled": False}}},
     "membench: file config, field 'datasets': every dataset is disabled (`enabled: false`) or none is given"),
    ({"adapters": {name: {"enabled": False} for name in ("bm25", "dense", "action-only", *OFF)}},
     "membench: file config, field 'adapters': every adapter run is disabled (`enabled: false`)"),
])
def test_a_run_with_nothing_enabled_is_an_error(tmp_path, locomo_dir, switched_off, message):
    config = write_config(tmp_path, {"locomo": {"kind": "locomo", "path": str(locomo_dir)},
                                     "procedural": {"enabled": False}})
    settings = yaml.safe_load(config.read_text())
    for section, entries in switched_off.items():
        for name, spec in entries.items():
            settings[section].setdefault(name, {}).update(spec)
    config.write_text(yaml.safe_dump(settings))
    done = run_snakemake(tmp_path, config, "--cores", "1", "results/report.md")
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert not (tmp_path / "results").exists()


def test_a_malformed_file_prints_one_line_and_logs_the_traceback(tmp_path, locomo_dir):
    data = json.loads((locomo_dir / "locomo10.json").read_text(encoding="utf-8"))[:2]
    data[1]["qa"][3]["category"] = "seven"
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo10.json").write_text(json.dumps(data), encoding="utf-8")
    config = write_config(tmp_path, {"locomo": {"kind": "locomo", "path": str(tmp_path / "locomo")},
                                     "procedural": {"enabled": False}})
    done = run_snakemake(tmp_path, config, "--cores", "1", "results/locomo/questions.parquet")
    line = (f"InputError: file {tmp_path / 'locomo' / 'locomo10.json'}, record question_id=conv-30_q3 "
            "(sample_id=conv-30, qa[3]), field 'category': expected an integer, got str")
    console = done.stdout + done.stderr
    assert done.returncode == 1 and console.count(line) == 1, console[-3000:]
    assert "Traceback" not in console
    logged = (tmp_path / "logs" / "parse" / "locomo.log").read_text(encoding="utf-8")
    assert logged.count(line) == 2 and "Traceback (most recent call last):" in logged
    assert 'in _parse_qa\n    category = get(qa, "category", int, path, rec)' in logged


# ---------------------------------------------------------------- one finished run: LoCoMo's conv-26, Procedural

@pytest.fixture(scope="module")
def run(tmp_path_factory, locomo_dir, procedural_dir, embedding_dir):
    work = tmp_path_factory.mktemp("inputs")
    locomo = locomo_slice(locomo_dir, work / "data" / "locomo", ("conv-26",))  # 199 QA, 19 sessions
    procedural = copy_procedural(procedural_dir, work / "data" / "procedural")
    config = write_config(work, {"locomo": {"kind": "locomo", "path": str(locomo)},
                                 "procedural": {"kind": "procedural", "path": str(procedural)}},
                          embeddings_dir=str(embedding_dir), report={"bootstrap_resamples": 200})
    done = run_snakemake(work, config, "--cores", "2", "results/report.md")
    assert done.returncode == 0, done.stderr[-4000:]
    return work, config


def test_one_conversation_says_why_it_has_no_conversation_level_ci(run):
    work, _ = run
    headline = (work / "results" / "headline.txt").read_text(encoding="utf-8")
    report = (work / "results" / "report.md").read_text(encoding="utf-8")
    assert not re.search(r"\bnan\b", headline + report)
    # conv-26 holds 199 QA; the 2 with empty evidence are left out of retrieval scoring (no gold)
    assert "locomo (locomo, 197 questions, 95% CI by conversation)" in headline
    locomo = headline[headline.index("locomo (locomo"):headline.index("procedural (procedural")]
    rows = {line.split()[0]: re.findall(r"\d\.\d{3} (\[[^]]*\])", line) for line in locomo.splitlines()[2:] if line}
    assert rows == {"bm25": ["[n/a: 1 conversation]"] * 3, "dense": ["[n/a: 1 conversation]"] * 3}, headline
    assert ("This run's figures rest on a single conversation, so they have no conversation-level CI (a bootstrap "
            "needs two units to show any spread: the cells say `n/a: 1 conversation`) and no paired test can find "
            "a difference (p = 1). `report.cluster_bootstrap: false` resamples its questions instead.") in report
    assert re.search(r"\| dense \| evidence_recall@10 \| [+-]0\.\d{4} \[n/a: 1 conversation\] \| 1\.0000 \|", report)
    # the efficiency table too: accuracy and budget recall say why they have no CI
    assert re.search(r"\n\| (◆ )?bm25 \| 0\.\d{3} \[n/a: 1 conversation\] \| 0\.\d{3} \[n/a: 1 conversation\] \|", report)
    # Procedural's 40 queries are 40 units: its CIs are there
    assert re.search(r"\n  action-only +0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]", headline)
    tex = (work / "results" / "tables" / "locomo.tex").read_text(encoding="utf-8")
    assert r"{\scriptsize [n/a: 1 conversation]}" in tex


def test_an_edit_inside_a_path_folder_reruns_its_chain_and_nothing_of_another_dataset(run):
    work, config = run
    bank = work / "data" / "procedural" / "query_bank.json"
    before, stat = bank.read_bytes(), bank.stat()
    try:
        edited = json.loads(before)
        edited["queries"][0]["relevant_trajectories"][0]["relevance_score"] = 7.0  # easy_1's first label, 10 -> 7
        bank.write_text(json.dumps(edited), encoding="utf-8")
        chain = planned(run_snakemake(work, config, "-n", "results/report.md"))
        assert chain == sorted([
            ("parse", "procedural"), ("ingest", "procedural"), ("embed_texts", "procedural"),
            ("embed", "locomo+procedural"), ("embed", "locomo+procedural"), ("embedded", "procedural"),
            *[(rule, "procedural") for rule in ("rank", "score") for _ in ("bm25", "dense", "action-only")],
            ("aggregate", "procedural"), ("plots", "procedural"),
            ("item_tokens", "procedural"),
            ("summary", None), ("tables", None), ("explorer", None), ("report", None)], key=str)

        # the same bytes put back with the file's old times: the digest is the old one, nothing to do
        bank.write_bytes(before)
        os.utime(bank, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert planned(run_snakemake(work, config, "-n", "results/report.md")) == []

        # other bytes with the old times (`cp -p` of another version): its time says nothing, its bytes do
        bank.write_text(json.dumps(edited), encoding="utf-8")
        os.utime(bank, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert ("parse", "procedural") in planned(run_snakemake(work, config, "-n", "results/report.md"))
    finally:
        bank.write_bytes(before)
        os.utime(bank, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert planned(run_snakemake(work, config, "-n", "results/report.md")) == []


@pytest.mark.parametrize("target, dataset", [("results/locomo/scores/dense.parquet", "locomo"),
                                             ("results/procedural/scores/action-only.parquet", "procedural")])
def test_one_datasets_files_touch_that_dataset_only(run, tmp_path, target, dataset):
    """An embedding run's score file, asked for in an empty folder: its dataset's chain, with embed shards of
    that dataset alone."""
    _, config = run
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    jobs = planned(run_snakemake(fresh, config, "-n", target))
    assert {d for _, d in jobs} == {dataset}  # the embed shards' scope is the dataset alone
    assert sorted(rule for rule, _ in jobs) == sorted(["parse", "ingest", "embed_texts", "embed", "embed", "embedded",
                                                       "rank", "item_tokens", "score"])
