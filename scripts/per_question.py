"""Rule per_question: a dataset's score files -> one wide per-question table, as Parquet and CSV."""
from pathlib import Path

from membench.logs import log_to
from membench.report.artifacts import per_question_frame, write_per_question

with log_to(snakemake.log[0]):
    files: dict[str, list[Path]] = {}
    for adapter, path in zip(snakemake.params.adapters, snakemake.input.scores):
        files.setdefault(adapter, []).append(Path(path))
    write_per_question(per_question_frame(files), Path(snakemake.output.parquet), Path(snakemake.output.csv),
                       snakemake.params.subset)
