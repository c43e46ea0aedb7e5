"""envs/membench.yaml works from where `--use-conda` puts it: Snakemake builds the environment from a copy in
.snakemake/conda/, so a relative pip entry (the old `-e ..`) resolves to the wrong folder. The file pins the
dependencies instead (checked against pyproject.toml here), and the workflow puts this repository on the jobs'
PYTHONPATH. conda itself is not installed in CI, so building the environment for real is not tested."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from conftest import REPO


def env_pins() -> tuple[dict, dict[str, str]]:
    env = yaml.safe_load((REPO / "envs" / "membench.yaml").read_text(encoding="utf-8"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    pins = {}
    for line in pip:
        req = Requirement(line)  # a path, URL or `-e`/`-r` option is not a requirement: this raises
        assert req.url is None and len(req.specifier) == 1, line
        (spec,) = req.specifier
        assert spec.operator == "==", line
        pins[req.name.lower()] = spec.version
    return env, pins


def test_no_entry_depends_on_where_the_file_is_copied():
    env, pins = env_pins()
    text = (REPO / "envs" / "membench.yaml").read_text(encoding="utf-8")
    assert not re.search(r"^\s*-\s*(-e|-r|\.|/|file:)", text, re.M)
    assert "membench" not in pins  # the package comes from the repository via PYTHONPATH, not from pip


def test_pins_satisfy_pyproject():
    env, pins = env_pins()
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for dep in map(Requirement, project["dependencies"]):
        assert dep.name.lower() in pins, f"{dep.name} is not pinned in envs/membench.yaml"
        assert dep.specifier.contains(pins[dep.name.lower()]), (dep, pins[dep.name.lower()])
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert SpecifierSet(project["requires-python"]).contains(python.split("=", 1)[1] + ".0")
    ci_torch = re.search(r"torch==([\d.]+)", (REPO / ".ci" / "run").read_text(encoding="utf-8")).group(1)
    assert pins["torch"] == ci_torch

