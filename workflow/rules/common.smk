# Config validation, the dataset list and the input functions every stage shares.

import os
import re
from pathlib import Path

from membench.jobs import source_digests
from membench.benchmarks.registry import of_dataset
from membench.config import absolute_paths, enabled_datasets, is_local, subset_workdir, validate_config
from membench.logs import one_line_errors
from membench.jobs.fork_server import ForkServer
from membench.jobs.provenance import script_version
from membench.runs.plan import (SCOPE_JOIN, QA_BASELINES, adapter_runs, baseline_runs, facts_source,
                                judged_runs, needs_of_runs, qa_runs, requested_datasets, runs_for)

with one_line_errors():  # a bad config ends the run with its one-line message, before anything is written
    validate_config(config)
    DATASETS = enabled_datasets(config)
    ADAPTERS = adapter_runs(config)
    RUNS = runs_for(config, DATASETS, ADAPTERS)
    NEEDS = needs_of_runs(ADAPTERS)  # run -> what its system declares it needs (membench.runs.needs)

# Rule scripts import this repository's membench, also inside a --use-conda environment (which holds only the
# pinned dependencies of envs/membench.yaml); cluster jobs inherit it with the rest of the environment.
# (Set, not required from the user, so no `envvars:` assertion.)
os.environ.update(PYTHONPATH=os.pathsep.join(filter(None, [workflow.basedir, os.environ.get("PYTHONPATH")])))

# Every job that embeds runs torch on the pinned numeric profile (membench.embedding.numerics: a vector's bits then depend on
# neither its batch nor the thread count); set here, so jobs (local or on a cluster) start with it.
from membench.embedding.numerics import pin_environment

pin_environment()

# A subset run (`--config subset='{per_group: 3, seed: 0}'`) works in its own folder: same targets
# (results/report.md), never the full run's files. Data, downloads and caches stay shared.
SUBSET_DIR = subset_workdir(config)
if SUBSET_DIR:
    absolute_paths(config, Path.cwd())
    SUBSET_DIR = os.path.abspath(SUBSET_DIR)
    os.makedirs(SUBSET_DIR, exist_ok=True)
    os.chdir(SUBSET_DIR)  # what `workdir:` does; `workdir:` is a no-op when --directory is given


# The light rules' scripts hand their job to one fork server per local run (membench.jobs.hand_over): pandas, pyarrow
# and the stage are imported once, not once per job. A cluster run's jobs run as before.
FORK_SERVER = ForkServer(Path(workflow.basedir) / "scripts")


def start_fork_server():
    """onstart: the server, if this run's jobs run here and `fork_server` is on."""
    executor = getattr(getattr(workflow, "executor_plugin", None), "name", None)
    if config["fork_server"] and executor == "local":
        FORK_SERVER.start()


def print_headline():
    """Called on success: the run's short headline table (results/headline.txt), if this run made one."""
    path = Path("results/headline.txt")
    if path.exists():
        text = path.read_text(encoding="utf-8")
        print(f"\nmembench headline figures ({path.resolve()}):\n{text}")


RESOURCES = config["resources_dir"]
ENV = "../../envs/membench.yaml"


def dataset_pattern(names):
    """A wildcard constraint matching exactly these dataset names (none: a name no dataset can have)."""
    return "|".join(re.escape(d) for d in names) or "NO_DATASET"


wildcard_constraints:
    dataset=dataset_pattern(config["datasets"]),


# The datasets whose benchmark writes its own retrieval logs (LongMemEval): rule score_logged scores their runs,
# rule score the others'. Their one granularity order names the logs.
LOGGED_DATASETS = [d for d in config["datasets"] if of_dataset(config, d).retrieval_log]
UNLOGGED_DATASETS = [d for d in config["datasets"] if d not in LOGGED_DATASETS]
LOG_GRANULARITIES = sorted({of_dataset(config, d).granularities for d in LOGGED_DATASETS}) or [()]
if len(LOG_GRANULARITIES) > 1:
    raise ValueError(f"retrieval logs are named by one granularity order, and these datasets have several "
                     f"({LOG_GRANULARITIES})")
