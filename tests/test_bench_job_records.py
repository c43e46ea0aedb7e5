"""The scale benchmark's job records: benchmark TSVs grouped by rule, and job times read from a Snakemake log."""

from __future__ import annotations

from bench.job_records import by_rule, jobs_run, read_jobs

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"

LOG = """Select jobs to execute...
[Mon Nov 30 17:49:05 2026]
localrule parse:
    log: logs/parse/x.log
    jobid: 1
[Mon Nov 30 17:49:06 2026]
Finished jobid: 1 (Rule: parse)
[Mon Nov 30 17:49:06 2026]
localrule rank:
    jobid: 3
[Mon Nov 30 17:49:07 2026]
rule rank:
    jobid: 4
[Mon Nov 30 17:50:07 2026]
Finished jobid: 4 (Rule: rank)
[Mon Nov 30 17:51:16 2026]
Finished jobid: 3 (Rule: rank)
"""


def test_benchmark_records_grouped_by_rule(tmp_path):
    for name, row in {"rank/lme/dense": "12.5\t0:00:12\t600.5\t1\t1\t1\t0\t0\t90\t20.1",
                      "rank/lme/bm25": "2.5\t0:00:02\t100.0\t1\t1\t1\t0\t0\t90\t2.0",
                      "parse/lme": "1.0\t0:00:01\t-\t-\t-\t-\t-\t-\t-\t-",
                      "aggregate": "4.0\t0:00:04\t150.0\t1\t1\t1\t0\t0\t90\t3.9"}.items():
        path = tmp_path / "benchmarks" / f"{name}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER + row + "\n")
    jobs = read_jobs(tmp_path, {"lme"})
    assert [(j["job"], j["rule"], j["dataset"], j["target"], j["max_rss_mb"]) for j in jobs] == [
        ("aggregate", "aggregate", None, None, 150.0), ("parse/lme", "parse", "lme", None, None),
        ("rank/lme/bm25", "rank", "lme", "bm25", 100.0), ("rank/lme/dense", "rank", "lme", "dense", 600.5)]
    assert by_rule(jobs)["rank"] == {"jobs": 2, "s": 15.0, "max_s": 12.5, "max_rss_mb": 600.5,
                                     "max_rss_job": "rank/lme/dense"}


def test_job_seconds_from_the_snakemake_log(tmp_path):
    log = tmp_path / "snakemake.log"
    log.write_text(LOG)
    # parse 05 -> 06 = 1 s; rank job 3 06 -> 51:16 = 130 s, job 4 07 -> 50:07 = 60 s.
    assert jobs_run(log) == {"parse": {"jobs": 1, "s": 1.0}, "rank": {"jobs": 2, "s": 190.0}}
