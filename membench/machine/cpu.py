"""The CPU a process runs on, read from /proc/cpuinfo without importing torch (which costs seconds).

Why: a vector's last bits depend on which instructions computed it, so the numeric profile that keys the embedding
cache (`membench.embedding.numerics`) and the environment on record (`membench.machine.environment`) both name the CPU's vendor and
its vector extensions.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")

# The flags that decide which kernels numeric libraries can pick (SIMD width, fused multiply-add, matrix units).
VECTOR_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl",
                "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16")


@dataclass(frozen=True)
class Cpu:
    model: str
    vendor: str
    flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def vector_extensions(self) -> list[str]:
        """The CPU's flags among VECTOR_FLAGS, in that order."""
        return [f for f in VECTOR_FLAGS if f in self.flags]


def parse_cpuinfo(text: str) -> Cpu:
    """The first processor's model name, vendor and flags from the text of /proc/cpuinfo."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor's block is enough: every core of one machine reports the same
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return Cpu(fields.get("model name", "unknown"), fields.get("vendor_id", "unknown"),
               frozenset(fields.get("flags", "").split()))


@lru_cache(maxsize=None)
def _read(path: str) -> Cpu:
    try:
        return parse_cpuinfo(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:  # not Linux: name what the platform says, no flags known
        return Cpu(platform.processor() or platform.machine() or "unknown", "unknown")


def this_cpu() -> Cpu:
    """This machine's CPU (read once per process)."""
    return _read(str(CPUINFO))
