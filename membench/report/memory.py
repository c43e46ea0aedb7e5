"""Report section for memory systems: what ingest and search cost, and whether every run got the same k."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from membench.report.markdown import table
from membench.scoring.attributed import UNATTRIBUTED


def _calls(memory: dict, phase: str) -> str:
    c = memory["model_calls"].get(f"memory-{phase}", {})
    return f"{c.get('calls', 0):,} ({c.get('cache_hits', 0):,} cached)"


def _short(memory: dict) -> str:
    short = memory["short_searches"]
    if not short:
        return "none"
    return "; ".join(f"⚠ {g}: {n:,} (fewest {memory['fewest_items_share'][g]:.0%} of k)" for g, n in short.items())


def same_k_lines(metas: dict[tuple[str, str], dict]) -> list[str]:
    """One line per dataset: the k every run was asked for, or which runs differ."""
    by_dataset: dict[str, dict[str, list[str]]] = {}
    for (dataset, run), meta in metas.items():
        depth = meta.get("depth")
        k = "the whole haystack" if depth == "full" else f"k = {depth}"
        by_dataset.setdefault(dataset, {}).setdefault(k, []).append(run)
    lines = []
    for dataset, ks in by_dataset.items():
        if len(ks) == 1:
            (k, runs), = ks.items()
            lines.append(f"- {dataset}: all {len(runs)} runs were asked for {k}.")
        else:
            lines.append(f"- {dataset}: ⚠ runs were asked for different k: "
                         + "; ".join(f"{k}: {', '.join(r)}" for k, r in ks.items()))
    return lines


def resolved_lines(memory: dict[tuple[str, str], dict]) -> list[str]:
    """For systems whose results name text rather than membench's ids (an MCP server) or name nothing (a rewritten
    memory): how many were mapped back, and how."""
    lines = []
    for (dataset, run), meta in memory.items():
        stats = meta["memory"].get("system") or {}
        attribution = meta["memory"].get("attribution") or {}
        attributed, dropped = attribution.get("hits_attributed", 0), attribution.get("hits_dropped", 0)
        if stats.get("results"):
            rest = (f"{stats['unresolved']:,} matched neither: {attributed:,} attributed to turns, {dropped:,} dropped"
                    if attribution else f"{stats['unresolved']:,} matched nothing and were dropped")
            lines.append(f"- {dataset} / {run}: {stats['resolved_share']:.1%} of {stats['results']:,} results mapped "
                         f"back to turns (by id {stats['by id']:,}, by exact text {stats['by text']:,}; {rest})")
        elif attributed or dropped:
            lines.append(f"- {dataset} / {run}: {attributed + dropped:,} results named no turn: {attributed:,} "
                         f"attributed to turns, {dropped:,} dropped")
        audit = attribution.get("against_withheld_refs")
        if audit:
            lines.append(f"  - refs withheld (`refs: withheld`), so every result was attributed by its text; against the "
                         f"{audit['refs_withheld']:,} refs the system returned with its {audit['hits']:,} results: "
                         f"precision {_share(audit['precision'])}, recall {_share(audit['recall'])}")
    return ["Results mapped back to the logs (attribution: membench.memory.attribution):", "", *lines, ""] \
        if lines else []


def attributed_lines(summary: pd.DataFrame | None, headlines: Mapping[str, Sequence[str]]) -> list[str]:
    """A run with attributed hits, scored with them and without (as if they were dropped): its headline metrics."""
    if summary is None or summary.empty:
        return []
    overall = summary[(summary.split == "all") & (summary.group_by == "all")]
    without = overall[overall.metric.str.startswith(UNATTRIBUTED)]
    lines = []
    for (dataset, run), part in without.groupby(["dataset", "adapter"], sort=False):
        base = overall[(overall.dataset == dataset) & (overall.adapter == run)].set_index("metric")["mean"]
        pairs = [f"{m} {base[m]:.3f} with, {base[UNATTRIBUTED + m]:.3f} without"
                 for m in headlines.get(dataset, ()) if m in base and UNATTRIBUTED + m in base]
        if pairs:
            lines.append(f"- {dataset} / {run}: " + "; ".join(pairs))
    return ["Scored with and without attributed hits (without: as if results naming no turn were dropped):", "",
            *lines, ""] if lines else []


def seal_of(meta: dict) -> str | None:
    """The seal a run ran under, as its metadata names it (a memory system's, or a sealed third-party adapter's);
    None for a run that was not sealed."""
    return (meta.get("memory") or {}).get("sealed") or meta.get("sealed") or None


def seal_lines(metas: dict[tuple[str, str], dict]) -> list[str]:
    """Which runs were sealed from the gold, and by what (README, "Untrusted systems")."""
    sealed = {key: seal_of(m) for key, m in metas.items() if seal_of(m)}
    if not sealed:
        return []
    open_memory = [f"{d} / {r}" for (d, r), m in metas.items() if m.get("memory") and (d, r) not in sealed]
    return ["Sealed from the gold (memory_sealed):", "", *(f"- {d} / {r}: {seal}" for (d, r), seal in sealed.items()),
            *([f"- not sealed: {', '.join(open_memory)}"] if open_memory else []), ""]


def memory_section(meta_files: Mapping[tuple[str, str], Path], summary: pd.DataFrame | None = None,
                   headlines: Mapping[str, Sequence[str]] | None = None) -> str:
    """The memory systems' section, from every run's metadata file ((dataset, run) -> path, as the rule declares)
    and the summary table (for runs with attributed hits, with the datasets' headline metrics); with no memory
    system, only the list of sealed adapters, if any."""
    metas = {key: json.loads(Path(path).read_text(encoding="utf-8")) for key, path in meta_files.items()}
    memory = {key: m for key, m in metas.items() if m.get("memory")}
    if not memory:
        seals = seal_lines(metas)
        return "\n".join(["## Sealed runs", "", *seals]) if seals else ""
    rows = []
    for (dataset, run), meta in memory.items():
        mem = meta["memory"]
        searches = max(mem["searches"], 1)
        rows.append([dataset, run, mem["ingested"], "shared" if mem["shares_sessions"] else "per haystack",
                     mem["stores"], mem["sessions_ingested"], mem["sessions_reused"], f"{mem['ingest_seconds']:.1f}",
                     _calls(mem, "ingest"), f"{mem['store_bytes'] / 1e6:.1f}", mem["searches"],
                     f"{1000 * mem['search_seconds'] / searches:.1f}", _calls(mem, "search"), _short(mem)])
    header = ["dataset", "run", "ingested", "store", "stores", "sessions ingested", "reused", "ingest s",
              "ingest model calls", "store MB", "searches", "ms / search", "search model calls", "fewer items than k"]
    return "\n".join([
        "## Memory systems (ingest, then search)", "",
        "These runs ingested the session logs into their own store and then answered searches; their hits were "
        "mapped back to the benchmark's items (a derived fact counts for the turns it names). `ingested` says what "
        "text went into each store: a library fed raw messages, as a product would feed it, does not see the "
        "dataset's retrieval units (dates, speakers) that the adapters index. `reused` sessions "
        "were already in a store from an earlier run (ingest time is this run's only). Model calls went through "
        "membench's call cache (see the cost table).", "",
        table(header, rows, numeric=(4, 5, 6, 7, 9, 10, 11)), "",
        *resolved_lines(memory),
        *attributed_lines(summary, headlines or {}),
        *seal_lines(metas),
        "Same k for every system:", "", *same_k_lines(metas), ""])


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"

