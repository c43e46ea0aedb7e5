"""What a workflow job is handed and what decides whether it reruns: the typed hand-off from a rule to its stage
(`job`), code versions and source digests (`provenance`, `source_digests`), the small on-disk caches that keep a
no-op run fast (`disk_cache`, `import_cache`), and the fork server that runs a local run's light jobs without a fresh
interpreter each (`fork_server`, `hand_over`; `helper_process` ties such helpers to their parent)."""
