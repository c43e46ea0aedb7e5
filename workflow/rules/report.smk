# Plots per dataset, artifacts to paste (summary.json, LaTeX tables, per-question CSV), then results/report.md
# gathering every figure, table and provenance record.


rule tables:
    input:
        summary="results/summary.parquet",
        significance="results/significance.parquet",
        normalization=expand("results/{dataset}/normalization.json", dataset=DATASETS),
        manifests=embedding_manifests,
        efficiency=expand("results/{dataset}/efficiency/efficiency.json", dataset=DATASETS),
    output:
        summary="results/summary.json",
        headline="results/headline.txt",
        tables=expand("results/tables/{dataset}.tex", dataset=DATASETS),
    params:
        kinds={d: config["datasets"][d]["kind"] for d in DATASETS},
        baseline=config["baseline"],
        subset=config["subset"],
        ablation=ablated(config),
        config=config,
        code=script_version("scripts/tables.py"),
    log:
        "logs/tables.log",
    conda:
        ENV
    script:
        "../../scripts/tables.py"


# Seconds of work: run beside snakemake rather than wait in a cluster queue.
localrules:
    plots,
    tables,
    explorer,
    report,


# A dataset's plots, its miss analysis (where runs miss, by question difficulty: a table and a plot) and its
# efficiency beside quality (latency, tokens of the top k, recall within a token budget, ingest, store, calls; CIs,
# efficiency.json and a chart): one job, since a job's start-up and matplotlib's import cost more than drawing them.
rule plots:
    input:
        summary="results/{dataset}/summary.parquet",
        questions="results/{dataset}/questions.parquet",
        qrels="results/{dataset}/qrels.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        turns="results/{dataset}/turns.parquet",
        scores=dataset_run_files("results/{dataset}/scores/{run}.parquet"),
        rows=dataset_run_files("results/{dataset}/efficiency/runs/{run}.parquet"),
        metas=dataset_run_files("results/{dataset}/runs/{run}.json"),
        costs=lambda w: [f"results/{w.dataset}/costs/memory-{a}.json" for a in dataset_run_names(w.dataset)
                         if a in MEMORY_RUNS],
    output:
        difficulty="results/{dataset}/difficulty.parquet",
        difficulty_plot=report("results/plots/{dataset}_difficulty.png", category="Plots",
                               caption="../report/groups.rst"),
        curve=report("results/plots/{dataset}_curve.png", category="Plots", caption="../report/curve.rst"),
        groups=report("results/plots/{dataset}_groups.png", category="Plots", caption="../report/groups.rst"),
        efficiency_summary="results/{dataset}/efficiency/summary.parquet",
        efficiency_significance="results/{dataset}/efficiency/significance.parquet",
        efficiency_record="results/{dataset}/efficiency/efficiency.json",
        efficiency_plot=report("results/plots/{dataset}_efficiency.png", category="Plots",
                               caption="../report/efficiency.rst"),
    params:
        runs=lambda w: dataset_run_names(w.dataset),
        kind=lambda w: dataset_spec(w)["kind"],
        curve=lambda w: dataset_benchmark(w).curve,
        breakdown=lambda w: dataset_benchmark(w).breakdown,
        cluster=config["report"]["cluster_bootstrap"],
        ablation=ablated(config),
        baseline=config["baseline"],
        resamples=config["report"]["bootstrap_resamples"],
        seed=config["report"]["seed"],
        subset=config["subset"],
        code=script_version("scripts/plots.py"),
    log:
        "logs/plots/{dataset}.log",
    conda:
        ENV
    script:
        "../../scripts/plots.py"


# An offline results explorer (results/explorer/index.html, opened from disk): leaderboard, question browser,
# each question's gold turns in context and every system's top k (in QA mode: the generated answers, verdicts and
# the judge's calibration). Reads existing outputs only.
rule explorer:
    input:
        summary="results/summary.json",
        significance="results/significance.parquet",
        questions=expand("results/{dataset}/questions.parquet", dataset=DATASETS),
        turns=expand("results/{dataset}/turns.parquet", dataset=DATASETS),
        qrels=expand("results/{dataset}/qrels.parquet", dataset=DATASETS),
        haystacks=expand("results/{dataset}/haystacks.parquet", dataset=DATASETS),
        # BEAM's gold roles (original / update, the two sides, events in gold order); empty for other benchmarks
        gold_roles=expand("results/{dataset}/gold_roles.parquet", dataset=DATASETS),
        scores=run_files("results/{dataset}/scores/{run}.parquet"),
        ranked=run_files("results/{dataset}/runs/{run}.parquet"),
        efficiency=expand("results/{dataset}/efficiency/efficiency.json", dataset=DATASETS),
        # QA mode only (empty lists otherwise): generated answers and verdicts, the judge's calibration probes
        qa=[f"results/{d}/qa/{a}.parquet" for d, a in ANSWERED + QA_BASELINE_RUNS],
        calibration=[f"results/{d}/qa/calibration.parquet" for d in CALIBRATED],
    output:
        folder=directory("results/explorer"),
    params:
        datasets=DATASETS,
        runs=RUNS,
        answered=ANSWERED + QA_BASELINE_RUNS,
        calibrated=CALIBRATED,
        baseline=config["baseline"],
        code=script_version("scripts/explorer.py"),
    log:
        "logs/explorer.log",
    conda:
        ENV
    script:
        "../../scripts/explorer.py"


rule report:
    input:
        normalization=expand("results/{dataset}/normalization.json", dataset=DATASETS),
        summary="results/summary.parquet",
        significance="results/significance.parquet",
        metas=run_files("results/{dataset}/runs/{run}.json"),
        scores=run_files("results/{dataset}/scores/{run}.parquet"),
        plots=expand("results/plots/{dataset}_{kind}.png", dataset=DATASETS, kind=["curve", "groups"]),
        tables=rules.tables.output,
        summary_json=rules.tables.output.summary,
        per_question=expand("results/{dataset}/per_question.csv", dataset=DATASETS),
        difficulty=expand("results/{dataset}/difficulty.parquet", dataset=DATASETS),
        evidence_errata=[f"results/{d}/evidence_errata.parquet" for d in DATASETS if evidence_errata_applied(d)],
        published_scores=published_score_files(),
        logs=retrieval_logs(),
        qa=[f"results/{d}/qa/{a}.parquet" for d, a in ANSWERED + QA_BASELINE_RUNS],
        calibration=[f"results/{d}/qa/calibration.parquet" for d in CALIBRATED],
        official=[f"results/{d}/scores/{a}.parquet" for d, a in JUDGED],
        extended=[f"results/{d}/scores/{a}.extended.parquet" for d, a in JUDGED],
        judgments=[f"results/{d}/judgments/{a}.parquet" for d, a in JUDGED],
        costs=cost_files(),
        efficiency=expand("results/{dataset}/efficiency/efficiency.json", dataset=DATASETS),
        efficiency_plots=expand("results/plots/{dataset}_efficiency.png", dataset=DATASETS),
        explorer=rules.explorer.output.folder,
    output:
        report=report("results/report.md", category="Report", caption="../report/report.rst"),
    params:
        kinds={d: config["datasets"][d]["kind"] for d in DATASETS},
        errata_datasets=[d for d in DATASETS if evidence_errata_applied(d)],
        runs=RUNS,
        answered=ANSWERED + QA_BASELINE_RUNS,
        calibrated=CALIBRATED,
        judged=JUDGED,
        baseline=config["baseline"],
        config=config,
        code=script_version("scripts/report.py"),
    log:
        "logs/report.log",
    conda:
        ENV
    script:
        "../../scripts/report.py"
