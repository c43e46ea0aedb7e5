# Memory systems (mem0, the session-log reader, plugins): ingest the session logs once, then search.
# Same outputs as rule rank, so scoring and the report treat them like any run; ruleorder picks this rule.

ruleorder: rank_memory > rank


rule rank_memory:
    input:
        sessions="results/{dataset}/sessions",
        queries="results/{dataset}/view/queries.parquet",
        haystacks="results/{dataset}/view/haystacks.parquet",
        item_map="results/{dataset}/maps/item_map.parquet",
        query_map="results/{dataset}/maps/query_map.parquet",
        code=adapter_sources,
    output:
        run="results/{dataset}/runs/{run}.parquet",
        trec="results/{dataset}/runs/{run}.trec",
        meta="results/{dataset}/runs/{run}.json",
        cost="results/{dataset}/costs/memory-{run}.json",
    wildcard_constraints:
        run="|".join(re.escape(a) for a in MEMORY_RUNS) or "NO_MEMORY_RUN",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        spec=adapter_spec,
        adapter_params=adapter_params,
        depth=config["retrieval"]["depth"],
        embeddings=EMBEDDINGS,
        embedding_options=EMBEDDING_OPTIONS,
        llm_cache=LLM_CACHE,
        llm=config["llm"],
        store=lambda w: f"{config['memory_dir']}/{w.dataset}/{w.run}-{adapter_version(adapter_spec(w), adapter_params(w))}",
        sealed=config["memory_sealed"],
        sealed_timeout=config["memory_call_timeout"],
        attribution=config["memory_attribution"],
        refs=lambda w: ADAPTERS[w.run].get("refs", "kept"),
        data=dataset_source,
        code=script_version("scripts/rank_memory.py"),
    threads: 2
    log:
        "logs/rank/{dataset}/{run}.log",
    benchmark:
        "benchmarks/rank/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../../scripts/rank_memory.py"
