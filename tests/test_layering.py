"""The package's import contracts ([tool.importlinter] in pyproject.toml), checked with import-linter's
``lint-imports``: stages import nothing from report, metrics nothing from scoring, adapters nothing from
stages, datasets/scoring/metrics nothing from benchmarks (direct or indirect)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package under ``root`` (its pyproject.toml contracts), without import cache."""
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports not found: pip install -e '.[test]' (import-linter)")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([exe, "--no-cache", "--config", str(root / "pyproject.toml")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_import_contracts_are_kept():
    out = lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 5 kept, 0 broken." in out.stdout


def test_a_stage_importing_the_report_breaks_the_contract(tmp_path):
    """The check can fail: a copy of the package whose facts stage imports the report's cost table."""
    shutil.copytree(ROOT / "membench", tmp_path / "membench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    facts = tmp_path / "membench" / "stages" / "facts.py"
    facts.write_text(facts.read_text(encoding="utf-8") + "\nfrom membench.report.costs import cost_table  # noqa\n",
                     encoding="utf-8")
    out = lint_imports(tmp_path)
    assert out.returncode != 0
    assert "membench.stages.facts -> membench.report.costs" in out.stdout
    assert "Contracts: 4 kept, 1 broken." in out.stdout
