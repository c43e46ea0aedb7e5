"""The fork server (membench.jobs.fork_server) with real processes on a real Unix socket: a job handed over runs in
a child of the server with the job's streams, directory, environment, umask and argv, and exits with the child's
status; signals reach the child; a killed job takes its child with it; and whatever the server cannot do runs in
the job's own process, as before."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import REPO
from membench.jobs import hand_over
from membench.jobs.fork_server import JOURNAL, THREAD_VARS, ForkServer

JOB = textwrap.dedent("""\
    from membench.jobs.hand_over import hand_over
    hand_over()
    import json, os, sys, time
    mask = os.umask(0)
    print(json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(), "argv": sys.argv,
                      "answer": os.environ.get("ANSWER"), "umask": mask}))
    sys.stdout.flush()
    print("to stderr", file=sys.stderr)
    what = sys.argv[1]
    if what == "fail":
        raise ValueError("a bad record in some file")
    if what == "sleep":
        open(sys.argv[2], "w").write(str(os.getpid()))
        time.sleep(60)
    sys.exit(int(what))
    """)


def started(scripts: Path) -> ForkServer:
    """A server for the scripts in `scripts` (the job script), as the workflow's onstart starts one."""
    (scripts / "job.py").write_text(JOB, encoding="utf-8")
    running = ForkServer(scripts)
    running.start()
    return running


