"""Memory systems under test: libraries that ingest session logs into their own store, then search it."""
