# Config validation, the dataset list and the input functions every stage shares.

import re

from membench.config import enabled_datasets, is_local, validate_config
from membench.provenance import code_version, module_version

validate_config(config)

DATASETS = enabled_datasets(config)
RESOURCES = config["resources_dir"]
ENV = "../../envs/membench.yaml"


wildcard_constraints:
    dataset="|".join(re.escape(d) for d in config["datasets"]) or "NO_DATASET",


def dataset_spec(wildcards):
    return config["datasets"][wildcards.dataset]


def dataset_source(wildcards):
    """A local copy is read in place; otherwise the download rule's folder."""
    spec = dataset_spec(wildcards)
    if is_local(spec):
        return spec["path"]
    return f"{RESOURCES}/{wildcards.dataset}"


# ---------------------------------------------------------------- adapters

from membench.adapters.registry import adapter_source_files, adapter_version
from membench.workflow_plan import adapter_runs, runs_for

ADAPTERS = adapter_runs(config)
RUNS = runs_for(config, DATASETS, ADAPTERS)
EMBEDDINGS = config["embeddings_dir"]


wildcard_constraints:
    adapter="|".join(re.escape(a) for a in ADAPTERS) or "NO_ADAPTER",


def adapter_spec(wildcards):
    return ADAPTERS[wildcards.adapter]["adapter"]


def adapter_params(wildcards):
    return ADAPTERS[wildcards.adapter]["params"]


def adapter_sources(wildcards):
    return [str(p) for p in adapter_source_files(adapter_spec(wildcards))]


def run_files(pattern):
    """`pattern` filled in for every (dataset, adapter) pair that runs."""
    return [pattern.format(dataset=d, adapter=a) for d, a in RUNS]


def longmemeval_logs():
    return [
        f"results/{d}/runs/{a}.retrieval_log.{g}.jsonl"
        for d, a in RUNS
        if config["datasets"][d]["kind"] == "longmemeval"
        for g in ("session", "turn")
    ]
