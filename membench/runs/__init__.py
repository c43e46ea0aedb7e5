"""The run registry: which systems a run can name, what each run needs, the (dataset, run) plan, and one run request."""
