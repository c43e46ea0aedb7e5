"""Session logs: gold-free, content-addressed event logs that adapters read the past from."""