LOG_GRANULARITIES = list(LOG_GRANULARITIES[0])


def dataset_spec(wildcards):
    return config["datasets"][wildcards.dataset]


def dataset_benchmark(wildcards):
    """The dataset's benchmark record (membench.benchmarks): what its kind is ranked, scored and reported by."""
    return of_dataset(config, wildcards.dataset)


def benchmark_fields(*names):
    """A param holding these fields of the dataset's benchmark record, so that editing one reruns the jobs that
    read it (their `code` hashes name the stage files, not the record)."""
    return lambda wildcards: {n: getattr(dataset_benchmark(wildcards), n) for n in names}


def judge_tables(wildcards):
    """The parsed tables a dataset's own QA judge reads besides the QA rules' own inputs (its benchmark's
    `Qa.judge.tables`: BEAM's rubrics, LoCoMo-Plus's qrels), as named inputs, so only its QA reruns when they change."""
    rules = dataset_benchmark(wildcards).qa
    tables = rules.judge.tables if rules and rules.judge else ()
    return {t: f"results/{wildcards.dataset}/{t}.parquet" for t in tables if t not in ("questions", "turns", "haystacks")}


def dataset_source(wildcards):
    """A local copy is read in place; otherwise the download rule's folder."""
    spec = dataset_spec(wildcards)
    if is_local(spec):
        return spec["path"]
    return f"{RESOURCES}/{wildcards.dataset}"


def dataset_files(wildcards):
    """What a parse reads: of a local copy, the files its benchmark's parser reads (so an edit inside a folder,
    which leaves the folder's time as it was, reruns it); otherwise the download rule's folder."""
    spec = dataset_spec(wildcards)
    if is_local(spec):
        return [str(p) for p in dataset_benchmark(wildcards).files_read(Path(spec["path"]))]
    return dataset_source(wildcards)


def dataset_digests(wildcards):
    """The sha256 of a local copy's files (a download is checked against its configured sha256 instead)."""
    return source_digests.digests(dataset_files(wildcards)) if is_local(dataset_spec(wildcards)) else {}


def errata_files(wildcards):
    """The gold-label errata a parse reads: answers (LoCoMo) and evidence (LoCoMo, LongMemEval). Inputs, so
    editing one reparses."""
    record, settings = dataset_benchmark(wildcards), config["errata"]
    if not settings["enabled"]:
        return []
    return ([settings["path"] or str(record.errata)] if record.errata else []) + (
        [settings["evidence_path"] or str(record.evidence_errata)] if record.evidence_errata else [])


def errata_settings(wildcards):
    """The `errata` config section, for a parse whose benchmark has errata of either kind (None otherwise, so
    changing it reparses only those)."""
    record = dataset_benchmark(wildcards)
    return config["errata"] if record.errata or record.evidence_errata else None


def evidence_errata_applied(dataset):
    """Whether a dataset's evidence errata are applied (`errata.evidence: apply`), so its figures are also scored
    on the evidence as published, for the report to show both."""
    settings = config["errata"]
    return (settings["enabled"] and settings["evidence"] == "apply"
            and of_dataset(config, dataset).evidence_errata)


# ---------------------------------------------------------------- adapters

from membench.runs.ablation import ablated
from membench.runs.registry import adapter_source_files, adapter_version

JUDGED = judged_runs(config, RUNS)
ANSWERED = qa_runs(config, RUNS)
# The QA baselines (full-context, no-memory, oracle), answered beside the runs on every dataset with QA.
QA_BASELINE_RUNS = baseline_runs(config, ANSWERED)
CALIBRATED = sorted({d for d, _ in ANSWERED}) if config["qa"]["judge_calibration"]["enabled"] else []
EMBEDDINGS = config["embeddings_dir"]
LLM_CACHE = config["llm_cache"]


