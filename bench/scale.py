"""Scale benchmark: the zero-call sweep's wall time against its floor, on the shared data or synthetic S/M data.

    python bench/scale.py --shared --json out.json          # the default run (config/shared-data.yaml)
    python bench/scale.py --shape s --questions 100         # LongMemEval-S shape, generated (timing only)
    python bench/scale.py --shape m --questions 50          # LongMemEval-M shape
    python bench/scale.py --shape s --questions 100 --adapters bm25 bm25-upstream   # only these runs
    python bench/scale.py --shared --datasets beam-500k     # only these of config/shared-data.yaml's datasets

Runs `snakemake --cores N results/report.md` in a fresh work folder with every zero-call built-in (or only the
runs --adapters names: the BM25 family alone times how parse and scoring (with the retrieval logs) grow with the
questions, without the embedding), then a no-op rerun (and, to compare it with, Snakemake on an empty workflow,
and one job's Python start-up, fresh and handed to a fork server: bench/startup.py),
then measures the floor in the same process (bench/floor.py): one `encode` call (batch 64, every core)
over every distinct text the run's embedding runs need, plus one BM25 pass over the data -- the unavoidable work,
done once the fastest plain way and timed, not a sampled throughput (`--sample N` gives that quicker estimate,
labelled as one). Prints and writes (--json): wall,
floor, their ratio, wall per rule and peak RSS per job (from `benchmarks/**.tsv`), distinct vs requested texts.
Prints targets; asserts nothing. Synthetic data is for timing only: its dataset is named `synthetic-lme-<shape>`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import yaml  # noqa: E402

from bench.floor import Encoder, bm25_seconds, cache_keys, dataset_texts, embed_summaries  # noqa: E402
from bench.generate_longmemeval import shape_arguments, shape_from  # noqa: E402
from bench.job_records import by_rule, jobs_run, read_jobs  # noqa: E402
from bench.lme_shape import NOTICE, Shape, write  # noqa: E402
from bench.scale_report import print_report  # noqa: E402
from bench.startup import empty_workflow_seconds, handed_over_startup_seconds, job_startup_seconds  # noqa: E402


def shared_datasets(only: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """config/shared-data.yaml's datasets with their paths made absolute (they are relative to the repo); with
    `only`, those datasets switched on (BEAM-500K is off there by default) and every other one off."""
    datasets = yaml.safe_load((REPO / "config" / "shared-data.yaml").read_text())["datasets"]
    unknown = sorted(set(only or ()) - set(datasets))
    if unknown:
        sys.exit(f"--datasets: {', '.join(unknown)} not among config/shared-data.yaml's ({', '.join(datasets)})")
    for name, spec in datasets.items():
        if "path" in spec:
            spec["path"] = str((REPO / spec["path"]).resolve())
        if only:
            spec["enabled"] = name in only
    return datasets


def default_config() -> dict[str, Any]:
    """config.yaml, whose datasets and runs a benchmark config switches off."""
    return yaml.safe_load((REPO / "config.yaml").read_text())


def synthetic_datasets(name: str, path: Path) -> dict[str, dict[str, Any]]:
    """Only the generated file: every dataset of config.yaml switched off."""
    defaults = default_config()["datasets"]
    datasets = {d: {"kind": spec["kind"], "enabled": False} for d, spec in defaults.items()}
    datasets[name] = {"kind": "longmemeval", "path": str(path)}
    return datasets


def snakemake(work: Path, config: Path, cores: int, log: Path) -> float:
    """Run the workflow to its report; returns wall seconds, or exits with the log's tail on failure."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(work), "--cores", str(cores),
           "results/report.md", "--configfile", str(REPO / "config.yaml"), str(config)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                                                      os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    with open(log, "w") as fh:
        done = subprocess.run(cmd, cwd=work, env=env, stdout=fh, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"snakemake failed ({done.returncode}); the end of {log}:\n" + "".join(log.read_text()[-3000:]))
    return wall


def only_runs(names: list[str] | None) -> dict[str, Any]:
    """The config that switches off every default run not in `names`, and the fact-augmented runs of those
    (None: keep the defaults)."""
    if not names:
        return {}
    defaults = default_config()
    unknown = sorted(set(names) - set(defaults["adapters"]))
    if unknown:
        sys.exit(f"--adapters: {', '.join(unknown)} not among config.yaml's runs ({', '.join(defaults['adapters'])})")
    return {"adapters": {a: {"enabled": False} for a in defaults["adapters"] if a not in names},
            "facts": {"adapters": [a for a in defaults["facts"]["adapters"] if a in names]}}


