"""Report and stage code reads the paths its rule declares (`job.input`): no module but the run plan builds a
`results/...` path of its own, so a renamed output or a subset run's work folder can never be read past
(issue 32, item 3). `membench compare` reads a results folder a person names, so it may walk one."""
from __future__ import annotations

import ast

from conftest import REPO

ALLOWED = {"membench/runs/plan.py", "membench/analysis/compare.py"}
# the names of what the rules write under results/<dataset>/ (workflow/rules/*.smk)
RESULT_PARTS = {"runs", "scores", "scores-published", "maps", "view", "sessions", "efficiency", "qa", "judgments",
                "facts", "costs", "evidence_errata.parquet", "normalization.json", "difficulty.parquet",
                "summary.json", "summary.parquet", "significance.parquet", "per_question.csv", "plots", "tables"}


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def built_result_paths(source: str) -> list[str]:
    """Where `source` spells a results path: a "results/..." string, Path("results"), or `<path> / "<output>"`."""
    tree, found = ast.parse(source), []
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and node.value.startswith("results/"):
            found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "Path" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "results":
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
                and node.right.value in RESULT_PARTS:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_the_run_plan_builds_a_results_path():
    offenders = {}
    for path in sorted((REPO / "membench").rglob("*.py")):
        name = str(path.relative_to(REPO))
        if name not in ALLOWED and (found := built_result_paths(path.read_text(encoding="utf-8"))):
            offenders[name] = found
    assert offenders == {}


def test_the_check_sees_each_way_of_building_one():
    assert sorted(built_result_paths('p = Path("results") / d / "runs" / f"{a}.json"\n')) == [
        "line 1: Path('results')", "line 1: Path('results') / d / 'runs'"]
    assert built_result_paths('x = "results/summary.json"\n') == ["line 1: 'results/summary.json'"]
    assert built_result_paths('x = folder / "normalization.json"\n') == ["line 1: folder / 'normalization.json'"]
    assert built_result_paths('def f(job):\n    """results/ in a docstring is prose."""\n    return job.input.path("scores")\n') == []
