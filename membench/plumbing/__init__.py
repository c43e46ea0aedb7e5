"""Workflow plumbing: what the Snakefile asks before any job runs (the plan of runs and datasets), the code
versions and source digests that decide reruns, and the small on-disk caches that keep a no-op run fast."""
