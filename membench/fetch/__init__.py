"""Getting a benchmark's files: checksum-verified downloads with retries, and safe archive extraction."""
