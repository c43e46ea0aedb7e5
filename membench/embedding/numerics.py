"""The numeric profile torch embeds under, pinned so a text's vector is the same bits whatever its batch, the thread
count, or which job computed it.

Why: with the libraries' defaults, MiniLM's vectors change in their last bits with the thread count (1 vs 2 threads
differ by up to 1.8e-7 on the AMD EPYC of bench/RESULTS.md) and, on Intel CPUs, with the other texts of a batch;
the embedding cache keeps the first vector written for a text, so a ranking could depend on which run filled it.
Three environment variables fix the code path. torch, MKL and oneDNN read them when they first run, so they must be
set before torch computes anything (safest: before it is imported):

  ATEN_CPU_CAPABILITY=avx2   torch's own kernels (layer norm, softmax, pooling) run their AVX2 versions
  MKL_CBWR=AVX2,STRICT       MKL's conditional numerical reproducibility (the matrix products): the AVX2 branch,
                             strict mode, whose results do not depend on the thread count
  ONEDNN_MAX_CPU_ISA=AVX2    oneDNN (the GELU) generates AVX2 code at most

`pin_environment()` sets each unless already set (`membench.embedding.encoder` calls it on import, the workflow for every
job); `check()` confirms, once torch is loaded, that they took effect.

The embedding cache key names the profile (`cache_tag`): the torch and transformers versions, `pinned-avx2` and the
CPU vendor. MKL documents a branch as giving the same results on every Intel CPU that supports it; on other vendors
it ignores the branch asked for and picks its own (an AMD EPYC reports AUTO,STRICT), so each vendor keys its own
vectors. A process whose variables say otherwise, or a CPU without AVX2 and FMA, gets an `unpinned` tag naming the
CPU model and the variables: its vectors never mix with pinned ones. ONNX Runtime and CUDA vectors keep their own
keys (`membench.embedding.cache.model_key`) and are outside this profile.
"""

from __future__ import annotations

import ctypes
import logging
import os
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Mapping, MutableMapping

from membench.machine.cpu import Cpu, this_cpu

log = logging.getLogger(__name__)
PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"}
NEEDS = frozenset({"avx2", "fma"})  # what ATen's AVX2 kernels and MKL's AVX2 branch run on

# mkl_cbwr_get's codes (mkl_service.h): the branch, plus 0x10000 for strict mode.
MKL_BRANCHES = {0: "UNSET", 1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2",
                9: "AVX", 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}
MKL_STRICT = 0x10000


class NumericProfileError(RuntimeError):
    """torch did not take the pinned numeric path the cache key promises."""


def pin_environment(environ: MutableMapping[str, str] | None = None) -> None:
    """Set the pinned variables that are not set yet (a value the user set wins, and is keyed as unpinned)."""
    environ = os.environ if environ is None else environ
    for name, value in PINNED.items():
        environ.setdefault(name, value)


def is_pinned(environ: Mapping[str, str] | None = None, cpu: Cpu | None = None) -> bool:
    """Whether the variables hold the pinned values and the CPU can run that path."""
    environ = os.environ if environ is None else environ
    cpu = cpu or this_cpu()
    same = all(environ.get(k, "").replace(" ", "").upper() == v.upper() for k, v in PINNED.items())
    return same and NEEDS <= cpu.flags


def profile_name(environ: Mapping[str, str] | None = None, cpu: Cpu | None = None) -> str:
    """`pinned-avx2/<vendor>`, or `unpinned/<cpu model>/<the three variables>`."""
    environ = os.environ if environ is None else environ
    cpu = cpu or this_cpu()
    if is_pinned(environ, cpu):
        return f"pinned-avx2/{cpu.vendor}"
    return f"unpinned/{cpu.model}/" + ",".join(f"{k}={environ.get(k, '')}" for k in PINNED)


@lru_cache(maxsize=None)
def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "none"


def cache_tag(backend: str = "torch", device: str = "cpu", environ: Mapping[str, str] | None = None,
              cpu: Cpu | None = None, precision: str = "float32") -> str:
    """What a torch CPU vector's bits depend on besides the model and the text, for the cache key; "" for the ONNX
    and GPU backends, which are keyed by `model_key` as before. A float64 vector rounded to float32 depends on the
    library versions only (`membench.embedding.encoder`), so its tag names no profile and no CPU."""
    if backend != "torch" or device != "cpu":
        return ""
    versions = f"torch-{_version('torch')},transformers-{_version('transformers')}"
    if precision == "float64":
        return f"{versions}/float64"
    return f"{versions}/{profile_name(environ, cpu)}"


def mkl_mode() -> str | None:
    """MKL's effective reproducibility mode in this process (e.g. `AVX2,STRICT`), read from the MKL inside torch;
    None when torch has no MKL. Loads torch's library, so call it where torch is loaded anyway."""
    import torch

    try:
        lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        get = lib.mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    code = get(-1)  # MKL_CBWR_ALL: the branch and the strict bit
    branch = MKL_BRANCHES.get(code & 0xFFFF, str(code & 0xFFFF))
    return branch + (",STRICT" if code & MKL_STRICT else "")


def effective() -> dict[str, str | None]:
    """The code path torch runs in this process: its kernels' capability, MKL's mode, oneDNN's ISA cap."""
    import torch

    return {"aten": torch.backends.cpu.get_cpu_capability(), "mkl_cbwr": mkl_mode(),
            "onednn_max_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")}


def check(environ: Mapping[str, str] | None = None, cpu: Cpu | None = None) -> dict[str, str | None]:
    """Fail loudly when this process promises the pinned profile but torch runs another path (torch computed
    something before the variables were set); returns the effective path."""
    found = effective()
    if not is_pinned(environ, cpu):
        log.warning("embedding under an unpinned numeric profile (%s): vectors may change with the thread count, "
                    "the batch and the CPU, and are cached under their own key", profile_name(environ, cpu))
        return found
    wrong = []
    if found["aten"] != "AVX2":
        wrong.append(f"torch runs its {found['aten']} kernels, not AVX2")
    mode = found["mkl_cbwr"]
    if mode is not None and (not mode.endswith(",STRICT") or mode.startswith("OFF")):
        wrong.append(f"MKL runs in mode {mode}, not a strict reproducible branch")
    if wrong:
        raise NumericProfileError(
            "the embedding cache key promises the pinned numeric profile (" + ", ".join(
                f"{k}={v}" for k, v in PINNED.items()) + "), but " + "; ".join(wrong) + ". torch read these variables "
            "before they were set: import membench.embedding.encoder, or set them in the environment, before using torch.")
    return found
