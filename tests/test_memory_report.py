"""The report's memory-system section: what each store ingested, its cost, and the same-k check."""

from __future__ import annotations

import json

from membench.report.memory import memory_section

MEM0 = {"depth": 100, "memory": {
    "ingested": "raw messages", "shares_sessions": True, "stores": 1, "sessions_ingested": 272,
    "sessions_reused": 0, "ingest_seconds": 61.25, "store_bytes": 12_500_000, "searches": 3972,
    "search_seconds": 39.72, "short_searches": {"turn": 3}, "fewest_items_share": {"turn": 0.25},
    "model_calls": {"memory-ingest": {"calls": 0, "cache_hits": 0}, "memory-search": {"calls": 0, "cache_hits": 0}}}}


def _metas(root, runs):
    """(dataset, run) -> its metadata file, as the report rule declares them."""
    return {(d, a): root / d / "runs" / f"{a}.json" for d, a in runs}


def test_memory_section_says_what_was_ingested_and_flags_short_searches(tmp_path):
    runs = tmp_path / "locomo" / "runs"
    runs.mkdir(parents=True)
    (runs / "mem0.json").write_text(json.dumps(MEM0), encoding="utf-8")
    (runs / "bm25.json").write_text(json.dumps({"depth": 100}), encoding="utf-8")
    (runs / "dense.json").write_text(json.dumps({"depth": 50}), encoding="utf-8")
    section = memory_section(_metas(tmp_path, [("locomo", "mem0"), ("locomo", "bm25")]))
    # 39.72 s / 3,972 searches = 10.0 ms; 12.5 MB; 3 turn searches short, the shortest 25% of k
    assert ("| locomo | mem0 | raw messages | shared | 1 | 272 | 0 | 61.2 | 0 (0 cached) | 12.5 | 3,972 | 10.0 "
            "| 0 (0 cached) | ⚠ turn: 3 (fewest 25% of k) |") in section
    assert "- locomo: all 2 runs were asked for k = 100." in section
    section = memory_section(_metas(tmp_path, [("locomo", "mem0"), ("locomo", "dense")]))
    assert "- locomo: ⚠ runs were asked for different k: k = 100: mem0; k = 50: dense" in section
    assert memory_section(_metas(tmp_path, [("locomo", "bm25")])) == ""


def test_memory_section_shows_how_an_mcp_servers_results_were_mapped_back(tmp_path):
    runs = tmp_path / "locomo" / "runs"
    runs.mkdir(parents=True)
    stats = {"results": 2000, "by id": 1500, "by text": 490, "unresolved": 10, "resolved_share": 0.995}
    (runs / "mcp.json").write_text(json.dumps({**MEM0, "memory": {**MEM0["memory"], "system": stats}}))
    (runs / "mem0.json").write_text(json.dumps({**MEM0, "memory": {**MEM0["memory"], "system": {}}}))
    section = memory_section(_metas(tmp_path, [("locomo", "mcp"), ("locomo", "mem0")]))
    assert ("- locomo / mcp: 99.5% of 2,000 results mapped back to turns (by id 1,500, by exact text 490; 10 matched "
            "nothing and were dropped)") in section
    assert "locomo / mem0" not in section


def test_memory_section_shows_attributed_results_and_the_run_scored_without_them(tmp_path):
    import pandas as pd

    runs = tmp_path / "locomo" / "runs"
    runs.mkdir(parents=True)
    stats = {"results": 2000, "by id": 0, "by text": 0, "unresolved": 2000, "resolved_share": 0.0}
    attribution = {"rule": {"threshold": 0.5}, "hits_attributed": 1960, "hits_dropped": 40}
    (runs / "notes.json").write_text(json.dumps({**MEM0, "memory": {**MEM0["memory"], "system": stats,
                                                                    "attribution": attribution}}))
    audit = {"hits": 1990, "hits_without_text": 10, "refs_withheld": 3980, "refs_attributed": 2400, "refs_shared": 1800,
             "precision": 0.75, "recall": 0.4523}
    (runs / "mem0.json").write_text(json.dumps({**MEM0, "memory": {**MEM0["memory"], "attribution": {
        **attribution, "against_withheld_refs": audit}}}))
    rows = [("notes", "evidence_recall@10", 0.4125), ("notes", "unattributed:evidence_recall@10", 0.0),
            ("mem0", "evidence_recall@10", 0.5), ("notes", "evidence_recall@5", 0.3)]
    summary = pd.DataFrame([{"dataset": "locomo", "adapter": a, "split": "all", "group_by": "all", "group": "all",
                             "metric": m, "mean": v} for a, m, v in rows]
                           + [{"dataset": "locomo", "adapter": "notes", "split": "all", "group_by": "category",
                               "group": "1", "metric": "unattributed:evidence_recall@10", "mean": 0.9}])
    section = memory_section(_metas(tmp_path, [("locomo", "notes"), ("locomo", "mem0")]), summary,
                             {"locomo": ("evidence_recall@10", "evidence_recall@5")})
    assert ("- locomo / notes: 0.0% of 2,000 results mapped back to turns (by id 0, by exact text 0; 2,000 matched "
            "neither: 1,960 attributed to turns, 40 dropped)") in section
    assert "- locomo / mem0: 2,000 results named no turn: 1,960 attributed to turns, 40 dropped" in section
    assert ("  - refs withheld (`refs: withheld`), so every result was attributed by its text; against the 3,980 refs "
            "the system returned with its 1,990 results: precision 0.750, recall 0.452") in section
    assert section.count("refs withheld") == 1  # notes withheld nothing
    assert "- locomo / notes: evidence_recall@10 0.412 with, 0.000 without" in section  # @5 has no "without"
    assert section.count(" with, ") == 1
