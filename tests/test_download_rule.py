"""The download rule inside the workflow: real benchmark files served from a loopback HTTP server
(the first request fails with a 500), checksums verified, and a mismatch that stops the run and keeps
no file."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest
import yaml

from conftest import run_snakemake
from test_download import server  # noqa: F401  (the loopback server fixture)

pytestmark = pytest.mark.slow


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_download_parse_ingest_from_loopback(server, tmp_path, locomo_dir, procedural_dir):  # noqa: F811
    locomo = (locomo_dir / "locomo10.json").read_bytes()
    corpus = (procedural_dir / "agentinstruct_trajectories.json").read_bytes()
    queries = (procedural_dir / "query_bank.json").read_bytes()
    config = {
        "resources_dir": str(tmp_path / "resources"),
        "datasets": {
            "longmemeval-s": {"kind": "longmemeval", "enabled": False},
            "locomo": {"kind": "locomo", "url": server.serve("/data/locomo10.json", locomo, fail_first=[500]),
                       "sha256": sha(locomo)},
            "procedural": {"kind": "procedural", "files": [
                {"url": server.serve("/p/agentinstruct_trajectories.json", corpus), "sha256": sha(corpus)},
                {"url": server.serve("/p/query_bank.json", queries), "sha256": sha(queries)}]},
        },
        "download": {"retries": 2, "timeout": 30},
    }
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    targets = ["results/locomo/view/queries.parquet", "results/procedural/view/queries.parquet"]
    done = run_snakemake(tmp_path, tmp_path / "cfg.yaml", "--cores", "2", *targets)
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.counts["/data/locomo10.json"] == 2  # one 500, then the file
    assert (tmp_path / "resources" / "locomo" / "locomo10.json").read_bytes() == locomo
    assert len(pd.read_parquet(tmp_path / "results" / "locomo" / "questions.parquet")) == 1986
    assert len(pd.read_parquet(tmp_path / "results" / "procedural" / "qrels.parquet")) == 893


def test_checksum_mismatch_stops_the_run_and_keeps_nothing(server, tmp_path, locomo_dir):  # noqa: F811
    locomo = (locomo_dir / "locomo10.json").read_bytes()
    wrong = "ab" * 32
    config = {
        "resources_dir": str(tmp_path / "resources"),
        "datasets": {"longmemeval-s": {"kind": "longmemeval", "enabled": False},
                     "procedural": {"kind": "procedural", "enabled": False},
                     "locomo": {"kind": "locomo", "url": server.serve("/locomo10.json", locomo), "sha256": wrong}},
    }
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = run_snakemake(tmp_path, tmp_path / "cfg.yaml", "--cores", "1", "results/locomo/questions.parquet")
    assert done.returncode != 0
    log = (tmp_path / "logs" / "download" / "locomo.log").read_text(encoding="utf-8")
    assert wrong in log and sha(locomo) in log
    leftovers = [p for p in (tmp_path / "resources").rglob("*")] if (tmp_path / "resources").exists() else []
    assert leftovers == []
    assert not (tmp_path / "results" / "locomo").exists()
