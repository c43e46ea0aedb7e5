"""Print the scale benchmark's figures as plain tables, with issue 7's targets beside them (nothing asserted)."""

from __future__ import annotations

from typing import Any

TARGETS = {"ratio": 1.1, "noop_rerun_s": 2.0, "noop_ratio": 1.3, "max_rss_gib": 4.0, "embedding_jobs_ratio": 1.3}


def _num(value: Any, fmt: str = ",.1f") -> str:
    return "-" if value is None else format(value, fmt)


def print_report(r: dict[str, Any]) -> None:
    print(f"\nscale benchmark: {r['label']}  (commit {str(r.get('commit'))[:10]}, --cores {r['cores']}, "
          f"load before {r['load_before'][0]:.1f}, after {r['load_after'][0]:.1f})")
    if "generated" in r:
        g = r["generated"]
        print(f"generated: {g['counts']}, {g['bytes'] / 1e6:.1f} MB in {g['seconds']:.1f} s  [{g['notice']}]")
    print(f"{'wall, snakemake results/report.md (s)':48s} {r['wall_s']:10.1f}")
    print(f"{'floor: distinct texts embedded once + BM25 (s)':48s} {r['floor_s']:10.1f}")
    e = r.get("embed_floor")
    if isinstance(e, dict):
        print(f"{'  of which one encode() of every distinct text':48s} {e['seconds']:10.1f}   {e['texts']:,d} texts, "
              f"batch {e['batch_size']}, {e['threads']} threads, {e['texts_per_s']:.1f} texts/s")
    elif e:
        print(f"{'  embedding floor':48s} {'':10s}   {e}")
    print(f"{'ratio wall / floor':48s} {_num(r['ratio'], '.2f'):>10s}   target <= {TARGETS['ratio']}")
    if r.get("floor_cpu_s"):
        label = "CPU s: benchmarked jobs / floor (less load-bound)"
        print(f"{label:48s} {r['jobs_cpu_s']:10.1f} / {r['floor_cpu_s']:.1f} = {r['cpu_ratio']:.2f}")
    if r.get("embed_floor_s"):  # one set of embed shards serves every dataset: its slowest shard is its wall
        print(f"{'embed stage (slowest shard) / embedding floor':48s} {r['embed_stage_s']:10.1f} / "
              f"{r['embed_floor_s']:.1f} = {r['embed_stage_s'] / r['embed_floor_s']:.2f}")
    print(f"{'no-op rerun (s)':48s} {r['noop_rerun_s']:10.1f}   target <= {TARGETS['noop_rerun_s']}")
    if r.get("empty_workflow_s"):  # bench/startup.py; older JSON files have neither figure
        label = "no-op rerun / Snakemake on an empty workflow"
        print(f"{label:48s} {r['noop_rerun_s']:10.1f} / {r['empty_workflow_s']:.1f} = {r['noop_ratio']:.2f}   "
              f"target <= {TARGETS['noop_ratio']}")
        jobs = sum(v["jobs"] for v in r["jobs_run"].values())
        print(f"{'jobs run; Python start-up of one job (s)':48s} {jobs:10d}   {r['job_startup_s']:.2f} s each")
        if r.get("handed_over_startup_s") is not None:
            print(f"{'  the same job handed to the fork server (s)':48s} {'':10s}   {r['handed_over_startup_s']:.2f} s")
    peak = max((j for j in r["jobs"] if j["max_rss_mb"] is not None), key=lambda j: j["max_rss_mb"], default=None)
    if peak:
        print(f"{'peak RSS of any job (GiB)':48s} {peak['max_rss_mb'] / 1024:10.2f}   {peak['job']}, "
              f"target <= {TARGETS['max_rss_gib']}")
    print(f"{'distinct texts in the embedding cache':48s} {_num(r['cache_keys'], ',d'):>10s}")

    print(f"\n{'dataset':24s} {'distinct':>9s} {'requested':>10s} {'texts/s':>8s} {'embed floor':>11s} "
          f"{'bm25 s':>7s} {'emb. jobs s':>11s} {'jobs/floor':>10s}  stage summaries")
    for name, t in r["datasets"].items():
        if "error" in t:
            print(f"{name:24s} could not rebuild the texts: {t['error']}; stage summaries {t['embed_summaries']}")
            continue
        ratio = t["embedding_jobs_s"] / t["embed_floor_s"] if t["embed_floor_s"] else None
        summaries = "; ".join(f"{m}: {s.get('distinct')} distinct / {s.get('requested')} requested"
                              for m, s in t["embed_summaries"].items()) or "-"
        rate = t["encoder"]["texts_per_s"] if t["encoder"] else None
        print(f"{name:24s} {t['distinct_needed']:9,d} {t['requested']:10,d} {_num(rate):>8s} "
              f"{_num(t['embed_floor_s']):>11s} {t['bm25_s']:7.1f} {t['embedding_jobs_s']:11.1f} "
              f"{_num(ratio, '.2f'):>10s}  {summaries}")

    print(f"\n{'rule':16s} {'jobs':>5s} {'sum s':>9s} {'max s':>8s} {'peak RSS MiB':>13s} {'log sum s':>10s}  "
          "job with the peak RSS")
    empty = {"jobs": 0, "s": 0.0, "max_s": None, "max_rss_mb": None, "max_rss_job": None}
    rules = {**{k: {**empty, "jobs": v["jobs"]} for k, v in r["jobs_run"].items()}, **r["stages"]}
    for rule, s in sorted(rules.items(), key=lambda kv: -max(kv[1]["s"], r["jobs_run"].get(kv[0], {}).get("s", 0))):
        logged = r["jobs_run"].get(rule, {}).get("s")
        print(f"{rule:16s} {s['jobs']:5d} {_num(s['s'] or None):>9s} {_num(s['max_s']):>8s} "
              f"{_num(s['max_rss_mb']):>13s} {_num(logged):>10s}  {s['max_rss_job'] or '-'}")
    print("(sum/max s and RSS: the rule's benchmark records; log sum s: start to finish in the Snakemake log, "
          "for every rule)")
    if r["rerun_jobs"]:
        print(f"the rerun was not a no-op: it ran {r['rerun_jobs']}")
    print("\nslowest jobs:")
    for job in sorted(r["jobs"], key=lambda j: -(j["s"] or 0))[:8]:
        print(f"  {job['job']:44s} {_num(job['s']):>8s} s {_num(job['max_rss_mb']):>9s} MiB")
    print(f"\n(work folder {r['work']})")
