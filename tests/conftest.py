"""Shared fixtures: the real benchmark copies in ../shared/data, parsed once per test session."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One pytest-xdist worker per core, so a worker's own torch/BLAS work gets one thread, as each workflow job
    # does (Snakemake sets these per job). At torch's default of a thread per core, OpenMP threads spin against
    # the other worker (the tests' summed CPU time fell by about 220 s, from 960 s, when this was set).
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")

from membench.embedding.numerics import pin_environment  # noqa: E402

pin_environment()  # before any test module can load torch: tests embed on the pinned profile, as workflow jobs do

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("MEMBENCH_SHARED_DATA", REPO.parent / "shared" / "data"))


# The modules that take longest (end-to-end runs, real embedding), longest first. With `-n auto --dist loadfile
# --no-loadscope-reorder` (pyproject.toml) they go out to the workers first and the many short modules fill in
# around them, so no long module starts last and keeps one core busy alone. test_slurm.py leads: it mostly
# waits on the cluster's status polls, which leaves its core to the worker beside it. The local model's modules
# come next: mem0's extraction prompt alone (8,700 tokens) keeps one core busy for minutes.
LONGEST_FIRST = ("test_slurm.py", "test_local_model_memory.py", "test_workflow.py", "test_explorer.py",
                 "test_same_figures.py", "test_workflow_models.py", "test_memory_mem0.py", "test_memory_mcp.py",
                 "test_local_model.py", "test_subset_run.py", "test_memory_libraries.py", "test_portable_vectors.py",
                 "test_embed_stage.py", "test_api.py", "test_gold_permutation.py", "test_onnx_backend.py")


def pytest_collection_modifyitems(items):
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data; skip when absent, or fail when MEMBENCH_REQUIRE_DATA=1 (CI)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        reason = f"real benchmark data not found at {path} (set MEMBENCH_SHARED_DATA or place ../shared/data)"
        if os.environ.get("MEMBENCH_REQUIRE_DATA") == "1":
            pytest.fail(reason + "; MEMBENCH_REQUIRE_DATA=1 makes this a failure", pytrace=False)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def locomo_dir() -> Path:
    return shared_path("locomo")


@pytest.fixture(scope="session")
def procedural_dir() -> Path:
    return shared_path("procedural")


@pytest.fixture(scope="session")
def longmemeval_dir() -> Path:
    return shared_path("longmemeval")


@pytest.fixture(scope="session")
def parsed(locomo_dir, procedural_dir, longmemeval_dir):
    """The three real datasets parsed once: kind -> ParsedDataset."""
    from membench.benchmarks.registry import parse_dataset

    return {
        "locomo": parse_dataset("locomo", locomo_dir),
        "procedural": parse_dataset("procedural", procedural_dir),
        "longmemeval": parse_dataset("longmemeval", longmemeval_dir),
    }


@pytest.fixture(scope="session")
def ingested(parsed, tmp_path_factory):
    """Each real dataset parsed, written and ingested into a temp folder: kind -> folder."""
    from membench.stages.ingest import ingest

    out = {}
    for kind, data in parsed.items():
        folder = tmp_path_factory.mktemp(kind)
        data.write(folder, {})
        ingest(folder, folder)
        out[kind] = folder
    return out


@pytest.fixture(scope="session")
def embedding_dir(tmp_path_factory):
    """One embedding cache for the whole test session: a text is embedded once across tests.

    MEMBENCH_TEST_EMBEDDINGS names an existing cache to start from; CI points it at the cache its main job (the
    same code, minutes before) filled with every real text, so the suite does not pay that embedding again. It is
    copied, never written to. Tests of embedding itself use caches of their own and still embed."""
    import shutil

    path = tmp_path_factory.mktemp("embeddings")
    seed = os.environ.get("MEMBENCH_TEST_EMBEDDINGS")
    if seed:
        for shard in sorted(Path(seed).glob("shard-*.npy")):
            shutil.copy(shard, path / shard.name)
    return path


def built_once(tmp_path_factory, name: str, build) -> Path:
    """`build(folder)` once for the whole test session, shared by the xdist workers (one folder beside theirs, a file
    lock, a marker written only when the build returned): an end-to-end run that two modules read is paid once, and
    the second worker waits for it instead of running it again beside it on the same cores. A failed build leaves no
    marker, so the next caller builds again (and fails the same way)."""
    import shutil

    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder, marker = root / name, root / f"{name}.built"
    with FileLock(str(root / f"{name}.lock")):
        if not marker.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            marker.touch()
    return folder


def locomo_slice(locomo_dir: Path, dest: Path, samples: tuple[str, ...] = ("conv-26", "conv-30")) -> Path:
    """A LoCoMo folder whose locomo10.json holds only these conversations of the real file (default: 38 of its
    272 sessions, 304 of its 1,986 questions, one with a published erratum). For end-to-end tests whose point
    is the workflow (a cluster run equal to a local one, model stages paid once), not LoCoMo's figures, which
    tests/test_workflow.py pins on the whole file."""
    from membench.benchmarks.locomo.conversations import keep_conversations

    return keep_conversations(locomo_dir, dest, samples)


def first_sessions(locomo_dir: Path, dest: Path, sample: str = "conv-26", sessions: int = 3,
                   turns: int | None = None) -> Path:
    """A LoCoMo file holding one real conversation cut to its first sessions (and each to its first `turns` turns),
    and the QA answered in what is kept."""
    conv = next(c for c in json.loads((locomo_dir / "locomo10.json").read_text(encoding="utf-8"))
                if c["sample_id"] == sample)

    def kept(key: str) -> bool:  # session_3, session_3_date_time, session_3_observation, events_session_3, ...
        number = re.search(r"session_(\d+)", key)
        return number is None or int(number.group(1)) <= sessions

    for part in ("conversation", "observation", "session_summary", "event_summary"):
        conv[part] = {k: v for k, v in conv[part].items() if kept(k)}
    if turns is not None:
        conv["conversation"] = {k: v[:turns] if isinstance(v, list) else v for k, v in conv["conversation"].items()}
    limit = turns or 10 ** 6
    cited = [[(int(s), int(t)) for s, t in re.findall(r"D(\d+):(\d+)", " ".join(q.get("evidence") or []))]
             for q in conv["qa"]]
    conv["qa"] = [q for q, found in zip(conv["qa"], cited)
                  if found and max(s for s, _ in found) <= sessions and max(t for _, t in found) <= limit]
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "locomo10.json").write_text(json.dumps([conv]), encoding="utf-8")
    return dest


def ingested_opening(locomo_dir: Path, tmp: Path, sessions: int, turns: int | None = None) -> Path:
    """conv-26's opening (`first_sessions`) parsed and ingested into `tmp / "locomo"`: a dataset folder for a memory
    system that makes model calls, small enough for a test."""
    from membench.benchmarks.registry import parse_dataset
    from membench.stages.ingest import ingest

    folder = tmp / "locomo"
    parse_dataset("locomo", first_sessions(locomo_dir, tmp / "slice", sessions=sessions, turns=turns)).write(folder, {})
    ingest(folder, folder)
    return folder


def longmemeval_slice(longmemeval_dir: Path, dest: Path, per_question: int = 6) -> Path:
    """A LongMemEval folder whose file keeps, of each real question's haystack, its answer sessions and then its
    first other sessions up to `per_question` (in haystack order, with their dates): 12 of the 2-question
    fragment's 80 sessions. For tests of a memory system's protocol (ingest, search, cache, gold-blindness), where
    what matters is that every session goes through it, not how many."""
    import json

    name = "longmemeval_s_cleaned_partial_2q.json"
    data = json.loads((longmemeval_dir / name).read_text(encoding="utf-8"))
    for question in data:
        answers = set(question["answer_session_ids"])
        others = [i for i, sid in enumerate(question["haystack_session_ids"]) if sid not in answers]
        keep = sorted({i for i, sid in enumerate(question["haystack_session_ids"]) if sid in answers}
                      | set(others[:per_question - len(answers)]))
        for field in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
            question[field] = [question[field][i] for i in keep]
    dest.mkdir(parents=True, exist_ok=True)
    (dest / name).write_text(json.dumps(data), encoding="utf-8")
    return dest


def real_datasets(longmemeval_dir: Path, locomo_dir: Path, procedural_dir: Path) -> dict:
    """The `datasets:` config of an end-to-end test: the three real copies, the download default off."""
    return {
        "longmemeval-s": {"kind": "longmemeval", "enabled": False},
        "lme-fragment": {"kind": "longmemeval", "path": str(longmemeval_dir)},
        "locomo": {"kind": "locomo", "path": str(locomo_dir)},
        "procedural": {"kind": "procedural", "path": str(procedural_dir)},
    }


def fresh_python(code: str, *args: str, env: dict | None = None, timeout: float = 300):
    """Run `code` in a new interpreter (python -c, in the repository, `args` as its argv): the check sees only what
    `code` itself imports, never what another test loaded into this process. Returns the JSON it printed."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def run_snakemake(work: Path, config_file: Path, *args: str, pythonpath: tuple[Path, ...] = (),
                  env: dict | None = None):
    """Run the workflow in `work` (as its own working directory) with config.yaml + `config_file`."""
    import subprocess
    import sys

    full_env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=os.pathsep.join(map(str, (*pythonpath, REPO))),
                    **(env or {}))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(work), *args,
           "--configfile", str(REPO / "config.yaml"), str(config_file)]
    return subprocess.run(cmd, cwd=work, env=full_env, capture_output=True, text=True, timeout=1800)


