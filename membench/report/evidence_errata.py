"""The report's evidence errata section: where `errata.evidence: apply` corrected evidence labels, every headline
figure the corrections move, as published and as corrected, and each correction with its source."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.report.markdown import table


@dataclass(frozen=True)
class EvidenceErrataFiles:
    """A dataset's evidence errata table and, per run, its scores on the corrected and on the published evidence."""

    table: Path
    scores: Mapping[str, tuple[Path, Path]]  # run -> (corrected, as published)


def evidence_errata_section(dataset: str, record: Benchmark, files: EvidenceErrataFiles) -> str:
    """Empty unless the dataset's evidence errata were applied (its `evidence_errata` table has rows)."""
    errata = pd.read_parquet(files.table) if files.table.exists() else pd.DataFrame()
    if errata.empty:
        return ""
    changed = set(errata.question_id)
    figures = [row for adapter, paths in files.scores.items()
               for row in _moved(adapter, record.headlines, paths, changed)]
    parts = [f"#### Evidence errata — {dataset}", "",
             f"{errata.erratum.nunique()} known wrong evidence labels were corrected (`errata.evidence: apply`), so "
             "the figures above are scored on the corrected evidence. "
             + ("Each headline figure the corrections move, both ways (means over the scored questions):"
                if figures else "They move no headline figure."), ""]
    if figures:
        parts += [table(["run", "metric", "as published", "corrected", "change", "questions moved"], figures,
                        numeric=(2, 3, 4, 5)), ""]
    parts += ["Corrections applied (the dataset's normalisations list them too):", "",
              table(["erratum", "question", "evidence as published", "corrected", "source"],
                    [_correction(group, record.granularities) for _, group in errata.groupby("erratum", sort=False)],
                    numeric=()), ""]
    return "\n".join(parts)


def _moved(adapter: str, metrics: tuple[str, ...], paths: tuple[Path, Path], changed: set[str]) -> list[list]:
    """[run, metric, as published, corrected, change, questions moved] for each metric the corrections move."""
    corrected = pd.read_parquet(paths[0])
    published_rows = pd.read_parquet(paths[1])
    published = pd.concat([corrected[~corrected.question_id.isin(changed)], published_rows], ignore_index=True)
    rows = []
    for metric in metrics:
        after, before = _values(corrected, metric), _values(published, metric)
        if after.empty and before.empty:
            continue
        a, b = after.reindex(sorted(changed)), before.reindex(sorted(changed))
        moved = int(((a != b) & ~(a.isna() & b.isna())).sum())
        if after.mean() != before.mean():
            rows.append([adapter, metric, float(before.mean()), float(after.mean()),
                         f"{after.mean() - before.mean():+.4f}", moved])
    return rows


def _values(scores: pd.DataFrame, metric: str) -> pd.Series:
    """A metric's values by question, over the questions scored (not skipped)."""
    rows = scores[(scores.metric == metric) & scores.skip.isna()]
    return rows.set_index("question_id").value


def _correction(rows: pd.DataFrame, granularities: tuple[str, ...]) -> list[str]:
    """[erratum, question, evidence as published, corrected, source], at the coarsest granularity it changed."""
    def items(side: str, granularity: str) -> list[str]:
        return list(rows[(rows.evidence == side) & (rows.granularity == granularity)].item_id)

    granularity = next((g for g in granularities if sorted(items("published", g)) != sorted(items("corrected", g))),
                       granularities[0])
    first = rows.iloc[0]
    return [first.erratum, first.question_id, ", ".join(items("published", granularity)),
            ", ".join(items("corrected", granularity)), first.source]
