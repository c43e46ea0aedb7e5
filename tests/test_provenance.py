"""Code provenance: a rule's code version covers what its module imports, found without running any of it."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PROBE = """
import sys
from membench.provenance import REPO, closure
names = lambda m: sorted(str(p.relative_to(REPO)) for p in closure(m, [REPO / "membench"]))
judge, plots = names("membench.stages.judge"), names("membench.report.plots")
print("membench/llm/client.py" in judge, "membench/llm/__init__.py" in judge, "membench/report/plots.py" in plots)
print(sorted({m.split(".")[0] for m in sys.modules} & {"openai", "matplotlib", "pandas", "torch"}))
"""


def test_closure_reads_imports_without_running_them():
    """The judge stage imports membench.llm (openai) and plots matplotlib: both files are in their closures,
    yet walking them loads neither library (a Snakefile parse must stay cheap)."""
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["True True True", "[]"]
