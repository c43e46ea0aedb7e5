"""What one embed job ran on, for its shard manifest: written where torch is loaded anyway (reading torch's code path
and thread count elsewhere would cost the import). `membench.machine.environment.run_environment` gathers them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from membench.embedding import numerics
from membench.machine.environment import machine, model_revision, torch_libraries


def embedding_record(model_path: str | None, numeric_tag: str) -> dict[str, Any]:
    """What one embed job ran on: the model's revision and numeric tag, the machine, and, when this job loaded torch
    (it embedded something), the code path torch took, its thread count and libraries."""
    record: dict[str, Any] = {"model_revision": model_revision(model_path) if model_path and Path(model_path).is_dir()
                              else None, "numeric_tag": numeric_tag, "machine": machine(), "torch": None}
    if "torch" in sys.modules:
        import torch

        record["torch"] = {"numeric_path": numerics.effective(), "threads": torch.get_num_threads(),
                           "libraries": torch_libraries()}
    return record
