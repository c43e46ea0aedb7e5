# Plots per dataset, then results/report.md gathering every figure, table and provenance record.


# Seconds of work: run beside snakemake rather than wait in a cluster queue.
localrules:
    plots,
    report,


rule plots:
    input:
        summary="results/summary.parquet",
    output:
        curve=report("results/plots/{dataset}_curve.png", category="Plots", caption="../report/curve.rst"),
        groups=report("results/plots/{dataset}_groups.png", category="Plots", caption="../report/groups.rst"),
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        code=module_version("membench.report.plots", "membench.report.headlines"),
    log:
        "logs/plots/{dataset}.log",
    conda:
        ENV
    script:
        "../../scripts/plots.py"


rule report:
    input:
        normalization=expand("results/{dataset}/normalization.json", dataset=DATASETS),
        summary="results/summary.parquet",
        significance="results/significance.parquet",
        metas=run_files("results/{dataset}/runs/{adapter}.json"),
        plots=expand("results/plots/{dataset}_{kind}.png", dataset=DATASETS, kind=["curve", "groups"]),
        logs=longmemeval_logs(),
        qa=[f"results/{d}/qa/{a}.parquet" for d, a in ANSWERED],
        calibration=[f"results/{d}/qa/calibration.parquet" for d in CALIBRATED],
        official=[f"results/{d}/scores/{a}.parquet" for d, a in JUDGED],
        extended=[f"results/{d}/scores/{a}.extended.parquet" for d, a in JUDGED],
        judgments=[f"results/{d}/judgments/{a}.parquet" for d, a in JUDGED],
        costs=cost_files(),
    output:
        report=report("results/report.md", category="Report", caption="../report/report.rst"),
    params:
        datasets={d: config["datasets"][d]["kind"] for d in DATASETS},
        runs=RUNS,
        answered=ANSWERED,
        calibrated=CALIBRATED,
        judged=JUDGED,
        baseline=config["baseline"],
        config=config,
        code=module_version("membench.report.build"),
    log:
        "logs/report.log",
    conda:
        ENV
    script:
        "../../scripts/report.py"
