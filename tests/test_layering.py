"""The package's import contract ([tool.importlinter] in pyproject.toml), checked with import-linter's
``lint-imports``: one layers contract over every folder and top-level module of `membench`, so every import, direct
or indirect, points down, and packages on one layer import nothing from each other."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
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
    assert "Contracts: 1 kept, 0 broken." in out.stdout


def test_every_package_and_module_sits_on_a_layer():
    """A new folder or top-level module must be placed on a layer, or it could import anything unchecked."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    [contract] = config["contracts"]
    placed = {name.strip() for layer in contract["layers"] for name in layer.split("|")}
    package = ROOT / "membench"
    present = {f"membench.{p.stem}" for p in package.iterdir()
               if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")}
    assert present == placed


def test_an_upward_import_breaks_the_contract(tmp_path):
    """The check can fail: a copy of the package whose session reader imports a memory system's module."""
    shutil.copytree(ROOT / "membench", tmp_path / "membench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    reader = tmp_path / "membench" / "sessions" / "reader.py"
    reader.write_text(reader.read_text(encoding="utf-8") + "\nfrom membench.memory.protocol import Hit  # noqa\n",
                      encoding="utf-8")
    out = lint_imports(tmp_path)
    assert out.returncode != 0
    assert "membench.sessions.reader -> membench.memory.protocol" in out.stdout
    assert "Contracts: 0 kept, 1 broken." in out.stdout


def test_a_memory_module_importing_qa_breaks_the_contract(tmp_path):
    """Siblings on one layer stay apart: a copy of the package whose memory harness imports the QA verdicts."""
    shutil.copytree(ROOT / "membench", tmp_path / "membench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    harness = tmp_path / "membench" / "memory" / "run.py"
    harness.write_text(harness.read_text(encoding="utf-8") + "\nfrom membench.qa.verdict import gold_for  # noqa\n",
                       encoding="utf-8")
    out = lint_imports(tmp_path)
    assert out.returncode != 0
    assert "membench.memory.run -> membench.qa.verdict" in out.stdout
    assert "Contracts: 0 kept, 1 broken." in out.stdout
