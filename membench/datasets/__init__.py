"""Benchmark parsers: each turns a benchmark's native files into the normalised tables."""
