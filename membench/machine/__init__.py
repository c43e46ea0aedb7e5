"""The machine a run is on: its CPU and vector extensions, and the environment record in summary.json."""