def measure(work: Path, datasets: dict[str, dict[str, Any]], cores: int, sample: int | None,
            runs: dict[str, Any] | None = None) -> dict[str, Any]:
    """runs: config that switches default runs off (`only_runs`); sample: estimate the embedding floor from
    this many texts per dataset instead of embedding them all (None: embed them all)."""
    enabled = {d: spec for d, spec in datasets.items() if spec.get("enabled", True)}
    config = work / "scale-config.yaml"
    config.write_text(json.dumps({"datasets": datasets, **(runs or {})}))
    load_before = os.getloadavg()
    wall = snakemake(work, config, cores, work / "snakemake.log")
    rerun = snakemake(work, config, cores, work / "snakemake.rerun.log")
    empty = empty_workflow_seconds(cores)
    startup = job_startup_seconds(env=dict(os.environ, PYTHONPATH=str(REPO)))
    handed_over = handed_over_startup_seconds(REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    jobs = read_jobs(work, set(enabled))
    encoder = Encoder(threads=cores)
    found = {name: dataset_texts_or_error(work, name, spec["kind"]) for name, spec in enabled.items()}
    texts = {name: dataset_floor(work, name, f, jobs, encoder, sample) for name, f in found.items()}
    distinct = set().union(*(f.distinct for f in found.values() if not isinstance(f, str)))
    embedding = encoder.encode_all(distinct) if sample is None and distinct else None
    embed_floor = embedding["seconds"] if embedding else sum(t.get("embed_floor_s", 0) for t in texts.values())
    floor = embed_floor + sum(t.get("bm25_s", 0) for t in texts.values())
    floor_cpu = (embedding["cpu_s"] if embedding else 0.0) + sum(t.get("floor_cpu_s", 0) for t in texts.values())
    jobs_cpu = sum(j["cpu_s"] or 0 for j in jobs)
    return {"wall_s": wall, "noop_rerun_s": rerun, "empty_workflow_s": empty, "noop_ratio": rerun / empty,
            "job_startup_s": startup, "handed_over_startup_s": handed_over, "floor_s": floor, "ratio": wall / floor if floor else None,
            "floor_cpu_s": floor_cpu, "jobs_cpu_s": jobs_cpu, "cpu_ratio": jobs_cpu / floor_cpu if floor_cpu else None,
            "embed_stage_s": max((j["s"] or 0 for j in jobs if j["rule"] == "embed"), default=0.0),
            "embed_floor_s": embed_floor, "embed_floor": embedding or f"estimated from {sample} texts per dataset",
            "cores": cores, "load_before": load_before, "load_after": os.getloadavg(),
            "cache_keys": cache_keys(work / "resources" / "embeddings"), "datasets": texts,
            "stages": by_rule(jobs), "jobs": jobs, "jobs_run": jobs_run(work / "snakemake.log"),
            "rerun_jobs": jobs_run(work / "snakemake.rerun.log"), "work": str(work), "commit": _commit()}


def dataset_texts_or_error(work: Path, name: str, kind: str):
    """The dataset's texts, or the error (say, a changed view API) as text, so a long run's other figures are
    kept."""
    try:
        return dataset_texts(work, name, kind)
    except Exception as err:  # noqa: BLE001 - reported in the output instead
        return f"{type(err).__name__}: {err}"


def dataset_floor(work: Path, name: str, found, jobs: list[dict[str, Any]], encoder: Encoder,
                  sample: int | None) -> dict[str, Any]:
    """One dataset's texts, BM25 floor and embedding-job seconds (and, with `sample`, its estimated embedding
    floor)."""
    summaries = embed_summaries(work / "results" / name)
    if isinstance(found, str):
        return {"error": found, "embed_summaries": summaries}
    rate = encoder.rate(found.distinct, sample) if sample else None
    bm25_s, bm25_cpu = bm25_seconds(found.bm25_work)
    runs = set(found.per_run)
    return {
        "distinct_needed": len(found.distinct), "requested": found.requested, "requested_per_run": found.per_run,
        "encoder": rate, "embed_floor_s": len(found.distinct) / rate["texts_per_s"] if rate else None,
        "bm25_s": bm25_s,
        "floor_cpu_s": bm25_cpu + (len(found.distinct) / rate["texts_per_cpu_s"] if rate else 0.0),
        "embedding_jobs_s": sum(j["s"] or 0 for j in jobs if j["dataset"] == name and (
            "embed" in j["rule"] or (j["rule"] == "rank" and j["target"] in runs))),
        "embed_summaries": summaries}


def _commit() -> str | None:
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", action="store_true", help="the shared data (the default when no shape option)")
    shape_arguments(ap)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--sample", type=int, help="estimate the embedding floor from this many texts per dataset "
                    "(quicker, an extrapolation) instead of embedding every distinct text once")
    ap.add_argument("--adapters", nargs="+", metavar="RUN", help="only these of config.yaml's runs (default: all "
                    "that are on there)")
    ap.add_argument("--datasets", nargs="+", metavar="NAME", help="with --shared: only these of "
                    "config/shared-data.yaml's datasets, switched on (e.g. beam-500k)")
    ap.add_argument("--workdir", type=Path, help="work folder (default: a new temporary one, kept)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--wait-load", type=float, help="on a shared machine: start only once the 1-minute load "
                    "average is at most this")
    ap.set_defaults(shape=None)
    args = ap.parse_args()
    if args.shared and args.shape:
        ap.error("--shared and --shape are two different runs: give one")
    if args.datasets and args.shape:
        ap.error("--datasets picks among the shared data's datasets: it does not go with --shape")
    synthetic = args.shape is not None
    if not synthetic and any(getattr(args, f.name) is not None for f in dataclasses.fields(Shape)):
        ap.error("shape options (--questions, --sessions, ...) need --shape s or --shape m")
    runs = only_runs(args.adapters)  # an unknown name stops here, before any data is generated
    while args.wait_load is not None and os.getloadavg()[0] > args.wait_load:
        time.sleep(30)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="membench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    if synthetic:
        shape = shape_from(args)
        name = f"synthetic-lme-{args.shape}"
        start = time.perf_counter()
        about = write(shape, work / "data" / f"{name}.json")
        generated = {"name": name, "notice": NOTICE, **about, "seconds": time.perf_counter() - start,
                     "bytes": (work / "data" / f"{name}.json").stat().st_size}
        result = {"label": f"{name}, {shape.questions} questions (timing only)", "generated": generated,
                  **measure(work, synthetic_datasets(name, work / "data" / f"{name}.json"), args.cores, args.sample,
                             runs)}
    else:
        label = "shared data (config/shared-data.yaml)" + (f", only {', '.join(args.datasets)}" if args.datasets else "")
        result = {"label": label, **measure(work, shared_datasets(args.datasets), args.cores, args.sample, runs)}
    result["adapters"] = args.adapters or "config.yaml's defaults"
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print_report(result)


if __name__ == "__main__":
    main()
