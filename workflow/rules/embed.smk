# Embed every distinct text the datasets' embedding runs need, once, in shards that run side by side (one set
# of shards for all the datasets a run's targets need, so each shard loads the model once); rank jobs of those
# runs then only read vectors from the content-addressed cache.


rule embed_texts:
    input:
        sessions="results/{dataset}/sessions",
        queries="results/{dataset}/view/queries.parquet",
        haystacks="results/{dataset}/view/haystacks.parquet",
        facts=embedding_facts,
        code=embedding_sources,
    output:
        texts="results/{dataset}/embeddings/texts.parquet",
        summary="results/{dataset}/embeddings/texts.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        benchmark=benchmark_fields("granularities", "user_turns_only"),
        runs=embedding_runs,
        options=EMBEDDING_OPTIONS,
        code=script_version("scripts/embed_texts.py"),
    log:
        "logs/embed_texts/{dataset}.log",
    benchmark:
        "benchmarks/embed_texts/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/embed_texts.py"


rule embed:
    input:
        texts=scope_texts,
    output:
        manifest="results/embeddings/{scope}/shard-{shard}.json",
    wildcard_constraints:
        scope=r"[^/]+",
    params:
        shards=config["embedding"]["shards"],
        cache=EMBEDDINGS,
        options=EMBEDDING_OPTIONS,
        code=script_version("scripts/embed.py"),
    threads: 1
    # Before the BM25 family's rank/score/log jobs, which need no vectors: every shard starts as soon as the texts
    # are known, and those small jobs fill the cores after the shards, beside the embedding runs' own jobs.
    priority: 1
    log:
        "logs/embed/{scope}/{shard}.log",
    benchmark:
        "benchmarks/embed/{scope}/{shard}.tsv"
    conda:
        ENV
    script:
        "../../scripts/embed.py"


# Seconds of work: run beside snakemake rather than wait in a cluster queue.
localrules:
    embedded,


# The dataset's texts are in the cache: what its embedding runs' rank jobs wait for. It reruns when its own
# texts change and then waits for the shards; shards that rerun for another dataset's texts, or a change of
# scope, rerun none of this dataset's jobs (`ancient` inputs keep the order and ignore the times).
rule embedded:
    input:
        texts="results/{dataset}/embeddings/texts.parquet",
        shards=scope_shards,
    output:
        marker="results/{dataset}/embeddings/embedded.json",
    params:
        code=script_version("scripts/embedded.py"),
    log:
        "logs/embedded/{dataset}.log",
    conda:
        ENV
    script:
        "../../scripts/embedded.py"
