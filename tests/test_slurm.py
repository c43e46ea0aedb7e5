"""The README's cluster recipe on a real (single-node) SLURM: profiles/slurm as shipped, partition and account
from SBATCH_PARTITION / SBATCH_ACCOUNT, real Procedural data and two real LoCoMo conversations (`locomo_slice`:
the point is the cluster path, every rule of it, not LoCoMo's figures) with bm25 and action-only (an embedding
adapter: MiniLM over Procedural trajectories; dense on LoCoMo would add minutes).

Every non-local job must have run as a COMPLETED SLURM job in partition `batch` under account `lab`
(the cluster's default partition is `debug`, so `batch` proves the profile passed it on), with a kept
per-job log; results/summary.parquet must equal a local run's. SLURM comes from Debian's packages
(`.ci/run` installs them; this test tries apt-get itself when root). It skips only when they cannot be
installed, and MEMBENCH_REQUIRE_SLURM=1 (CI) makes that a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO, locomo_slice, run_snakemake
from slurm_cluster import ClusterUnavailable, SlurmCluster, install_packages, missing_binaries

pytestmark = pytest.mark.slow

KEEP = ("bm25", "action-only")
LOCAL_RULES = {"aggregate", "embedded", "explorer", "plots", "report", "summary", "tables"}
SUBMITTED = re.compile(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: (\S+)\)")


def unavailable(reason: str) -> None:
    """Skip, or with MEMBENCH_REQUIRE_SLURM=1 (CI) fail."""
    if os.environ.get("MEMBENCH_REQUIRE_SLURM") == "1":
        pytest.fail(reason + "; MEMBENCH_REQUIRE_SLURM=1 makes this a failure", pytrace=False)
    pytest.skip(reason)


def require_slurm() -> None:
    """Stop here when SLURM or the executor plugin is not available."""
    problems = []
    if missing_binaries():
        why = install_packages()
        if missing_binaries():
            problems.append(f"SLURM programs missing: {', '.join(missing_binaries())} ({why or 'apt-get ran'})")
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        problems.append("snakemake-executor-plugin-slurm is not installed (pip install -e '.[slurm]')")
    if problems:
        unavailable("; ".join(problems))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_slurm()
    try:
        # 4 job slots on 2 cores: a job spends much of its life between status polls, so twice the slots keep the
        # cores busier (the pipeline's jobs take one thread each; none asks for more than 2)
        running = SlurmCluster(tmp_path_factory.mktemp("slurm"), partitions=("debug", "batch"), cpus=4).__enter__()
    except ClusterUnavailable as e:
        unavailable(str(e))
    pids = running.pids()
    try:
        yield running
    finally:
        running.__exit__(None, None, None)
    for pid in pids:  # stopped, not left running
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def write_config(work: Path, locomo_dir: Path, procedural_dir: Path, embedding_dir: Path) -> Path:
    adapters = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["adapters"]
    config = {
        "resources_dir": str(work / "resources"),
        "embeddings_dir": str(embedding_dir),
        "datasets": {
            "longmemeval-s": {"kind": "longmemeval", "enabled": False},
            "locomo": {"kind": "locomo", "path": str(locomo_dir)},
            "procedural": {"kind": "procedural", "path": str(procedural_dir)},
        },
        "adapters": {name: {"enabled": False} for name in adapters if name not in KEEP},
        "facts": {"source": "none"},
    }
    path = work / "cluster-test.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def timed_run(work: Path, config: Path, *args: str, env: dict | None = None):
    start = time.monotonic()
    done = run_snakemake(work, config, "results/report.md", *args, env=env)
    return done, time.monotonic() - start


def test_pipeline_on_slurm_matches_local_run(cluster, tmp_path, locomo_dir, procedural_dir, embedding_dir):
    local, remote = tmp_path / "local", tmp_path / "slurm"
    for work in (local, remote):
        work.mkdir()
    locomo_dir = locomo_slice(locomo_dir, tmp_path / "locomo")
    env = {"SLURM_CONF": str(cluster.conf), "SBATCH_PARTITION": "batch", "SBATCH_ACCOUNT": "lab"}
    old = os.umask(0o022)  # as on a typical shared cluster; jobs inherit it through sbatch
    try:
        # The local reference run goes on beside the SLURM run, which spends most of its wall time between
        # status polls; the two share only the content-addressed embedding cache.
        with ThreadPoolExecutor(max_workers=1) as pool:
            local_run = pool.submit(timed_run, local, write_config(local, locomo_dir, procedural_dir, embedding_dir),
                                    "--cores", "2")
            done, slurm_seconds = timed_run(
                remote, write_config(remote, locomo_dir, procedural_dir, embedding_dir),
                "--workflow-profile", str(REPO / "profiles" / "slurm"),
                # The profile's 20 s first poll suits a real queue; a test cluster answers at once. 1 s, the
                # plugin's least: a job takes 5-9 s here, and a poll that finds nothing finished waits 10 s longer
                # than the one before, so the first poll's delay only adds to each step of the chain.
                "--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5", env=env)
            local_done, local_seconds = local_run.result()
    finally:
        os.umask(old)
    assert local_done.returncode == 0, local_done.stderr[-4000:]
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:] + "\n" + cluster.logs()

    submitted = dict(SUBMITTED.findall(log))
    finished = {job["JobId"]: job for job in cluster.completed_jobs()}
    print(f"\nSLURM jobs submitted: {len(submitted)}; wall time: SLURM {slurm_seconds:.0f} s, "
          f"local {local_seconds:.0f} s")

    # Every job of a non-local rule was a SLURM job that completed in the partition and account asked for.
    job_stats = dict(re.findall(r"^(\w+)\s+(\d+)$", log.split("Job stats:")[1].split("total")[0], re.M))
    cluster_jobs = sum(int(n) for rule, n in job_stats.items() if rule not in LOCAL_RULES)
    assert {"parse", "ingest", "rank", "score"} <= set(job_stats) and LOCAL_RULES <= set(job_stats)
    assert len(submitted) == cluster_jobs
    for jobid in submitted:
        job = finished[jobid]
        assert (job["JobState"], job["Partition"], job["Account"]) == ("COMPLETED", "batch", "lab"), job

    # One kept log per SLURM job, filed by rule; the local rules have none.
    logs = sorted((remote / "logs" / "slurm").rglob("*.log"))
    assert sorted(p.stem for p in logs) == sorted(submitted)
    assert {p.relative_to(remote / "logs" / "slurm").parts[0] for p in logs} == {
        f"rule_{rule}" for rule in job_stats if rule not in LOCAL_RULES}

    # The same numbers as the local run, and results the group can read.
    ours, theirs = (pd.read_parquet(w / "results" / "summary.parquet") for w in (remote, local))
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    assert set(ours.adapter) == set(KEEP) and set(ours.dataset) == {"locomo", "procedural"}
    for written in ("results/report.md", "results/summary.parquet", "results/procedural/runs/action-only.parquet"):
        assert stat.S_IMODE((remote / written).stat().st_mode) == 0o644, written