@pytest.fixture(autouse=True)
def this_membench(monkeypatch):
    """The server imports membench from where the jobs do (the workflow sets PYTHONPATH to its folder likewise)."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv(JOURNAL, str(tmp_path / "journal.tsv"))
    running = started(tmp_path)
    yield running
    running.stop()


def job(tmp_path: Path, *args: str, env: dict | None = None, **popen) -> subprocess.Popen:
    script = tmp_path / "job.py"
    script.write_text(JOB, encoding="utf-8")  # as the server saw it, or the only script where there is none
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    # as Snakemake starts a one-thread job
    full = {**os.environ, "ANSWER": "42", "PYTHONPATH": str(REPO), **dict.fromkeys(THREAD_VARS, "1"), **(env or {})}
    return subprocess.Popen([sys.executable, str(script), *args], cwd=work, env=full, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=lambda: os.umask(0o027),
                            **popen)


def finished(process: subprocess.Popen) -> tuple[int, dict, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, json.loads(out.splitlines()[0]), err


def journal(tmp_path: Path) -> list[list[str]]:
    path = tmp_path / "journal.tsv"
    return [line.split("\t") for line in path.read_text().splitlines()] if path.exists() else []


def test_a_handed_over_job_runs_in_a_child_of_the_server_as_itself(server, tmp_path):
    process = job(tmp_path, "3")
    status, seen, err = finished(process)
    assert status == 3 and err == "to stderr\n"
    assert seen["pid"] != process.pid and seen["ppid"] == server.process.pid
    assert seen["cwd"] == str(tmp_path / "work") and seen["answer"] == "42" and seen["umask"] == 0o027
    assert seen["argv"] == [str(tmp_path / "job.py"), "3"]
    assert journal(tmp_path) == [[str(seen["pid"]), str(tmp_path / "job.py"), "3"]]


def test_an_exception_is_reported_as_the_interpreter_would_and_fails_the_job(server, tmp_path):
    status, seen, err = finished(job(tmp_path, "fail"))
    assert status == 1 and seen["ppid"] == server.process.pid
    assert err.startswith("to stderr\nTraceback (most recent call last):")
    assert err.rstrip().endswith("ValueError: a bad record in some file")


def test_a_signal_to_the_job_reaches_its_child(server, tmp_path):
    process = job(tmp_path, "sleep", str(tmp_path / "child.pid"))
    child = wait_for_pid(tmp_path / "child.pid")
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 128 + signal.SIGTERM
    assert gone(child)


def test_a_killed_job_takes_its_child_with_it(server, tmp_path):
    process = job(tmp_path, "sleep", str(tmp_path / "child.pid"))
    child = wait_for_pid(tmp_path / "child.pid")
    process.kill()
    process.wait(30)
    assert gone(child)


def test_without_a_server_the_job_runs_in_its_own_process(tmp_path):
    for env in ({hand_over.ENV: ""}, {hand_over.ENV: f"{2**22 + 7}:{tmp_path / 'no-socket'}"}):
        process = job(tmp_path, "0", env=env)
        status, seen, _ = finished(process)
        assert status == 0 and seen["pid"] == process.pid


def test_a_job_without_a_standard_stream_runs_in_its_own_process(server, tmp_path):
    finished(job(tmp_path, "0"))
    script = tmp_path / "job.py"
    closed = subprocess.run([sys.executable, str(script), "0"], cwd=tmp_path / "work", capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO), **dict.fromkeys(THREAD_VARS, "1")},
                            preexec_fn=lambda: os.close(0), timeout=60)
    assert closed.returncode == 0, closed.stderr
    assert json.loads(closed.stdout.splitlines()[0])["ppid"] != server.process.pid
    assert len(journal(tmp_path)) == 1  # the first job, with its stdin


def test_a_job_that_would_import_another_membench_runs_in_its_own_process(server, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "membench").symlink_to(REPO / "membench")
    process = job(tmp_path, "0", env={"PYTHONPATH": str(other)})
    status, seen, _ = finished(process)
    assert status == 0 and seen["pid"] == process.pid and journal(tmp_path) == []


def test_a_bad_or_vanished_request_leaves_the_server_serving(server, tmp_path):
    for payload in (None, b"not json", b'{"argv": []}'):
        with hand_over._connect(os.environ[hand_over.ENV]) as conn:  # waits while the server starts
            if payload is not None:
                socket.send_fds(conn, [payload], [0, 1, 2])
                assert json.loads(conn.recv(4096)) == {"refused": "another membench, other thread counts or a bad request"}
    status, seen, _ = finished(job(tmp_path, "0"))
    assert status == 0 and seen["ppid"] == server.process.pid


def test_a_job_on_another_python_runs_in_its_own_process(server, tmp_path):
    """A `--use-conda` job runs on its environment's interpreter: the server's Python is not it."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    script = tmp_path / "job.py"
    script.write_text(JOB, encoding="utf-8")
    (tmp_path / "work").mkdir()
    done = subprocess.run([str(venv / "bin" / "python"), str(script), "0"], cwd=tmp_path / "work", timeout=60,
                          env={**os.environ, **dict.fromkeys(THREAD_VARS, "1")}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["ppid"] != server.process.pid and journal(tmp_path) == []


def test_a_job_with_other_thread_counts_runs_in_its_own_process(server, tmp_path):
    """The server's BLAS was loaded for one thread; a job of two threads would split its sums differently there."""
    process = job(tmp_path, "0", env={"OPENBLAS_NUM_THREADS": "2"})
    status, seen, _ = finished(process)
    assert status == 0 and seen["pid"] == process.pid and journal(tmp_path) == []
    status, seen, _ = finished(job(tmp_path, "0"))
    assert status == 0 and seen["ppid"] == server.process.pid and len(journal(tmp_path)) == 1


def test_the_server_ends_with_the_workflow_and_leaves_no_socket(tmp_path, monkeypatch):
    running = started(tmp_path)
    folder, pid = running.folder, running.process.pid
    status, seen, _ = finished(job(tmp_path, "0"))
    assert seen["ppid"] == pid
    running.stop()
    assert not folder.exists() and gone(pid) and hand_over.ENV not in os.environ


def test_a_preload_that_brings_in_a_model_library_is_refused():
    done = subprocess.run([sys.executable, "-P", "-m", "membench.jobs.fork_server", "/nonexistent/socket",
                           "membench.jobs.job", "openai"], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 1 and "preloading membench.jobs.job, openai imported openai" in done.stderr


def wait_for_pid(path: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"the job never wrote {path}")


def gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a child of this process (the server) shows as a zombie until it is reaped
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


# A job as Snakemake's script preamble starts it (`snakemake` names the log), that keeps 200 MiB resident
MEASURED = textwrap.dedent("""\
    import sys, types
    snakemake = types.SimpleNamespace(log=[sys.argv[1]])
    from membench.jobs.hand_over import hand_over
    hand_over()
    block = bytearray(200 * 2**20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    """)


def measured_job(tmp_path: Path, log: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    script = tmp_path / "measured.py"
    script.write_text(MEASURED, encoding="utf-8")
    full = {**os.environ, "PYTHONPATH": str(REPO), **dict.fromkeys(THREAD_VARS, "1"), **(env or {})}
    return subprocess.run([sys.executable, str(script), str(log)], cwd=tmp_path, env=full, capture_output=True,
                          text=True, timeout=60)


def test_a_forked_job_keeps_its_childs_peak_memory_and_cpu_beside_its_log(server, tmp_path):
    """Snakemake's benchmark of a handed-over job measures the waiting process; the child's own peak and CPU
    (wait4) are kept as logs/<...>.forked.json, which the report's per-job table and bench/job_records.py read."""
    logs, benchmarks = tmp_path / "logs" / "score" / "locomo", tmp_path / "benchmarks" / "score" / "locomo"
    logs.mkdir(parents=True)
    done = measured_job(tmp_path, logs / "bm25.log")
    assert done.returncode == 0, done.stderr
    assert len(journal(tmp_path)) == 1  # it ran in a child of the server
    usage = json.loads((logs / "bm25.forked.json").read_text())
    assert 200 < usage["max_rss_mb"] < 1000 and 0 < usage["cpu_s"] < 30
    benchmarks.mkdir(parents=True)  # the waiting process's record, as Snakemake writes it
    (benchmarks / "bm25.tsv").write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\t"
                                         "cpu_time\n0.41\t0:00:00\t7.76\t11.12\t2.41\t3.41\t0.23\t0.00\t0.00\t0.00\n")
    from bench.job_records import read_jobs
    from membench.report.provenance import costs_by_rule

    costs = costs_by_rule(tmp_path / "benchmarks")
    assert costs.to_dict("records") == [{"job": "score/locomo/bm25", "seconds": 0.41,
                                         "max_rss_mb": usage["max_rss_mb"], "cpu_s": usage["cpu_s"]}]
    assert [(j["job"], j["s"], j["max_rss_mb"], j["cpu_s"]) for j in read_jobs(tmp_path, {"locomo"})] == [
        ("score/locomo/bm25", 0.41, usage["max_rss_mb"], usage["cpu_s"])]  # bench/scale.py's figures, the same


def test_a_job_run_in_its_own_process_drops_an_earlier_runs_forked_figures(tmp_path):
    """Outside the server (a cluster job, `fork_server: false`) Snakemake's own record is the job's: a file kept by
    an earlier forked run of the job is removed, so no reader takes its figures for this run's."""
    log = tmp_path / "logs" / "parse" / "locomo.log"
    log.parent.mkdir(parents=True)
    stale = log.with_suffix(".forked.json")
    stale.write_text('{"max_rss_mb": 150.0, "cpu_s": 1.0}\n')
    done = measured_job(tmp_path, log, env={hand_over.ENV: ""})
    assert done.returncode == 0, done.stderr
    assert not stale.exists() and not list(log.parent.glob(".*.tmp"))
