"""Where the test suite's time goes: per test, its wall time, the CPU of its own worker and that of the child
processes it waited for. Issue 36 asks for the suite under 8 minutes on two cores; with the cores busy, that is a
CPU budget (960 core-seconds), and this says which tests spend it and which only wait.

Record (a pytest plugin; the file is appended to, one JSON line per test):
    MEMBENCH_SUITE_CPU=/tmp/suite-cpu.jsonl PYTHONPATH=bench python -m pytest -p suite_cpu
Summarise, per test module, longest first:
    python bench/suite_cpu.py /tmp/suite-cpu.jsonl

`children` counts only processes reaped during the test (a Snakemake run, a job, a sealed child). A server that
lives across tests (the local model's llama.cpp server, reaped at the session's end) and a SLURM job (a child of
slurmd) are in no test's figures: a test's `wall - self - children` is such work or time its core waited.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict

ENV = "MEMBENCH_SUITE_CPU"


def _clock() -> tuple[float, float, float]:
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime


def pytest_runtest_protocol(item, nextitem):  # noqa: ARG001 - pytest's hook signature
    """Wrap each test's setup, call and teardown (a hookwrapper: pytest still runs the test)."""
    before = _clock()
    yield
    after = _clock()
    path = os.environ.get(ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"test": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER"),
                                  "wall": after[0] - before[0], "self": after[1] - before[1],
                                  "children": after[2] - before[2]}) + "\n")


pytest_runtest_protocol.hookwrapper = True  # as @pytest.hookimpl(hookwrapper=True), without importing pytest here


def summary(lines: list[str], top: int = 25) -> str:
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for line in lines:
        row = json.loads(line)
        total = modules[row["test"].split("::")[0]]
        total[0] += row["wall"]
        total[1] += row["self"]
        total[2] += row["children"]
        total[3] += 1
    out = [f"{'wall s':>8s} {'self s':>8s} {'children s':>10s} {'rest s':>8s} {'tests':>5s}  module"]
    for name, (wall, own, reaped, n) in sorted(modules.items(), key=lambda kv: -kv[1][0])[:top]:
        out.append(f"{wall:8.1f} {own:8.1f} {reaped:10.1f} {wall - own - reaped:8.1f} {n:5d}  {name}")
    wall, own, reaped = (sum(m[i] for m in modules.values()) for i in range(3))
    out.append(f"{wall:8.1f} {own:8.1f} {reaped:10.1f} {wall - own - reaped:8.1f} "
               f"{sum(m[3] for m in modules.values()):5d}  all")
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        print(summary(fh.read().splitlines()))
