"""Rule retrieval_log: a LongMemEval run in the benchmark's own retrieval-log format."""
from pathlib import Path

import pandas as pd

from membench.logs import log_to
from membench.scoring.retrieval_log import write_log
from membench.scoring.tables import Gold

with log_to(snakemake.log[0]):
    write_log(pd.read_parquet(snakemake.input.run), Gold.load(dict(snakemake.input.items())),
              pd.read_parquet(snakemake.input.scores), snakemake.wildcards.granularity, Path(snakemake.output.log))
