"""The pinned numeric profile: which variables it sets, the cache tag that keys vectors by it, the loud failure when
torch runs another path, and the fixed-order cosine that turns the same vectors into the same scores anywhere."""

from __future__ import annotations

import numpy as np
import pytest

from membench.embedding import numerics
from membench.machine.cpu import Cpu, parse_cpuinfo, this_cpu
from membench.embedding.cache import EmbeddingCache
from membench.embedding.similarity import as_columns, cosine_scores

INTEL = Cpu("Intel(R) Xeon(R) CPU @ 2.20GHz", "GenuineIntel", frozenset({"sse4_2", "avx", "avx2", "fma"}))
AMD = Cpu("AMD EPYC", "AuthenticAMD", frozenset({"avx2", "fma", "avx512f"}))
OLD = Cpu("Intel(R) Core(TM)2 Duo", "GenuineIntel", frozenset({"sse4_1"}))

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz
flags\t\t: fpu sse4_2 avx avx2 fma avx512f

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: something else
flags\t\t: fpu
"""


def test_cpuinfo_gives_the_first_processors_model_vendor_and_vector_extensions():
    cpu = parse_cpuinfo(CPUINFO)
    assert (cpu.model, cpu.vendor) == ("Intel(R) Xeon(R) CPU @ 2.20GHz", "GenuineIntel")
    assert cpu.vector_extensions == ["sse4_2", "avx", "avx2", "fma", "avx512f"]  # "fpu" is not a vector extension
    assert parse_cpuinfo("") == Cpu("unknown", "unknown")


def test_pin_environment_sets_only_what_is_unset():
    environ = {"MKL_CBWR": "COMPATIBLE"}
    numerics.pin_environment(environ)
    assert environ == {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def test_profile_names_the_vendor_when_pinned_and_everything_when_not():
    pinned = dict(numerics.PINNED)
    assert numerics.profile_name(pinned, INTEL) == "pinned-avx2/GenuineIntel"
    assert numerics.profile_name(pinned, AMD) == "pinned-avx2/AuthenticAMD"
    assert numerics.profile_name({**pinned, "MKL_CBWR": "avx2, strict"}, INTEL) == "pinned-avx2/GenuineIntel"
    assert numerics.profile_name({**pinned, "MKL_CBWR": "COMPATIBLE"}, INTEL) == (
        "unpinned/Intel(R) Xeon(R) CPU @ 2.20GHz/ATEN_CPU_CAPABILITY=avx2,MKL_CBWR=COMPATIBLE,ONEDNN_MAX_CPU_ISA=AVX2")
    assert numerics.profile_name(pinned, OLD).startswith("unpinned/Intel(R) Core(TM)2 Duo/")  # no AVX2 to pin to
    assert numerics.profile_name({}, INTEL).endswith("/ATEN_CPU_CAPABILITY=,MKL_CBWR=,ONEDNN_MAX_CPU_ISA=")


def test_cache_tag_keys_torch_cpu_vectors_by_versions_and_profile_only():
    pinned = dict(numerics.PINNED)
    tag = numerics.cache_tag("torch", "cpu", pinned, AMD)
    assert tag.startswith("torch-") and ",transformers-" in tag and tag.endswith("/pinned-avx2/AuthenticAMD")
    assert numerics.cache_tag("onnx", "cpu", pinned, AMD) == "" and numerics.cache_tag("torch", "cuda", pinned, AMD) == ""
    keys = {tag: EmbeddingCache(None, model_id="m", numeric_tag=tag).key("a text")
            for tag in ("", numerics.cache_tag("torch", "cpu", pinned, AMD), numerics.cache_tag("torch", "cpu", pinned, INTEL),
                        numerics.cache_tag("torch", "cpu", {}, AMD))}
    assert len(set(keys.values())) == 4  # unpinned and each vendor's pinned vectors never share a key


def test_this_process_keys_by_the_pinned_profile():
    """Importing membench.embedding.encoder (here through membench.embedding.cache) pins the variables; the tests run under them."""
    cache = EmbeddingCache(None)
    expected = "pinned-avx2/" if numerics.NEEDS <= this_cpu().flags else "unpinned/"
    assert expected in cache.numeric_tag


def test_a_process_that_promises_the_pinned_path_but_runs_another_fails_loudly(monkeypatch):
    monkeypatch.setattr(numerics, "effective", lambda: {"aten": "AVX512", "mkl_cbwr": "OFF", "onednn_max_isa": None})
    with pytest.raises(numerics.NumericProfileError, match="torch runs its AVX512 kernels, not AVX2; MKL runs in mode OFF"):
        numerics.check(dict(numerics.PINNED), AMD)
    assert numerics.check({}, AMD)["aten"] == "AVX512"  # unpinned: keyed as such, nothing promised, no error
    monkeypatch.setattr(numerics, "effective", lambda: {"aten": "AVX2", "mkl_cbwr": "AUTO,STRICT", "onednn_max_isa": "AVX2"})
    assert numerics.check(dict(numerics.PINNED), AMD)["mkl_cbwr"] == "AUTO,STRICT"


# -- the fixed-order cosine --------------------------------------------------------------------------------

def test_cosine_scores_by_hand():
    columns = as_columns(np.array([[0.5, 0.5], [1.0, 0.0], [0.0, -0.25]], dtype=np.float32))
    assert columns.dtype == np.float64 and columns.shape == (2, 3)
    assert cosine_scores(columns, np.array([0.5, -0.25], dtype=np.float32)).tolist() == [0.125, 0.5, 0.0625]
    assert cosine_scores(as_columns(np.zeros((0, 2), dtype=np.float32)), np.ones(2)).shape == (0,)


def test_cosine_sums_left_to_right_in_float64():
    """Products 2^53, 1, -2^53 (each exact from float32 factors): first to last, 2^53 + 1 rounds back to 2^53 and
    the sum is 0; any other order (pairwise, SIMD lanes, BLAS) could give 1. The order is the contract."""
    doc = np.array([[2.0 ** 27, 1.0, -(2.0 ** 27)]], dtype=np.float32)
    query = np.array([2.0 ** 26, 1.0, 2.0 ** 26], dtype=np.float32)
    assert cosine_scores(as_columns(doc), query).tolist() == [0.0]


def test_cosine_equals_a_plain_python_sum_bit_for_bit():
    rng = np.random.default_rng(7)
    docs = rng.standard_normal((40, 384)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    query = docs[3]
    expected = []
    for row in docs.tolist():
        total = 0.0
        for a, b in zip(row, query.tolist()):
            total += a * b
        expected.append(total)
    assert cosine_scores(as_columns(docs), query).tolist() == expected
