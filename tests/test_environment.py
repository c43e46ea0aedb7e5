"""The environment on record: what an embed job writes into its manifest, how a run's manifests merge into
summary.json's `environment`, and how the report's provenance shows it."""

from __future__ import annotations

import json

from membench.machine import environment
from membench.machine.cpu import this_cpu
from membench.report.provenance import environment_rows, provenance_section

TORCH_CONFIG = """PyTorch built with:
  - Intel(R) oneAPI Math Kernel Library Version 2024.2-Product Build 20240605 for Intel(R) 64 architecture applications
  - Intel(R) MKL-DNN v3.12.0 (Git Hash 80afa71049cd69a3df32adcccb623b12cd7baa22)
  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, LAPACK_INFO=mkl, TORCH_VERSION=2.13.0, USE_MKL=ON,
"""
MACHINE = {"cpu": "AMD EPYC", "vendor": "AuthenticAMD", "vector_extensions": ["avx2", "fma"], "logical_cpus": 2,
           "os": "Linux 6.1", "python": "3.11.7"}
TORCH = {"numeric_path": {"aten": "AVX2", "mkl_cbwr": "AUTO,STRICT", "onednn_max_isa": "AVX2"}, "threads": 1,
         "libraries": {"blas": "mkl", "mkl": "2024.2-Product Build 20240605", "onednn": "v3.12.0"}}
TAG = "torch-2.13.0+cpu,transformers-5.24.0/pinned-avx2/AuthenticAMD"


def shard(torch=TORCH, machine=MACHINE):
    record = {"model_revision": "59c8239675df4af6", "numeric_tag": TAG, "machine": machine, "torch": torch}
    return {"models": {"minilm": {"texts": 3, "embedded": 3, "cached": 0, "environment": record}}}


def test_torch_libraries_read_from_its_build_configuration():
    assert environment.torch_libraries(TORCH_CONFIG) == {"blas": "mkl", "mkl": "2024.2-Product Build 20240605",
                                                         "onednn": "v3.12.0"}
    assert environment.torch_libraries("PyTorch built with:\n  - BLAS_INFO=open,\n") == {
        "blas": "open", "mkl": None, "onednn": None}


def test_shards_merge_into_one_record_listing_what_they_disagree_on():
    merged = environment.embedding_environment([shard(), shard(torch=None), shard()])
    assert merged == {"minilm": {"model_revision": "59c8239675df4af6", "numeric_tag": TAG, "machines": MACHINE,
                                 "torch": TORCH}}  # the shard that only read the cache adds no torch record
    two = {**TORCH, "threads": 2}
    assert environment.embedding_environment([shard(), shard(torch=two)])["minilm"]["torch"] == [TORCH, two]
    assert environment.embedding_environment([shard(torch=None)])["minilm"]["torch"] is None
    assert environment.embedding_environment([{"models": {}}]) is None


def test_model_revision_changes_with_any_file(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"mean": true}')
    first = environment.model_revision(str(tmp_path))
    assert len(first) == 16
    environment.model_revision.cache_clear()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"mean": false}')
    assert environment.model_revision(str(tmp_path)) != first


def test_run_environment_names_this_machine_and_its_libraries(tmp_path):
    path = tmp_path / "shard-0.json"
    path.write_text(json.dumps(shard()))
    found = environment.run_environment([path])
    assert found["machine"]["cpu"] == this_cpu().model and found["machine"]["vector_extensions"] == \
        this_cpu().vector_extensions
    assert set(found["threads"]) == {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}
    assert found["numpy_blas"] not in ("", "unknown") and found["packages"]["numpy"] != "not installed"
    assert {"torch", "sentence-transformers", "onnxruntime", "transformers"} <= set(found["packages"])
    assert found["embedding"]["minilm"]["numeric_tag"] == TAG


def test_report_provenance_shows_the_environment(tmp_path):
    record = {"machine": MACHINE, "threads": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": None},
              "numpy_blas": "scipy-openblas 0.3.31", "packages": {"torch": "2.13.0+cpu"},
              "embedding": environment.embedding_environment([shard()])}
    assert environment_rows(record) == [
        ("machine", "AMD EPYC (AuthenticAMD), 2 logical CPUs; Linux 6.1, Python 3.11.7"),
        ("vector extensions", "avx2 fma"), ("thread variables", "OMP_NUM_THREADS=1, MKL_NUM_THREADS=unset"),
        ("numpy BLAS", "scipy-openblas 0.3.31"), ("minilm: revision", "59c8239675df4af6"), ("minilm: numeric tag", TAG),
        ("minilm: torch path", "ATen AVX2, MKL mode AUTO,STRICT, oneDNN at most AVX2; 1 thread(s); BLAS mkl "
                               "(MKL 2024.2-Product Build 20240605, oneDNN v3.12.0)")]
    cached = {**record, "embedding": environment.embedding_environment([shard(torch=None, machine={**MACHINE, "cpu": "Intel"})])}
    rows = dict(environment_rows(cached))
    assert rows["minilm: torch path"] == "no vector computed by this run (all from the cache)"
    assert rows["minilm: embedded on"].startswith("Intel (AuthenticAMD)")
    section = provenance_section(tmp_path, {}, tmp_path, record)
    assert "| machine | AMD EPYC (AuthenticAMD), 2 logical CPUs; Linux 6.1, Python 3.11.7 |" in section
    assert "| torch | 2.13.0+cpu |" in section  # package versions as recorded in summary.json
