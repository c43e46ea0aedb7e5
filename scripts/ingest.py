"""Rule ingest: parsed tables -> gold-free session logs, view tables and scorer-side id maps."""
from membench.logs import log_to
from membench.sessions.ingest import ingest

with log_to(snakemake.log[0]) as log:
    done = ingest(dict(snakemake.input.items()), dict(snakemake.output.items()), snakemake.params.units)
    log.info("ingested %s", done)
