"""Code provenance: a rule's code version covers what its module imports, found without running any of it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import fresh_python

REPO = Path(__file__).resolve().parent.parent

PROBE = """
import sys
from membench.jobs.provenance import REPO, closure
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


CACHED_PROBE = """
import ast, json, sys
from pathlib import Path
root = Path(sys.argv[1])
sys.path.insert(0, str(root))
if sys.argv[2] == "no-parse":
    def refuse(*args, **kwargs):
        raise AssertionError("ast.parse called although the import cache knows these bytes")
    ast.parse = refuse
from membench.jobs.provenance import closure
print(json.dumps(sorted(p.name for p in closure("toypkg.a", [root / "toypkg"]))))
"""


def _closure_names(root: Path, cache: Path, mode: str) -> list[str]:
    return fresh_python(CACHED_PROBE, str(root), mode, env={**os.environ, "XDG_CACHE_HOME": str(cache)})


def test_import_cache_serves_a_later_process_and_never_outlives_an_edit(tmp_path):
    """The first walk parses and stores each file's imports by its bytes; a second process walks the same tree
    without parsing anything; an edited file is parsed again, so its new import is found; a corrupt cache file
    is ignored and replaced."""
    package = tmp_path / "src" / "toypkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("import os\n")
    (package / "c.py").write_text("")
    cache = tmp_path / "cache"
    assert _closure_names(package.parent, cache, "parse") == ["__init__.py", "a.py", "b.py"]
    stored = json.loads((cache / "membench" / "imports.json").read_text())["entries"]
    assert sorted(stored.values()) == [[], ["os"], ["toypkg", "toypkg.b"]]
    assert _closure_names(package.parent, cache, "no-parse") == ["__init__.py", "a.py", "b.py"]

    (package / "a.py").write_text("from .c import x\n")  # still runs toypkg/__init__.py first
    assert _closure_names(package.parent, cache, "parse") == ["__init__.py", "a.py", "c.py"]
    assert _closure_names(package.parent, cache, "no-parse") == ["__init__.py", "a.py", "c.py"]

    (cache / "membench" / "imports.json").write_text("{not json")
    assert _closure_names(package.parent, cache, "parse") == ["__init__.py", "a.py", "c.py"]
    assert _closure_names(package.parent, cache, "no-parse") == ["__init__.py", "a.py", "c.py"]

    blocked = tmp_path / "a-file"  # a cache folder that cannot be made: the walk parses and is still right
    blocked.write_text("")
    assert _closure_names(package.parent, blocked, "parse") == ["__init__.py", "a.py", "c.py"]
