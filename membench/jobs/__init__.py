"""What a workflow job is handed and what decides whether it reruns: the typed hand-off from a rule to its stage
(`job`), code versions and source digests (`provenance`, `source_digests`), and the small on-disk caches that keep a
no-op run fast (`disk_cache`, `import_cache`)."""
