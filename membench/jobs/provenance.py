"""Hashes that tie outputs to the code and data that made them.

Snakemake reruns a `script:` rule when its script changes but not when a module it imports changes, so every
rule passes `script_version(<its script>)` as its `code` param: the script, every file under `membench/` it
imports (transitively, with the packages each import runs) and the data files those modules declare in a
module-level `DATA_FILES` (prompts, errata). An edit to any of them reruns exactly the rules whose scripts
reach it (tests/test_code_versions.py edits every module and checks this against grimp's import graph).
Every rule asks for these hashes each time Snakemake starts, so a file's bytes, digest and imports are read
once per process (keyed by its mtime and size, so an edited file is read again): a no-op rerun stays fast.
The imports a file's bytes make are also kept on disk (`import_cache`), keyed by those bytes: parsing the
package's ~90 files again in every Snakemake start was a tenth of a no-op rerun.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from membench.jobs import import_cache

REPO = Path(__file__).resolve().parents[2]  # membench/jobs/provenance.py -> the repository
_PARSER = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]  # cached imports name the code that read them


def code_version(files: list[Path]) -> str:
    """Short hash of the given files' bytes, each named by its path relative to the repo root."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(file_bytes(path))
    return digest.hexdigest()[:16]


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=None)
def _read(path: Path, stamp: tuple[int, int]) -> bytes:
    return path.read_bytes()


def file_bytes(path: Path) -> bytes:
    """A file's bytes, read once per process while its mtime and size stay the same."""
    return _read(path, _stamp(path))


def script_version(script: str | Path) -> str:
    """Short hash of a rule script's whole closure (`script_files`): the one code version every rule carries."""
    return code_version(script_files(script))


def script_files(script: str | Path) -> list[Path]:
    """A rule script, the files under membench/ its imports reach, and the data files those declare."""
    path = Path(script) if Path(script).is_absolute() else REPO / script
    if not path.is_file():
        raise FileNotFoundError(f"script_version: {path} does not exist")
    files = {path}
    for name in imports_of(path, "__main__"):
        if name.split(".")[0] == "membench":
            files.update(closure(name, [REPO / "membench"]))
    for module in list(files):
        files.update(data_files(module))
    return sorted(files)


def data_files(module: Path) -> set[Path]:
    """The files a module declares it reads, as `DATA_FILES = ("glob relative to the module's folder", ...)`."""
    return {found for pattern in _data_globs(module, _stamp(module)) for found in module.parent.glob(pattern)
            if found.is_file()}


@lru_cache(maxsize=None)
def _data_globs(module: Path, stamp: tuple[int, int]) -> tuple[str, ...]:
    if b"DATA_FILES" not in file_bytes(module):
        return ()  # most modules: no parse
    for node in ast.parse(file_bytes(module), filename=str(module)).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DATA_FILES" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    return ()


# ---------------------------------------------------------------- import closure

def spec_origin(name: str) -> Path | None:
    """The .py file a module name maps to, found on disk below its top-level package without importing the
    name or its parent packages: a `from X import y` candidate `X.y` must not run X (membench.report.costs
    would load openai, membench.report.plots matplotlib, into every Snakefile parse)."""
    return _origin(name, tuple(sys.path))


@lru_cache(maxsize=None)
def _origin(name: str, search_path: tuple[str, ...]) -> Path | None:
    top, _, rest = name.partition(".")
    found = _top_spec(top, search_path)
    if found is None:
        return None
    if not rest:
        return Path(found.origin).resolve() if found.origin and found.origin.endswith(".py") else None
    for folder in found.submodule_search_locations or []:
        base = Path(folder).joinpath(*rest.split("."))
        for candidate in (base / "__init__.py", base.with_name(base.name + ".py")):
            if candidate.is_file():
                return candidate.resolve()
    return None


@lru_cache(maxsize=None)
def _top_spec(top: str, search_path: tuple[str, ...]):
    """A top-level package's spec, looked up once per search path (the closure walk asks thousands of times)."""
    try:
        return importlib.util.find_spec(top)
    except (ImportError, ValueError, AttributeError):
        return None


def imports_of(path: Path, module_name: str) -> set[str]:
    """Absolute names of the modules a file imports (and `from X import y` candidates X.y)."""
    return set(_imports(path, module_name, _stamp(path)))


@lru_cache(maxsize=None)
def _imports(path: Path, module_name: str, stamp: tuple[int, int]) -> frozenset[str]:
    package = module_name if path.name == "__init__.py" else module_name.rpartition(".")[0]
    source = file_bytes(path)
    known = import_cache.lookup(source, package, _PARSER)
    if known is not None:
        return known
    names = _parse_imports(path, source, package)
    import_cache.remember(source, package, _PARSER, names)
    return names


def _parse_imports(path: Path, source: bytes, package: str) -> frozenset[str]:
    names: set[str] = set()
    for node in _import_statements(ast.parse(source, filename=str(path)).body):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        else:
            base = node.module or ""
            if node.level:
                try:
                    base = importlib.util.resolve_name("." * node.level + base, package)
                except ImportError:
                    continue
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(names)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_statements(body: list) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth of statement blocks (functions, classes, if/try/with/match).
    Only statements can import, so expressions are never visited: ten times faster than `ast.walk`."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from _import_statements(block)


def plugin_root(module_name: str, origin: Path) -> Path:
    top = module_name.split(".")[0]
    top_origin = spec_origin(top)
    if top_origin is not None and top_origin.name == "__init__.py":
        return top_origin.parent
    try:
        found = importlib.util.find_spec(top)
        locations = list(found.submodule_search_locations or []) if found else []
    except (ImportError, ValueError):
        locations = []
    if locations:  # a namespace package such as a `tests/` folder without __init__.py
        return Path(locations[0]).resolve()
    return origin  # a top-level module: only itself


def under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def closure(module_name: str, roots: list[Path]) -> list[Path]:
    """The module's file plus every file under `roots` it imports, transitively (read from the source
    with `ast`, nothing is executed), so a rule reruns exactly when code it really runs has changed.
    Remembered per process while none of the files it found has changed (every rule asks again)."""
    key = (module_name, tuple(roots), tuple(sys.path))
    known = _CLOSURES.get(key)
    if known is not None and all(_stamp(path) == stamp for path, stamp in known):
        return [path for path, _ in known]
    files = _walk(module_name, roots)
    _CLOSURES[key] = tuple((path, _stamp(path)) for path in files)
    import_cache.save()
    return files


_CLOSURES: dict[tuple, tuple[tuple[Path, tuple[int, int]], ...]] = {}


def _walk(module_name: str, roots: list[Path]) -> list[Path]:
    tops = {"membench"} | {module_name.split(".")[0]}
    seen: dict[Path, None] = {}
    todo = [module_name]
    visited: set[str] = set()
    while todo:
        name = todo.pop()
        if name in visited or name.split(".")[0] not in tops:
            continue
        visited.add(name)
        origin = spec_origin(name)
        if origin is None or not any(under(origin, r) for r in roots):
            continue
        if origin in seen:
            continue
        seen[origin] = None
        todo.extend(imports_of(origin, name))
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)  # importing a.b.c runs a/__init__.py and a/b/__init__.py first
    return list(seen)
