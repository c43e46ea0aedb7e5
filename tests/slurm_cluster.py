"""A throwaway single-node SLURM cluster on 127.0.0.1 for tests: munged, slurmctld and slurmd started directly
(no systemd, no cgroups: proctrack/linuxproc, task/none), all state in one temp folder, stopped on exit.

No accounting database: finished jobs are recorded by jobcomp/filetxt (one line per job in `jobcomp.log`),
which is what a test reads to prove that work ran as SLURM jobs.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol")
PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")  # Debian package names
# Where SLURM clients look when SLURM_CONF is unset: Snakemake's job-step plugin unsets it for the `srun`
# inside each job, so the cluster's config must be found there (a link, removed on stop).
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")


class ClusterUnavailable(RuntimeError):
    """This machine cannot host the throwaway cluster (not a failure of the code under test)."""


def missing_binaries() -> list[str]:
    """The SLURM/munge programs not on PATH (the sbin folders are searched too)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return [b for b in BINARIES if shutil.which(b, path=path) is None]


def install_packages(timeout: float = 900) -> str:
    """apt-get the Debian packages when running as root on a Debian-like system; returns why not otherwise."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "not root or no apt-get, so the Debian packages cannot be installed here"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *PACKAGES]):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            return f"{' '.join(cmd)} failed: {done.stderr[-800:]}"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    """Start with `with SlurmCluster(folder, partitions=("debug", "batch")) as cluster:` (the first partition is
    the default; all hold the one node); `cluster.env` is the environment in which sbatch/squeue (and
    Snakemake's SLURM executor) talk to it."""

    def __init__(self, folder: Path, partitions: tuple[str, ...] = ("batch",), cpus: int | None = None,
                 memory_mb: int = 16000):
        self.folder = Path(folder)
        self.partitions = partitions
        self.cpus = cpus or os.cpu_count() or 1
        self.memory_mb = memory_mb
        self.node = "node1"
        self.conf = self.folder / "slurm.conf"
        self.jobcomp = self.folder / "jobcomp.log"
        self.munge_socket = self.folder / "munge.socket"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self._daemons: list[subprocess.Popen] = []
        self._linked_default_conf = False

    def slurm_conf(self) -> str:
        f = self.folder
        return "\n".join([
            "ClusterName=membench-test",
            f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={self.jobcomp}",
            "SchedulerType=sched/backfill",
            # more CPUs than the machine has (a test's jobs mostly wait on status polls): slurmd takes the count
            *(["SlurmdParameters=config_overrides"] if self.cpus > (os.cpu_count() or 1) else []),
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "MpiDefault=none",
            "ReturnToService=2",
            "MinJobAge=300",
            f"StateSaveLocation={f / 'state'}",
            f"SlurmdSpoolDir={f / 'spool'}",
            f"SlurmctldPidFile={f / 'slurmctld.pid'}",
            f"SlurmdPidFile={f / 'slurmd.pid'}",
            f"SlurmctldLogFile={f / 'slurmctld.log'}",
            f"SlurmdLogFile={f / 'slurmd.log'}",
            f"NodeName={self.node} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 CPUs={self.cpus} "
            f"RealMemory={self.memory_mb} State=UNKNOWN",
            *(f"PartitionName={name} Nodes={self.node} Default={'YES' if i == 0 else 'NO'} MaxTime=INFINITE State=UP"
              for i, name in enumerate(self.partitions)),
            "",
        ])

    def _start(self, *cmd: str) -> None:
        log = open(self.folder / f"{Path(cmd[0]).name}.out", "ab")
        self._daemons.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                              start_new_session=True))

    def start(self, timeout: float = 60) -> None:
        for sub in ("state", "spool"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(self.slurm_conf(), encoding="utf-8")
        if DEFAULT_CONF.exists() or DEFAULT_CONF.is_symlink():
            raise ClusterUnavailable(f"{DEFAULT_CONF} already exists (a real SLURM setup?); the test cluster "
                                     "needs that path for the srun inside each job and leaves it alone")
        DEFAULT_CONF.parent.mkdir(parents=True, exist_ok=True)
        DEFAULT_CONF.symlink_to(self.conf)
        self._linked_default_conf = True
        key = self.folder / "munge.key"  # a key of its own: nothing depends on the system's munge setup
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(1024))
        os.close(fd)
        self._start("munged", "--foreground", "--force", f"--socket={self.munge_socket}",
                    f"--key-file={key}", f"--pid-file={self.folder / 'munged.pid'}",
                    f"--log-file={self.folder / 'munged.log'}", f"--seed-file={self.folder / 'munged.seed'}")
        self._wait(lambda: self.munge_socket.exists(), timeout, "munged did not create its socket")
        self._start("slurmctld", "-D", "-c", "-i", "-f", str(self.conf))
        self._start("slurmd", "-D", "-N", self.node, "-f", str(self.conf))
        self._wait(self._node_idle, timeout, "the node did not become idle")

    def _node_idle(self) -> bool:
        done = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env, capture_output=True, text=True)
        return done.returncode == 0 and set(done.stdout.split()) == {"idle"}

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [p.args[0] for p in self._daemons if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"{what} (exited: {dead}); logs:\n{self.logs()}")
            time.sleep(0.5)

    def logs(self) -> str:
        parts = []
        for name in ("munged.out", "munged.log", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"):
            path = self.folder / name
            if path.exists():
                parts.append(f"--- {name}\n" + path.read_text(errors="replace")[-3000:])
        return "\n".join(parts)

    def completed_jobs(self) -> list[dict[str, str]]:
        """One dict per finished job from the jobcomp/filetxt log (JobId, JobName, JobState, Partition, ...)."""
        if not self.jobcomp.exists():
            return []
        jobs = []
        for line in self.jobcomp.read_text().splitlines():
            fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
            if fields:
                jobs.append(fields)
        return jobs

    def pids(self) -> list[int]:
        return [p.pid for p in self._daemons]

    def stop(self) -> None:
        """Stop the daemons this object started (slurmd first, munged last), waiting for each to exit."""
        for proc in reversed(self._daemons):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._daemons.clear()
        if self._linked_default_conf:
            DEFAULT_CONF.unlink(missing_ok=True)
            self._linked_default_conf = False

    def __enter__(self) -> "SlurmCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
