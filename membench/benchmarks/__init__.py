"""One record per benchmark kind (`record.Benchmark`), one module per built-in benchmark defining it, and the
registry (`registry.benchmark(kind)`) that the rules, stages, plan and report read instead of per-kind tables."""
