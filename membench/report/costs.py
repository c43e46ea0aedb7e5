"""What the model stages cost: the report's cost table, read from the cost JSON files the stages write
(:func:`membench.llm.stage_calls.write_cost` documents the record).

:func:`cost_table` turns any number of them into the report's Markdown table (one row per stage and
meter-stage, plus a total).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from membench.report.markdown import table

log = logging.getLogger("membench.llm")

__all__ = ["load_costs", "cost_rows", "cost_table"]


def load_costs(paths: Iterable[str | os.PathLike]) -> list[dict]:
    """Read cost JSON files (a missing file is skipped with a warning: the stage did not run)."""
    out = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            log.warning("cost file %s not found; left out of the cost table", p)
            continue
        out.append(json.loads(p.read_text(encoding="utf-8")))
    return out


_ROW_FIELDS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd", "failures",
               "budget_stopped")


def cost_rows(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per (cost file, meter stage): stage, dataset, adapter, model, status and the counters."""
    rows = []
    for rec in records:
        stages = (rec.get("summary") or {}).get("stages") or {}
        if not stages:
            stages = {rec.get("stage", "?"): {}}
        for name, st in stages.items():
            row = {"stage": name, "dataset": rec.get("dataset") or "", "adapter": rec.get("adapter") or "",
                   "model": rec.get("model") or "", "status": rec.get("status") or ""}
            row.update({f: st.get(f, 0) for f in _ROW_FIELDS})
            rows.append(row)
    return pd.DataFrame(rows, columns=["stage", "dataset", "adapter", "model", "status", *_ROW_FIELDS])


def _usd(x: float) -> str:
    return f"${x:,.4f}" if x < 100 else f"${x:,.2f}"


def cost_table(paths_or_records: Iterable[Any]) -> str:
    """Markdown table: one row per stage with calls, cache hits, tokens in/out, money, failures, budget
    stops, status; plus a total row. Accepts cost JSON paths or already-loaded records."""
    items = list(paths_or_records)
    records = [x for x in items if isinstance(x, Mapping)]
    records += load_costs([x for x in items if not isinstance(x, Mapping)])
    df = cost_rows(records)
    if df.empty:
        return "_No model stage has run (the default run makes zero model calls)._\n"
    df = df.sort_values(["dataset", "stage", "adapter"], kind="stable")
    header = ["stage", "dataset", "adapter", "model", "calls", "cache hits", "tokens in", "tokens out", "cost",
              "failures", "budget stops", "status"]
    rows = [[r.stage, r.dataset, r.adapter, r.model, int(r.calls), int(r.cache_hits), int(r.prompt_tokens),
             int(r.completion_tokens), _usd(float(r.cost_usd)), int(r.failures), int(r.budget_stopped), r.status]
            for r in df.itertuples(index=False)]
    rows.append(["**total**", "", "", "", int(df.calls.sum()), int(df.cache_hits.sum()), int(df.prompt_tokens.sum()),
                 int(df.completion_tokens.sum()), _usd(float(df.cost_usd.sum())), int(df.failures.sum()),
                 int(df.budget_stopped.sum()), ""])
    note = ("Calls are paid requests made in that run; cache hits were served from the call cache at no cost. "
            "Money is tokens × the price in config (`llm.prices`), else in the price table bundled with "
            "genai-prices; each cost file's `summary.prices` says which.")
    return table(header, rows, numeric=(4, 5, 6, 7, 8, 9, 10)) + "\n\n" + note + "\n"
