"""One hand-off (issue 24, item 1): every rule script reads its Snakemake object into a `Job` and calls one stage
function named after its rule; no script holds logic. And the `Job` itself: named access, paths, clear errors."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import REPO
from membench.jobs.job import Job, Named


def test_every_script_is_one_run_stage_call_to_its_rules_stage():
    scripts = sorted((REPO / "scripts").glob("*.py"))
    assert len(scripts) == 26
    for script in scripts:
        rest = []
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            text = ast.unparse(node)
            if isinstance(node, (ast.Import, ast.ImportFrom)) or (isinstance(node, ast.Expr) and isinstance(
                    node.value, ast.Constant)):
                continue  # imports and the docstring
            if script.stem.startswith("rank") and text.startswith("os.environ.setdefault('OMP_NUM_THREADS'"):
                continue  # rank jobs keep torch to their `threads:` before it can be imported
            if text == "hand_over()" and not rest:
                continue  # a light rule's job goes to the run's fork server (tests/test_fork_server.py)
            rest.append(node)
        assert len(rest) == 1 and isinstance(rest[0], ast.Expr), script  # one statement: the stage call
        call = rest[0].value
        assert ast.unparse(call.func) == "run_stage" and ast.unparse(call.args[0]) == "snakemake", script
        assert ast.unparse(call.args[1]) == f"{script.stem}.rule_{script.stem}", script
        imported = [n for n in ast.parse(script.read_text(encoding="utf-8")).body if isinstance(n, ast.ImportFrom)]
        assert any(n.module == "membench.stages" and [a.name for a in n.names] == [script.stem] for n in imported), script


def _params_name_a_benchmark() -> set[str]:
    """The rules whose params name a benchmark kind (`kind`, `kinds`, or the rank rules' shared `RANK_PARAMS`)."""
    named = set()
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"(?m)^(?=rule )", smk.read_text(encoding="utf-8"))[1:]:
            if re.search(r"^\s+kinds?=", block, re.M) or "**RANK_PARAMS" in block:
                named.add(re.match(r"rule (\w+):", block).group(1))
    return named


def test_a_rule_whose_params_name_a_benchmark_gets_the_record_from_the_hand_off():
    """The registry is consulted once per job, by the hand-off: a rule naming a kind runs membench.runs.handoff's
    run_stage (which resolves `job.benchmark` / `job.benchmarks`); the others the plain one of membench.jobs.job."""
    named = _params_name_a_benchmark()
    assert {"parse", "ingest", "rank", "rank_part", "rank_memory", "score", "aggregate", "tables", "report"} <= named
    for script in sorted((REPO / "scripts").glob("*.py")):
        imports = {n.module for n in ast.parse(script.read_text(encoding="utf-8")).body if isinstance(n, ast.ImportFrom)
                   and [a.name for a in n.names] == ["run_stage"]}
        assert imports == {"membench.runs.handoff" if script.stem in named else "membench.jobs.job"}, script


def test_only_the_registry_and_the_hand_off_look_a_benchmark_up_by_name():
    """No module but the registry and the hand-offs (a rule's, a person's) calls `benchmark(...)`; rules ask the plan's
    `of_dataset` (a registry function) and stages take the record."""
    callers = set()
    for path in (REPO / "membench").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "benchmark":
                callers.add(str(path.relative_to(REPO)))
    # the public API takes a kind from a person, as the hand-off takes it from a rule's params
    assert callers == {"membench/benchmarks/registry.py", "membench/runs/handoff.py", "membench/api.py"}
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        assert not re.search(r"(?<![\w.])benchmark\(", smk.read_text(encoding="utf-8")), smk


def test_each_rule_has_its_own_stage_module_and_no_other_module_defines_a_rule():
    """Rule x runs membench.stages.x.rule_x: one module per rule, and `rule_` names nothing else in the package."""
    rules = {p.stem for p in (REPO / "scripts").glob("*.py")}
    stages = {p.stem for p in (REPO / "membench" / "stages").glob("*.py")} - {"__init__"}
    assert stages == rules
    for path in (REPO / "membench").rglob("*.py"):
        defined = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
                   if isinstance(n, ast.FunctionDef) and n.name.startswith("rule_")}
        if path.parent.name == "stages" and path.stem != "__init__":
            assert defined == {f"rule_{path.stem}"}, path
        else:
            assert not defined, path