def pdflatex_compiles(tex_files, workdir: Path) -> None:
    """Compile each LaTeX table inside a minimal booktabs document; skip when no pdflatex is installed
    (a failure when MEMBENCH_REQUIRE_TEX=1, as in CI, which installs Debian's texlive packages)."""
    import shutil
    import subprocess

    if shutil.which("pdflatex") is None:
        reason = "pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)"
        if os.environ.get("MEMBENCH_REQUIRE_TEX") == "1":
            pytest.fail(reason + "; MEMBENCH_REQUIRE_TEX=1 makes this a failure", pytrace=False)
        pytest.skip(reason)
    for n, tex in enumerate(tex_files):
        doc = workdir / f"doc{n}.tex"
        doc.write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                       f"\\input{{{Path(tex).resolve()}}}\n\\end{{document}}\n", encoding="utf-8")
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=workdir,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{tex}:\n{done.stdout[-3000:]}"
        assert (workdir / f"doc{n}.pdf").stat().st_size > 1000


def jobs_reading(work: Path, config_file: Path, touched: list[str], copy_to: Path) -> dict[str, set[str]]:
    """Touch ``touched`` (paths under ``results/``) in a copy of the finished run in ``work`` and dry-run it:
    for each touched file, the jobs Snakemake schedules that declare it as an input, each named by its first
    output. Only mtimes count (``--rerun-triggers mtime``), so a job that reads a table without declaring it
    is missing here, and no job of the copy runs."""
    import shutil
    import time

    shutil.copytree(work / "results", copy_to / "results")  # copy2 keeps every mtime, so the copy is up to date
    shutil.copy(config_file, copy_to / config_file.name)
    later = time.time() + 5
    for path in touched:
        os.utime(copy_to / path, (later, later))
    done = run_snakemake(copy_to, copy_to / config_file.name, "-n", "results/report.md", "--rerun-triggers", "mtime")
    assert done.returncode == 0, done.stderr[-4000:]
    jobs, job = [], None
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        head = line.strip()
        if line.startswith(("rule ", "localrule ")) and line.endswith(":"):
            job = {"rule": line.split()[1].rstrip(":"), "input": [], "output": []}
            jobs.append(job)
        elif job is not None and head.startswith(("input: ", "output: ")):
            key, _, files = head.partition(": ")
            job[key] = files.split(", ")
    assert any(j["rule"] == "report" for j in jobs), "the dry run scheduled no report job"
    return {path: {j["output"][0] for j in jobs if path in j["input"]} for path in touched}
