"""Rule ingest: parsed tables -> gold-free session logs, view tables and scorer-side id maps."""
from pathlib import Path

from membench.logs import log_to
from membench.sessions.ingest import ingest

with log_to(snakemake.log[0]) as log:
    out = Path(snakemake.output.queries).parent.parent
    log.info("ingested %s", ingest(dict(snakemake.input.items()), out, snakemake.params.units))
