"""docs/architecture.md draws the default run's DAG: its edges must be the ones Snakemake's own rule graph has."""
from __future__ import annotations

import re

import pytest
import yaml

from conftest import REPO, real_datasets, run_snakemake

pytestmark = pytest.mark.data


def test_the_documented_dag_is_the_workflows(tmp_path, locomo_dir, procedural_dir, longmemeval_dir):
    config = {"resources_dir": str(tmp_path / "resources"),
              "datasets": real_datasets(longmemeval_dir, locomo_dir, procedural_dir)}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = run_snakemake(tmp_path, tmp_path / "cfg.yaml", "results/report.md", "--rulegraph", "mermaid-js")
    assert done.returncode == 0, done.stderr[-3000:]
    names = dict(re.findall(r"(id\d+)\[(\w+)\]", done.stdout))
    actual = {(names[a], names[b]) for a, b in re.findall(r"(id\d+) --> (id\d+)", done.stdout)}
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawn = set(re.findall(r"^    (\w+) --> (\w+)$", doc.split("```mermaid", 1)[1].split("```", 1)[0], re.M))
    assert len(actual) == 47 and drawn == actual