wildcard_constraints:
    run="|".join(re.escape(a) for a in ADAPTERS) or "NO_ADAPTER",
    baseline="|".join(re.escape(b) for b in QA_BASELINES),
    shard=r"\d+",
    part=r"\d+",


def adapter_spec(wildcards):
    return ADAPTERS[wildcards.run]["adapter"]


def adapter_params(wildcards):
    return ADAPTERS[wildcards.run]["params"]


def adapter_sources(wildcards):
    return [str(p) for p in adapter_source_files(adapter_spec(wildcards))]


# ---------------------------------------------------------------- embeddings

EMBEDDING_OPTIONS = {k: config["embedding"][k] for k in ("batch_size", "backend", "device", "precision")}


EMBEDDING_RUNS = {a for a, needs in NEEDS.items() if needs.embeddings}  # they wait for the embed stage


def dataset_run_names(dataset):
    """The runs of one dataset, in RUNS order."""
    return [a for d, a in RUNS if d == dataset]


def dataset_run_files(pattern):
    """An input function: `pattern` filled in for each run of the job's dataset, in RUNS order."""
    return lambda wildcards: [pattern.format(dataset=wildcards.dataset, run=a)
                              for a in dataset_run_names(wildcards.dataset)]


def embedding_run_names(dataset):
    return [a for a in dataset_run_names(dataset) if a in EMBEDDING_RUNS]


def run_facts(dataset, adapter):
    """The fact-log folder a fact-augmented run reads, else None."""
    if not NEEDS[adapter].facts:
        return None
    return f"results/{dataset}/facts/{facts_source(config, dataset)}"


def embedding_runs(wildcards):
    """The embedding runs of a dataset, as the embed_texts stage loads them."""
    return [{"name": a, "spec": ADAPTERS[a]["adapter"], "params": ADAPTERS[a]["params"],
             "facts": run_facts(wildcards.dataset, a)} for a in embedding_run_names(wildcards.dataset)]


def embedding_facts(wildcards):
    return sorted({f for f in (run_facts(wildcards.dataset, a) for a in embedding_run_names(wildcards.dataset)) if f})


def embedding_sources(wildcards):
    return sorted({str(p) for a in embedding_run_names(wildcards.dataset)
                   for p in adapter_source_files(ADAPTERS[a]["adapter"])})


RANK_PARTS = config["retrieval"]["shards"]


def rank_parts(wildcards):
    """The rank_part outputs a sharded rank job merges (none when retrieval.shards is 1)."""
    if RANK_PARTS == 1:
        return []
    return [f"results/{wildcards.dataset}/runs/parts/{wildcards.run}.{i}.parquet" for i in range(RANK_PARTS)]


def embed_scope(dataset):
    """The datasets one set of embed shards serves, named by joining them with "+": those that this
    invocation's targets need and that have embedding runs (all of them for the report). So a request for one
    dataset's files embeds, and parses, that dataset alone, and a full run loads the model once per shard.
    Read while the DAG is built: Snakemake sets `workflow.dag_settings` after parsing the Snakefile."""
    targets = getattr(getattr(workflow, "dag_settings", None), "targets", None) or ()
    scope = [d for d in requested_datasets(targets, DATASETS) if embedding_run_names(d)]
    return SCOPE_JOIN.join(scope if dataset in scope else [dataset])


def scope_texts(wildcards):
    """The distinct-text tables of the datasets a set of embed shards serves: what they embed."""
    return [f"results/{d}/embeddings/texts.parquet" for d in wildcards.scope.split(SCOPE_JOIN)]


def scope_shards(wildcards):
    """The embed shards that embed this dataset's texts (with those of the other datasets the targets need),
    as `ancient` inputs: shards that rerun for another dataset's texts leave this dataset's jobs alone."""
    scope = embed_scope(wildcards.dataset)
    return [ancient(f"results/embeddings/{scope}/shard-{i}.json") for i in range(config["embedding"]["shards"])]