def test_a_job_names_its_files_and_says_what_is_missing(tmp_path):
    job = Job(input=Named({"run": "results/x/runs/bm25.parquet", "parts": ["a.parquet", "b.parquet"], "facts": []}),
              params=Named({"kind": "locomo"}), threads=2)
    assert job.input.run == "results/x/runs/bm25.parquet" and job.params.kind == "locomo"
    assert job.input.path("run") == Path("results/x/runs/bm25.parquet")
    assert job.input.paths("parts") == [Path("a.parquet"), Path("b.parquet")] and job.input.paths("facts") == []
    assert job.input.files() == {"run": "results/x/runs/bm25.parquet", "parts": ["a.parquet", "b.parquet"],
                                 "facts": []}
    with pytest.raises(TypeError, match="'parts' holds 2 files, not one"):
        job.input.path("parts")
    with pytest.raises(AttributeError, match="no entry named 'scores' \\(has run, parts, facts\\)"):
        job.input.scores


FORKED = {"parse", "ingest", "embedded", "score", "score_published", "score_logged", "item_tokens", "aggregate",
          "summary", "tables", "plots", "explorer", "report"}


def _rule_blocks() -> dict[str, str]:
    """rule name -> its text in workflow/rules/*.smk."""
    blocks = {}
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"(?m)^(?=rule )", smk.read_text(encoding="utf-8"))[1:]:
            blocks[re.match(r"rule (\w+):", block).group(1)] = block
    return blocks


def test_the_light_rules_hand_over_to_the_fork_server_and_the_measured_ones_do_not():
    """The light rules' scripts call `hand_over()` first, and the server preloads exactly their imports. The rules
    whose jobs' memory and CPU matter (embedding, ranking, memory systems, model calls) stay processes of their own:
    Snakemake's `benchmark:` measures a job's own process tree, and their peaks are not to count another process's
    imports."""
    from membench.jobs.fork_server import PREAMBLE, forked_modules, forked_rules

    for script in (REPO / "scripts").glob("*.py"):
        calls = [ast.unparse(n) for n in ast.parse(script.read_text(encoding="utf-8")).body if isinstance(n, ast.Expr)]
        if "hand_over()" in calls:
            assert calls.index("hand_over()") == 1, script  # right after the docstring, before any import runs
    assert set(forked_rules(REPO / "scripts")) == FORKED
    blocks = _rule_blocks()
    assert all(f"scripts/{rule}.py" in blocks[rule] for rule in FORKED)
    measured = {"embed", "embed_texts", "rank", "rank_part", "rank_memory", "facts_llm", "judge", "qa", "qa_baseline",
                "qa_calibration"}
    assert all("benchmark:" in blocks[rule] for rule in measured) and not measured & FORKED
    assert forked_modules(REPO / "scripts") == sorted(
        {*PREAMBLE, "membench.jobs.hand_over", "membench.jobs.job", "membench.runs.handoff",
         *(f"membench.stages.{rule}" for rule in FORKED)})


def test_a_forked_rules_benchmark_is_named_as_its_log():
    """A forked job keeps its child's peak memory and CPU beside its log (membench.jobs.forked_usage), where the
    readers of `benchmarks/<...>.tsv` look for it: `logs/<...>.log`, the same path under logs/."""
    from membench.jobs.fork_server import forked_rules

    blocks, named = _rule_blocks(), 0
    for rule in forked_rules(REPO / "scripts"):
        bench = re.search(r"benchmark:\s*\n\s*\"([^\"]+)\.tsv\"", blocks[rule])
        if bench:
            named += 1
            assert re.search(r"log:\s*\n\s*\"([^\"]+)\.log\"", blocks[rule]).group(1) == \
                   bench.group(1).replace("benchmarks/", "logs/", 1), rule
    assert named == 5  # parse, ingest, score, score_logged, aggregate
