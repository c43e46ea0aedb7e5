"""A light job's first statement: hand the whole script to the run's fork server, or go on here.

A workflow job is a fresh Python process, and a light rule (a score, an aggregate, a table) spends more of its
time importing pandas, pyarrow and its stage than doing its work. During a local run Snakemake's `onstart`
starts one server (`membench.jobs.fork_server`) that has imported those once; `hand_over()` sends it this job's
script (Snakemake's generated copy, preamble included), working directory, environment, umask and standard
streams. The server forks a child that runs the script from its first line, where `hand_over()` now returns,
and this process waits, passes on any signal Snakemake sends it, and exits with the child's status. So the job
is still one Snakemake job with its own inputs, outputs, log and exit code; only the imports are shared.

Anything unusual runs the job here instead, as before: no server (a cluster job, `fork_server: false`, a dry
run), a server that has not started or has gone, or one that would import another membench than this job would.
Kept to the standard library: importing this module is part of every light job's cost.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import sys
import time

from membench.jobs import forked_usage

ENV = "MEMBENCH_FORK_SERVER"  # "<server pid>:<socket path>", set by the workflow while its server runs
START_WAIT = 10.0  # seconds a job waits for a server that is still importing
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
_in_child = False  # set by the server in each child it forks: there, hand_over() lets the script go on


def membench_origin() -> str | None:
    """Where this process would import membench from (found, not imported)."""
    spec = importlib.util.find_spec("membench")
    return spec.origin if spec else None


def interpreter() -> list[str]:
    """This Python and its environment: a job of a `--use-conda` run runs on the environment's, not Snakemake's."""
    return [sys.executable, sys.prefix]


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def request() -> bytes:
    """What the child needs to be this job: its script, argv, working directory, environment and umask."""
    return json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask(),
                       "membench": membench_origin(), "python": interpreter()}).encode()


def _connect(value: str) -> socket.socket | None:
    """A connection to the server named by `value`, waiting while it starts; None if there is none to reach."""
    pid, _, path = value.partition(":")
    deadline = time.monotonic() + START_WAIT
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.connect(path)
            return conn
        except OSError:
            conn.close()
        try:
            os.kill(int(pid), 0)
        except (OSError, ValueError):
            return None  # no such server
        if time.monotonic() > deadline:
            return None
        time.sleep(0.02)


def _reply(conn: socket.socket) -> dict | None:
    data = conn.recv(4096)
    return json.loads(data) if data else None


def job_log() -> str | None:
    """The job's log file (the first its rule names), from the `snakemake` object of Snakemake's script preamble."""
    logs = getattr(getattr(sys.modules["__main__"], "snakemake", None), "log", None)
    return str(logs[0]) if logs else None


def hand_over() -> None:
    """Run this job in a child of the fork server and exit with its status; return to run it here."""
    if _in_child:
        return
    log = job_log()
    if log:
        forked_usage.forget(log)  # this run's figures are Snakemake's own unless the server runs the job
    value = os.environ.get(ENV)
    if not value or None in (sys.stdin, sys.stdout, sys.stderr):
        return  # (a stream Python found closed at start would be some other file's descriptor by now)
    conn = _connect(value)
    if conn is None:
        return
    with conn:
        try:
            socket.send_fds(conn, [request()], [0, 1, 2])
            started = _reply(conn)
        except OSError:  # the server went away: nothing ran, so run here
            return
        if not started or "pid" not in started:
            return  # refused (another membench) or gone before forking: nothing ran, so run here
        child = started["pid"]
        for sig in FORWARDED:
            signal.signal(sig, lambda signum, _frame: os.kill(child, signum))
        ended = _reply(conn)
    if ended is None:  # the server died under a running child
        try:
            os.kill(child, signal.SIGTERM)
        except OSError:
            pass
        print(f"membench: the fork server stopped while it ran this job (pid {child})", file=sys.stderr)
        os._exit(1)
    if log and "max_rss_kib" in ended:
        try:
            forked_usage.record(log, ended["max_rss_kib"], ended["cpu_s"])
        except OSError as error:  # the job's work is done and its outputs stand; only this figure is lost
            print(f"membench: could not keep the forked job's memory and CPU figures: {error}", file=sys.stderr)
    os._exit(int(ended["status"]))