def embedding_manifests(wildcards=None):
    """The manifests of the embed shards that served this run's datasets (none when no run embeds): where the
    environment that computed the vectors is on record. An input function, since the shards' scope depends on
    the targets."""
    scopes = sorted({embed_scope(d) for d in DATASETS if embedding_run_names(d)})
    return [f"results/embeddings/{s}/shard-{i}.json" for s in scopes for i in range(config["embedding"]["shards"])]


def rank_embeddings(wildcards):
    """An embedding run waits until its dataset's texts are embedded; other runs wait for nothing. `ancient`:
    the marker is rewritten when the targets change the scope, which must not rerun this dataset's ranks; only
    the order is kept (a rank whose own inputs changed reruns anyway, after the marker)."""
    if wildcards.run not in EMBEDDING_RUNS:
        return []
    return [ancient(f"results/{wildcards.dataset}/embeddings/embedded.json")]


def rank_facts(wildcards):
    """The fact logs a fact-augmented run reads (none for other runs)."""
    facts = run_facts(wildcards.dataset, wildcards.run)
    return [facts] if facts else []


# Memory-system runs (they ingest the session logs; the rank_memory rule runs them) -> whether they make model calls.
MEMORY_RUNS = {a: needs.model_calls for a, needs in NEEDS.items() if needs.session_logs}


def memory_cost_files():
    """The cost record of every memory run whose system makes model calls (for the report's cost table)."""
    return [f"results/{d}/costs/memory-{a}.json" for d, a in RUNS if MEMORY_RUNS.get(a)]


def score_files(wildcards=None):
    """Every per-question score file the aggregate reads: retrieval, extended-pool and QA scores."""
    return (
        run_files("results/{dataset}/scores/{run}.parquet")
        + [f"results/{d}/scores/{a}.extended.parquet" for d, a in JUDGED]
        + [f"results/{d}/qa/{a}.scores.parquet" for d, a in ANSWERED + QA_BASELINE_RUNS]
    )


def score_keys():
    """(dataset, adapter) of each file in score_files(), in the same order."""
    return RUNS + JUDGED + ANSWERED + QA_BASELINE_RUNS


def dataset_score_files(wildcards):
    """The score files of one dataset (the per-dataset aggregate and tables read them)."""
    return [f for (d, _), f in zip(score_keys(), score_files()) if d == wildcards.dataset]


def dataset_score_keys(wildcards):
    """(dataset, adapter) of each file in dataset_score_files(), in the same order."""
    return [(d, a) for d, a in score_keys() if d == wildcards.dataset]


def published_score_files():
    """Every run's scores on the evidence as published, where evidence errata are applied (the report's both ways)."""
    return [f"results/{d}/scores-published/{a}.parquet" for d, a in RUNS if evidence_errata_applied(d)]


def cost_files():
    return (
        [f"results/{d}/costs/facts.json" for d in DATASETS if facts_source(config, d) == "llm"]
        + [f"results/{d}/costs/judge-{a}.json" for d, a in JUDGED]
        + [f"results/{d}/costs/qa-{a}.json" for d, a in ANSWERED + QA_BASELINE_RUNS]
        + [f"results/{d}/costs/qa-calibration.json" for d in CALIBRATED]
        + memory_cost_files()
    )


def run_files(pattern):
    """`pattern` filled in for every (dataset, adapter) pair that runs."""
    return [pattern.format(dataset=d, run=a) for d, a in RUNS]


def retrieval_logs():
    """The upstream-format retrieval logs of the benchmarks that have them (LongMemEval), per granularity."""
    return [
        f"results/{d}/runs/{a}.retrieval_log.{g}.jsonl"
        for d, a in RUNS
        if of_dataset(config, d).retrieval_log
        for g in of_dataset(config, d).granularities
    ]
