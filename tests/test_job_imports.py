"""A job is a fresh Python process, and the rules that run once per run or per dataset (score, retrieval logs,
aggregation, tables, the report) ran ~1 s of imports they never used: scipy.stats through the benchmark registry
(BEAM's Kendall tau) and openai through `membench.llm` (the prompt files). This pins that no rule script loads
openai, scipy.stats, torch or sentence-transformers on import: a model-call job loads openai on its first paid
attempt (membench.llm.connection), so a rerun that the call cache answers never does."""

from __future__ import annotations

import ast
import subprocess
import sys

from conftest import REPO

HEAVY = ("openai", "scipy.stats", "torch", "sentence_transformers")


def script_imports(name: str) -> list[str]:
    """The membench import statements of scripts/<name>.py, as written."""
    tree = ast.parse((REPO / "scripts" / f"{name}.py").read_text(encoding="utf-8"))
    return [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            and (node.module if isinstance(node, ast.ImportFrom) else node.names[0].name).startswith("membench")]


def test_no_rule_script_loads_a_model_client_a_model_or_scipy_stats_on_import():
    names = sorted(p.stem for p in (REPO / "scripts").glob("*.py"))
    assert {"score", "aggregate", "report", "rank", "judge", "qa", "facts_llm", "embed", "rank_memory"} <= set(names)
    statements = [s for name in names for s in script_imports(name)]
    assert len(statements) >= len(names)  # every script imports its stage from membench
    probe = "\n".join(statements + ["import sys", f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"])
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert loaded.stdout.split() == []


def test_the_probe_sees_a_heavy_import():
    """The same probe after the judge script's imports and its client's first connection: openai is loaded then,
    so an empty answer above means something."""
    probe = "\n".join(script_imports("judge") + [
        "import sys", "from membench.llm.connection import OpenAIConnection",
        "before = 'openai' in sys.modules", "OpenAIConnection('http://127.0.0.1:9/v1', 'sk-x', 1.0)()",
        "print(before, 'openai' in sys.modules)"])
    assert subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.split() == ["False", "True"]
