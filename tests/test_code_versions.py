"""Every rule's code version is its script's import closure (membench.jobs.provenance.script_version).

The test edits each module under membench/ in a copy of the package (a real statement, not a comment), and each
data file a module reads, and checks that exactly the rules whose scripts reach it change their code version,
against grimp's import graph (the library import-linter builds on), not against the project's own closure walk.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pandas as pd

from conftest import REPO

# Which module reads which packaged data file: stated here, independently of the modules' DATA_FILES.
DATA_READERS = {"membench/prompts/": "membench.llm.prompts",
                "membench/benchmarks/locomo/errata.json": "membench.benchmarks.locomo.benchmark",
                "membench/benchmarks/locomo/evidence-errata.json": "membench.benchmarks.locomo.benchmark",
                "membench/benchmarks/longmemeval/evidence-errata.json": "membench.benchmarks.longmemeval.benchmark",
                "membench/benchmarks/beam/judge-prompt.txt": "membench.benchmarks.beam.judge",
                "membench/benchmarks/beam/equivalence-prompt.txt": "membench.benchmarks.beam.judge",
                "membench/benchmarks/locomo_plus/judge-prompt.txt": "membench.benchmarks.locomo_plus.judge",
                "membench/config.schema.yaml": "membench.config",
                "membench/explorer/assets/": "membench.explorer.build"}


def rule_scripts() -> dict[str, tuple[str, str | None]]:
    """rule name -> (its script, the script its `code` param hashes or None), read from workflow/rules/*.smk."""
    found = {}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"(?m)^(?=rule )", smk.read_text(encoding="utf-8"))[1:]:
            name = re.match(r"rule (\w+):", block).group(1)
            script = re.search(r'script:\n\s+"\.\./\.\./(scripts/\w+\.py)"', block).group(1)
            code = re.search(r'^        code=script_version\("(scripts/\w+\.py)"\),$', block, re.M)
            found[name] = (script, code.group(1) if code else None)
    return found


def test_every_rule_carries_the_code_version_of_its_own_script():
    rules = rule_scripts()
    assert len(rules) == 26 and {s for s, _ in rules.values()} == {
        f"scripts/{p.name}" for p in (REPO / "scripts").glob("*.py")}
    for name, (script, code) in rules.items():
        # download's files are pinned by their sha256: no edit can change them, and a rerun would fetch again
        assert code == (None if name == "download" else script), name
    text = "".join(p.read_text(encoding="utf-8") for p in (REPO / "workflow" / "rules").glob("*.smk"))
    assert "code_version(" not in text and "module_version(" not in text  # one mechanism


def expected_files(graph, script: Path) -> set[str]:
    """The files a script runs, by grimp: its membench imports, what they import transitively, and the package
    __init__ files Python runs on the way."""
    todo: set[str] = set()
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("membench"):
            todo |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            todo |= {a.name for a in node.names if a.name.startswith("membench")}
    reached: set[str] = set()
    while todo:
        module = todo.pop()
        if module in reached or module not in graph.modules:
            continue
        reached.add(module)
        todo |= graph.find_upstream_modules(module) | {module.rsplit(".", i)[0] for i in range(1, module.count(".") + 1)}
    files = set()
    for module in reached:
        path = REPO.joinpath(*module.split("."))
        files.add(str((path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).relative_to(REPO)))
    for prefix, reader in DATA_READERS.items():
        if reader in reached:
            files |= {str(p.relative_to(REPO)) for p in REPO.glob(prefix + "*" if prefix.endswith("/") else prefix)
                      if p.suffix != ".py"}
    return files


DRIVER = r"""
import json, sys
from pathlib import Path
from membench.jobs import provenance
repo = Path.cwd()
assert provenance.REPO == repo and provenance.spec_origin("membench.io").is_relative_to(repo), "not the copy"
scripts = sorted((repo / "scripts").glob("*.py"))
versions = lambda: {s.name: provenance.script_version(s) for s in scripts}
before, changed = versions(), {}
for rel in json.loads(sys.argv[1]):
    target = repo / rel
    original = target.read_bytes()
    target.write_bytes(original + (b"\n_EDITED_BY_A_TEST = 1\n" if target.suffix == ".py" else b"\n\n"))
    try:
        after = versions()
    finally:
        target.write_bytes(original)
    changed[rel] = sorted(name for name in before if after[name] != before[name])
print(json.dumps(changed))
"""


def test_an_edit_to_any_module_or_data_file_reruns_exactly_the_rules_that_reach_it(tmp_path):
    copy = tmp_path / "repo"
    for folder in ("membench", "scripts"):
        shutil.copytree(REPO / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    targets = sorted(str(p.relative_to(copy)) for p in copy.rglob("*")
                     if p.is_file() and p.parts[len(copy.parts)] == "membench")
    assert len(targets) > 100
    env = dict(os.environ, PYTHONPATH=str(copy), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(targets)], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    changed = json.loads(done.stdout)

    # grimp reads the importable membench: it must be this checkout's, not an editable install's other checkout
    import membench
    assert Path(membench.__file__).resolve().parent == REPO / "membench", membench.__file__
    graph = grimp.build_graph("membench", include_external_packages=False)
    reach = {p.name: expected_files(graph, p) for p in sorted((REPO / "scripts").glob("*.py"))}
    expected = {rel: sorted(name for name, files in reach.items() if rel in files) for rel in targets}
    assert changed == expected
    # the edits the issue found unseen: each now reruns the report (and the report's siblings that import it)
    for module in ("membench/report/memory.py", "membench/report/model_stages.py", "membench/report/costs.py",
                   "membench/report/judge_trust.py", "membench/benchmarks/locomo/answer_f1.py", "membench/benchmarks/procedural/extended.py"):
        assert "report.py" in changed[module], module
    assert changed["membench/prompts/answer.txt"] and "embed.py" not in changed["membench/adapters/bm25.py"]
    # issue 32: the per-question table's writer (membench.report.artifacts, now in aggregate's stage) imports
    # membench.machine.environment, which imports membench.machine.cpu; an edit to either reruns aggregate
    for module in ("membench/machine/cpu.py", "membench/machine/environment.py", "membench/machine/__init__.py"):
        assert "aggregate.py" in changed[module], module


RUN_SCRIPT = r"""
import json, runpy, sys
from pathlib import Path


class Files(list):
    # what Snakemake hands a script as snakemake.input, .output, ...: a list whose entries also have names
    def __init__(self, named):
        super().__init__(named.values())
        self._named = named

    def items(self):
        return self._named.items()


script, named = sys.argv[1], json.loads(sys.argv[2])
smk = type("Snakemake", (), {k: Files(named.get(k, {})) for k in ("input", "output", "params", "wildcards")})()
smk.log, smk.threads = [], 1
runpy.run_path(script, init_globals={"snakemake": smk}, run_name="__main__")
ran = {str(Path(m.__file__).resolve()) for name, m in list(sys.modules.items())
       if name.split(".")[0] == "membench" and getattr(m, "__file__", None)}
from membench.jobs.provenance import script_files  # after: the check's own imports are not the job's
print(json.dumps(sorted(ran - {str(p) for p in script_files(script)})))
"""


def run_rule_script(script: str, named: dict, tmp_path: Path) -> list[str]:
    """Run a rule's script as Snakemake would (a `snakemake` object with named files and params) in a fresh
    process; the membench files it loaded that are not in its code version."""
    env = dict(os.environ, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", RUN_SCRIPT, str(REPO / script), json.dumps(named)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_rule_job_loads_no_project_module_outside_its_code_version(tmp_path):
    """The closure walk and grimp both read import statements. This runs rule aggregate's script (which writes the
    per-question table, the job issue 32 names, and looks its benchmark up by name) and checks that every membench
    module the job loaded, at import or while it ran (a lazy or a dynamic import included), is in the script's code
    version."""
    scores = []
    for adapter in ("bm25", "dense"):
        frame = pd.DataFrame({"question_id": ["q1", "q1"], "metric": ["m@1", "m@5"], "value": [0.0, 1.0],
                              "split": ["all"] * 2, "question_type": ["x"] * 2, "tier": [None] * 2,
                              "skip": [None] * 2})
        scores.append(str(tmp_path / f"{adapter}.parquet"))
        frame.to_parquet(scores[-1])
    pd.DataFrame({"question_id": ["q1"]}).to_parquet(tmp_path / "questions.parquet")
    named = {"input": {"scores": scores, "questions": str(tmp_path / "questions.parquet")},
             "output": {name: str(tmp_path / f"{name}.parquet")
                        for name in ("summary", "significance", "per_question")}
             | {"per_question_csv": str(tmp_path / "pq.csv")},
             "params": {"score_keys": [["d", "bm25"], ["d", "dense"]], "kind": "procedural", "cluster": False,
                        "ablation": [], "baseline": "bm25", "resamples": 10, "seed": 0, "subset": None},
             "wildcards": {"dataset": "d"}}
    assert run_rule_script("scripts/aggregate.py", named, tmp_path) == []
    assert (tmp_path / "pq.csv").is_file() and (tmp_path / "summary.parquet").is_file()  # the job really ran
