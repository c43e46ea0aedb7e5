"""The package is whole: a wheel built from this repository, installed alone, validates a config, imports every
stage and report module, and carries every data file its modules name in DATA_FILES (issue 32, item 6).

The wheel is installed into a fresh venv on top of the system's packages (pandas, snakemake, torch, ...), whose
editable install of the repository must not be what gets imported: the test checks the wheel's copy shadows it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml

from conftest import REPO

pytestmark = pytest.mark.slow

PROBE = r"""
import ast, importlib, json, pkgutil, sys
from pathlib import Path
import yaml
import membench, membench.config, membench.report, membench.stages

config = yaml.safe_load(Path(sys.argv[1]).read_text(encoding="utf-8"))
given = json.dumps(config, sort_keys=True, default=str)
membench.config.validate_config(config, sys.argv[1])
imported = []
for package in (membench.stages, membench.report):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
        imported.append(info.name)
root = Path(membench.__file__).parent
data = {}  # module file (relative to the package) -> its DATA_FILES globs
for module in root.rglob("*.py"):
    for node in ast.parse(module.read_bytes()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DATA_FILES" for t in node.targets):
            data[str(module.relative_to(root))] = list(ast.literal_eval(node.value))
print(json.dumps({"file": membench.__file__, "schema": str(membench.config.SCHEMA), "imported": imported,
                  "filled": json.dumps(config, sort_keys=True, default=str) != given, "config": config,
                  "data": data}, default=str))
"""


def matched(root: Path, module: str, patterns: list[str]) -> set[str]:
    """The files a module's DATA_FILES globs match, relative to the package root ``root``."""
    folder = (root / module).parent
    return {os.path.relpath(found, root) for pattern in patterns for found in folder.glob(pattern) if found.is_file()}


def test_an_installed_wheel_validates_a_config_and_carries_its_data_files(tmp_path):
    # Built from a copy of what the wheel is made of: setuptools builds in the source tree, and a stale build/
    # left in the repository would put files the repository no longer has into the wheel.
    source = tmp_path / "source"
    shutil.copytree(REPO / "membench", source / "membench", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(REPO / "pyproject.toml", source / "pyproject.toml")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(wheels), str(source)], cwd=tmp_path, env=env, check=True, timeout=120)
    wheel, = wheels.glob("membench-*.whl")

    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    # the system's pip, run by the venv's interpreter: installs into the venv without bootstrapping a pip there
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                   cwd=tmp_path, env=env, check=True, timeout=120)

    work = tmp_path / "elsewhere"  # not the repository: its membench/ must not be importable from the cwd
    work.mkdir()
    done = subprocess.run([python, "-c", PROBE, str(REPO / "config.yaml")], cwd=work, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)

    installed = Path(found["file"]).parent
    assert installed.is_relative_to(tmp_path / "venv"), found["file"]  # the wheel, not the editable install
    assert Path(found["schema"]).is_file() and Path(found["schema"]).is_relative_to(installed)
    given = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    assert "enabled" not in given["adapters"]["bm25"] and found["config"]["adapters"]["bm25"]["enabled"] is True
    assert found["filled"]  # the schema's defaults were filled in
    assert "membench.stages.qa" in found["imported"] and "membench.report.explorer" in found["imported"]
    assert "config.py" in found["data"] and len(found["data"]) >= 3  # the schema; the prompts, errata, assets
    for module, patterns in found["data"].items():
        ours, theirs = matched(REPO / "membench", module, patterns), matched(installed, module, patterns)
        assert ours, f"{module}: DATA_FILES {patterns} match nothing in the repository"
        assert theirs == ours, f"{module}: the wheel lacks {sorted(ours - theirs)}"
