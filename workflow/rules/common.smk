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

from membench.adapters.registry import adapter_source_files, adapter_version, facts_base
from membench.memory.registry import memory_runs
from membench.workflow_plan import adapter_runs, facts_source, judged_runs, qa_runs, runs_for

ADAPTERS = adapter_runs(config)
RUNS = runs_for(config, DATASETS, ADAPTERS)
JUDGED = judged_runs(config, RUNS)
ANSWERED = qa_runs(config, RUNS)
EMBEDDINGS = config["embeddings_dir"]
LLM_CACHE = config["llm_cache"]


wildcard_constraints:
    adapter="|".join(re.escape(a) for a in ADAPTERS) or "NO_ADAPTER",


def adapter_spec(wildcards):
    return ADAPTERS[wildcards.adapter]["adapter"]


def adapter_params(wildcards):
    return ADAPTERS[wildcards.adapter]["params"]


def adapter_sources(wildcards):
    return [str(p) for p in adapter_source_files(adapter_spec(wildcards))]


def embedder_slots(wildcards):
    """1 for a run that embeds text: such runs take turns (profiles/default: embedder=1), so the model
    does not oversubscribe the cores and each text is embedded once, then read from the shared cache."""
    return int(any(p.name == "embeddings.py" for p in adapter_source_files(adapter_spec(wildcards))))


def rank_facts(wildcards):
    """The fact logs a fact-augmented run reads (none for other runs)."""
    if not facts_base(adapter_spec(wildcards)):
        return []
    return [f"results/{wildcards.dataset}/facts/{facts_source(config, wildcards.dataset)}"]


MEMORY_RUNS = memory_runs(ADAPTERS)  # memory-system runs (rule rank_memory) -> whether they make model calls


def memory_cost_files():
    """The cost record of every memory run whose system makes model calls (for the report's cost table)."""
    return [f"results/{d}/costs/memory-{a}.json" for d, a in RUNS if MEMORY_RUNS.get(a)]


def score_files(wildcards=None):
    """Every per-question score file the aggregate reads: retrieval, extended-pool and QA scores."""
    return (
        run_files("results/{dataset}/scores/{adapter}.parquet")
        + [f"results/{d}/scores/{a}.extended.parquet" for d, a in JUDGED]
        + [f"results/{d}/qa/{a}.scores.parquet" for d, a in ANSWERED]
    )


def score_keys():
    """(dataset, adapter) of each file in score_files(), in the same order."""
    return RUNS + JUDGED + ANSWERED


def cost_files():
    return (
        [f"results/{d}/costs/facts.json" for d in DATASETS if facts_source(config, d) == "llm"]
        + [f"results/{d}/costs/judge-{a}.json" for d, a in JUDGED]
        + [f"results/{d}/costs/qa-{a}.json" for d, a in ANSWERED]
        + memory_cost_files()
    )


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
