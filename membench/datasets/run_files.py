"""A run as files: its table's columns, the id maps that turn the gold-free view's opaque ids back into the
benchmark's own, and the TREC run file. One module for the rank stage and the memory systems, so a built-in
adapter's run and a memory system's run are written the same way."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from membench.io import atomic_path

RUN_COLUMNS = {"question_id": "string", "rank": "int64", "item_id": "string", "score": "float64",
               "granularity": "string"}


def id_maps(item_map: Path, query_map: Path) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(granularity -> opaque item id -> benchmark item id, query key -> benchmark question id). A Procedural
    trajectory is named as its session is."""
    items = pd.read_parquet(item_map)
    names = {g: dict(zip(part.opaque_id, part.item_id)) for g, part in items.groupby("granularity")}
    names["trajectory"] = names["session"]
    return names, dict(pd.read_parquet(query_map).itertuples(index=False))


def run_table(rows: list[tuple]) -> pd.DataFrame:
    """Rows of (question_id, rank, item_id, score, granularity) as a run table."""
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS)).astype(RUN_COLUMNS)


def write_trec(run: pd.DataFrame, path: Path, tag: str) -> None:
    """TREC run format: qid Q0 docid rank score tag (one file, granularity folded into the qid if several)."""
    several = run.granularity.nunique() > 1
    columns = zip(*(run[c].tolist() for c in ("question_id", "granularity", "item_id", "rank", "score")))
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(f"{f'{qid}/{gran}' if several else qid} Q0 {item} {rank} {score:.6f} {tag}\n"
                      for qid, gran, item, rank, score in columns)


def read_trec(path: str | Path, granularities: tuple[str, ...] = ()) -> tuple[pd.DataFrame, str | None]:
    """A TREC run file (``qid Q0 docid rank score tag``) as a run table and its tag. A qid ``<question>/<g>`` with
    ``g`` in `granularities` names the granularity too, as the workflow writes a run ranked at several
    (`membench.datasets.run_files.write_trec`); otherwise the granularity column is left empty."""
    rows, tags = [], set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise ValueError(f"{path}:{n}: a TREC run line has 6 fields (qid Q0 docid rank score tag), "
                                 f"got {len(parts)}: {line.strip()!r}")
            qid, _, item, rank, score, tag = parts
            head, sep, tail = qid.rpartition("/")
            qid, granularity = (head, tail) if sep and tail in granularities else (qid, None)
            rows.append((qid, int(rank), item, float(score), granularity))
            tags.add(tag)
    run = pd.DataFrame(rows, columns=list(RUN_COLUMNS)).astype(RUN_COLUMNS)
    return run, (tags.pop() if len(tags) == 1 else None)
