"""Adapters: memory systems under test. Each ranks a gold-free haystack for a query."""
