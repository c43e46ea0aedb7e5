"""bench/suite_cpu.py: per-test wall and CPU lines, summed per test module (the suite's CPU budget, issue 36)."""

from __future__ import annotations

import json

from bench.suite_cpu import summary


def test_tests_are_summed_per_module_longest_first_with_what_no_process_accounts_for():
    rows = [("tests/test_a.py::one", 10.0, 1.0, 6.0), ("tests/test_b.py::x[1]", 30.0, 0.5, 2.0),
            ("tests/test_a.py::two", 5.0, 2.0, 0.0)]
    text = summary([json.dumps({"test": t, "worker": "gw0", "wall": w, "self": s, "children": c})
                    for t, w, s, c in rows])
    assert text.splitlines()[1:] == [
        "    30.0      0.5        2.0     27.5     1  tests/test_b.py",
        "    15.0      3.0        6.0      6.0     2  tests/test_a.py",
        "    45.0      3.5        8.0     33.5     3  all"]
