"""One process per local run that has imported the light rules' modules once and forks a child for each job.

`membench.jobs.hand_over` is the job's side and says why. This is the server: `python -P -m
membench.jobs.fork_server SOCKET MODULE...` imports the modules, listens on a Unix socket in a private folder
(mode 0700: only this user can hand it a script), and for each job forks a child that takes the job's standard
streams, working directory, environment, umask and argv and runs its script as `__main__`. The server is one
thread, so a fork never copies a lock some other thread held; it reaps children on SIGCHLD and sends each job
its child's exit status, peak memory and CPU seconds (`membench.jobs.forked_usage`). A job whose process
disappears (Snakemake killed it) gets its child terminated.

It imports no model library (torch, an LLM client): a child that needs one imports it itself, after the fork.
`ForkServer` starts and stops it for the workflow (workflow/rules/common.smk); it dies with Snakemake.
"""

from __future__ import annotations

import ast
import atexit
import importlib
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from membench.jobs import hand_over
from membench.jobs.helper_process import die_with_parent, end

JOURNAL = "MEMBENCH_FORK_SERVER_JOURNAL"  # a file to append "pid<TAB>script<TAB>status" to per job (tests, debugging)
# Set by Snakemake for every job to its `threads:` (1 for each light rule). OpenBLAS and friends read them once, at
# import, and the thread count changes how a sum is split, so a float's last bit: the server imports under the
# values a job gets, and a job whose values differ runs in its own process.
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
NEVER_PRELOADED = ("torch", "sentence_transformers", "openai")  # threads and state a fork must not copy


PREAMBLE = ("snakemake.iocontainers", "snakemake.logging")  # what Snakemake's script preamble imports


def hands_over(script: Path) -> bool:
    """Whether a rule script calls `hand_over()` (its rule's jobs go to the fork server in a local run)."""
    body = ast.parse(script.read_text(encoding="utf-8")).body
    return any(ast.unparse(node) == "hand_over()" for node in body if isinstance(node, ast.Expr))


def forked_rules(scripts: Path) -> list[str]:
    """The rules whose scripts hand over (a script is named after its rule)."""
    return sorted(script.stem for script in scripts.glob("*.py") if hands_over(script))


def forked_modules(scripts: Path) -> list[str]:
    """What the server preloads: the modules imported by the rule scripts that hand over (call `hand_over()`), and
    the preamble's. The scripts are the one list of which rules are forked."""
    modules = set(PREAMBLE)
    for rule in forked_rules(scripts):
        for node in ast.parse((scripts / f"{rule}.py").read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module:  # `from X import y`: X.y if y is a module
                modules.update(f"{node.module}.{alias.name}" if (scripts.parent / node.module.replace(".", "/") /
                               f"{alias.name}.py").is_file() else node.module for alias in node.names)
            elif isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
    return sorted(modules)


def preload(modules: list[str]) -> None:
    """Import what the light jobs import; refuse a module that brings in a model library."""
    for name in modules:
        importlib.import_module(name)
    loaded = [name for name in NEVER_PRELOADED if name in sys.modules]
    if loaded:
        raise RuntimeError(f"fork server: preloading {', '.join(modules)} imported {', '.join(loaded)}")


def run_script(argv: list[str]) -> int:
    """The child's work: the job's script as `__main__`; its exit status, as `python script` would give."""
    try:
        runpy.run_path(argv[0], run_name="__main__")
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 (reported as the interpreter would, then the status says it failed)
        traceback.print_exc()
        status = 1
    try:
        atexit._run_exitfuncs()  # what the script registered (the server's own handlers were cleared at fork)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    return status


def become_job(job: dict, fds: list[int], inherited: list[socket.socket]) -> None:
    """In the child: drop the server's sockets and handlers and take on the job's streams and surroundings."""
    for sock in inherited:
        sock.close()
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    atexit._clear()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    os.umask(job["umask"])
    tempfile.tempdir = None  # found again from the job's TMPDIR
    sys.argv = list(job["argv"])
    hand_over._in_child = True


class Server:
    """The accept/fork/reap loop."""

    def __init__(self, path: Path):
        self.path = path
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(str(path) + ".new")
        self.listener.listen(64)
        os.rename(str(path) + ".new", path)  # a job finds the socket only once it accepts
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_r.setblocking(False)
        self.wake_w.setblocking(False)
        signal.set_wakeup_fd(self.wake_w.fileno())
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "signal")
        self.running: dict[int, tuple[socket.socket, str]] = {}  # child pid -> its job's connection and script
        self.journal = os.environ.get(JOURNAL)
        self.origin = str(Path(sys.modules["membench"].__file__))

    def serve_forever(self) -> None:
        while True:
            for key, _ in self.selector.select():
                if key.data == "accept":
                    conn, _ = self.listener.accept()
                    self.selector.register(conn, selectors.EVENT_READ, "request")
                elif key.data == "signal":
                    self.wake_r.recv(512)
                    self.reap()
                elif key.data == "request":
                    self.start(key.fileobj)
                else:  # a running job's connection: readable only when its process is gone
                    self.orphaned(key.fileobj, key.data)

    def start(self, conn: socket.socket) -> None:
        """Fork a child for the job that sent this request, or refuse it (the job then runs in its own process)."""
        self.selector.unregister(conn)
        fds: list[int] = []
        try:
            message, fds, flags, _ = socket.recv_fds(conn, 1 << 20, 3)
            job = self.acceptable(message, fds, flags)
            if job is None:
                conn.sendall(json.dumps({"refused": "another membench, other thread counts or a bad request"}).encode())
                conn.close()
                return
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    become_job(job, fds, [self.listener, self.wake_r, self.wake_w, conn,
                                           *(c for c, _ in self.running.values())])
                    fds = []
                    status = run_script(job["argv"])
                finally:
                    os._exit(status)
            self.running[pid] = conn, job["argv"][0]
            self.selector.register(conn, selectors.EVENT_READ, pid)
            conn.sendall(json.dumps({"pid": pid}).encode())
        except OSError:  # the job went away while asking: a child started for it is ended by `orphaned`
            if conn.fileno() >= 0 and conn not in (c for c, _ in self.running.values()):
                conn.close()
        finally:
            for fd in fds:
                os.close(fd)

    def acceptable(self, message: bytes, fds: list[int], flags: int) -> dict | None:
        """The job's request, if this server can run it as the job would run itself."""
        if not message or flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(fds) != 3:
            return None
        try:
            job = json.loads(message)
        except ValueError:
            return None
        if not isinstance(job, dict) or not isinstance(job.get("env"), dict) or not job.get("argv"):
            return None
        if job.get("membench") != self.origin or job.get("python") != hand_over.interpreter():
            return None
        if any(job["env"].get(var) != os.environ.get(var) for var in THREAD_VARS):
            return None
        return job

    def orphaned(self, conn: socket.socket, pid: int) -> None:
        """The job's process closed its end (Snakemake killed it): its child goes too."""
        try:
            gone = not conn.recv(16)
        except OSError:
            gone = True
        if gone:
            self.selector.unregister(conn)
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def reap(self) -> None:
        while self.running:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                return
            if pid not in self.running:
                continue
            conn, script = self.running.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            code = code if code >= 0 else 128 - code
            if self.journal:
                with open(self.journal, "a", encoding="utf-8") as fh:
                    fh.write(f"{pid}\t{script}\t{code}\n")
            try:
                self.selector.unregister(conn)
            except KeyError:
                pass  # its job is gone already
            try:
                conn.sendall(json.dumps({"status": code, "max_rss_kib": usage.ru_maxrss,  # Linux: KiB
                                         "cpu_s": usage.ru_utime + usage.ru_stime}).encode())
            except OSError:
                pass
            conn.close()

    def stop(self, *_: object) -> None:
        for pid in list(self.running):
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        shutil.rmtree(self.path.parent, ignore_errors=True)
        os._exit(0)


def main(argv: list[str]) -> None:
    path, modules = Path(argv[0]), argv[1:]
    preload(modules)
    server = Server(path)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, server.stop)
    server.serve_forever()


class ForkServer:
    """The workflow's handle on its server: started by `onstart` when jobs run locally, stopped at the end."""

    def __init__(self, scripts: Path):
        self.scripts = scripts  # the rule scripts: those that hand over name what to preload (`forked_modules`)
        self.process: subprocess.Popen | None = None
        self.folder: Path | None = None

    def start(self) -> None:
        """Start the server and tell the jobs (through the environment they inherit) where it listens."""
        self.folder = Path(tempfile.mkdtemp(prefix="membench-fork-"))  # 0700, and short enough for a socket path
        socket_path = self.folder / "socket"
        self.process = subprocess.Popen([sys.executable, "-P", "-m", "membench.jobs.fork_server", str(socket_path),
                                         *forked_modules(self.scripts)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        env={**os.environ, **dict.fromkeys(THREAD_VARS, "1")}, preexec_fn=die_with_parent)
        os.environ[hand_over.ENV] = f"{self.process.pid}:{socket_path}"

    def stop(self) -> None:
        os.environ.pop(hand_over.ENV, None)
        end(self.process)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
