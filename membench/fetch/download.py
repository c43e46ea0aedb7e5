"""Materialise a dataset's files into ``resources/<dataset>/``, checksum-verified, with no half-written leftovers.

A dataset spec is either ``{kind, path}`` (a local file or folder to copy) or a remote spec
``{kind, files: [{url, sha256, name?}, ...]}`` (shorthand: ``{kind, url, sha256, name?}`` for one file).
A ``url`` may also be a ``file://`` URL or a plain local path, so a user can point at a mirror.
``sha256`` may be null for a default whose checksum upstream does not publish: the download then warns
and records the hash it saw in a sidecar ``<name>.sha256`` (``sha256sum -c`` format) beside the file.

What a library does: one HTTP GET streamed to a file is pooch's ``HTTPDownloader`` (requests underneath: it
raises on a status >= 400, on a timeout and on a body shorter than its Content-Length; a progress bar only
when stderr is a terminal). Hashing is ``membench.io.sha256_file``; archives are ``membench.fetch.archive``
(its docstring says why pooch's Unzip/Untar are not used).

What stays here, because pooch does not do it (checked against pooch 1.9's ``core.stream_download``):
 * which failures are retried. pooch retries every requests error and every hash mismatch alike, with
   linear waits; membench retries only what can heal by itself -- connection errors, timeouts, truncated
   bodies, HTTP 429 and 5xx -- with exponential backoff and a numeric Retry-After (capped at a minute),
   and fails at once on 404/403 and on a checksum mismatch;
 * ``file://`` URLs and plain local paths as mirrors (pooch has no downloader for them);
 * the ``.sha256`` sidecar that pins an unpinned download for the next run, and this module's messages;
 * ``.part`` then rename beside the destination (pooch's temporary file lives in its cache folder), and
   the swap of a whole dataset folder in :func:`materialize`.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pooch
import requests

from membench import __version__
from membench.fetch.archive import archive_kind, safe_extract
from membench.errors import DownloadError, InputError
from membench.io import atomic_write_text, sha256_file, temp_beside

__all__ = ["DownloadError", "fetch", "materialize", "safe_extract", "archive_kind"]

log = logging.getLogger(__name__)

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_MAX_RETRY_AFTER = 60.0
# identity: keep the bytes as the server stores them (requests would otherwise un-gzip them before hashing)
_HEADERS = {"User-Agent": f"membench/{__version__}", "Accept-Encoding": "identity"}


# ---------------------------------------------------------------------------------------------------- fetch


def fetch(
    url: str,
    dest: Path,
    sha256: str | None,
    retries: int = 3,
    timeout: float = 60.0,
    backoff: float = 1.0,
) -> str:
    """Fetch ``url`` (http(s), ``file://`` or a local path) to ``dest``, verify it, return its sha256 hex digest.

    The bytes are streamed (and hashed on the way) into ``.<name>.<random>.part`` beside ``dest`` and renamed
    into place only once verified, so ``dest`` is either absent or complete. ``retries`` is the number of
    extra attempts after the first one, for connection errors, timeouts, truncated bodies, HTTP 429 and 5xx;
    other HTTP errors (404, 403, ...) fail at once. The n-th retry waits ``backoff * 2**(n-1)`` seconds
    (longer if the server sends a numeric Retry-After, capped at a minute). ``timeout`` applies to each
    socket operation, not to the whole download. A ``dest`` that already holds the expected bytes is kept
    without touching the network; with no ``sha256``, that means a matching ``.sha256`` sidecar.
    On any failure no new file is left behind; a pre-existing ``dest`` is only ever replaced, never deleted.
    """
    url = str(url)
    dest = Path(dest)
    want = _normalise_sha256(url, sha256)
    sidecar = dest.with_name(dest.name + ".sha256")

    if dest.is_file():
        have = sha256_file(dest)
        if have == want or (want is None and _read_sidecar(sidecar) == have):
            log.info("%s already present with sha256 %s; not fetching %s", dest, have, url)
            return have
        log.info("%s exists but its sha256 %s is not the expected one; fetching %s again", dest, have, url)

    part = temp_beside(dest)
    replaced = False
    try:
        source = _local_source(url)
        if source is not None:
            got = _copy_hashing(url, source, part)
        else:
            got = _download_with_retries(url, part, retries, timeout, backoff)
        if want is not None and got != want:
            raise DownloadError(url, f"sha256 mismatch: expected {want}, got {got}")
        os.replace(part, dest)
        replaced = True
        if want is None:
            log.warning(
                "no sha256 is known for %s; the file fetched has sha256 %s (recorded in %s). "
                "Put it in the config to pin this download.",
                url, got, sidecar,
            )
            atomic_write_text(sidecar, f"{got}  {dest.name}\n")
    except BaseException:
        part.unlink(missing_ok=True)
        if replaced:  # the sidecar could not be written: do not leave an unrecorded file behind
            dest.unlink(missing_ok=True)
        raise
    return got


def _normalise_sha256(url: str, sha256: str | None) -> str | None:
    """Lower-case a configured checksum; reject typos early rather than as a confusing mismatch later."""
    if sha256 is None or str(sha256).strip() == "":
        return None
    value = str(sha256).strip().lower()
    if not _SHA256_RE.match(value):
        raise DownloadError(url, f"sha256 {sha256!r} is not 64 hexadecimal digits", field="sha256")
    return value


def _read_sidecar(sidecar: Path) -> str | None:
    """The hash recorded by an earlier unpinned download, or None if there is no readable sidecar."""
    try:
        words = sidecar.read_text(encoding="utf-8").split()
    except OSError:
        return None
    return words[0].lower() if words else None


def _local_source(url: str) -> Path | None:
    """The local file a ``file://`` URL or plain path names; None for http(s), which goes over the network."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return None
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise DownloadError(url, f"file:// URL with a remote host {parts.netloc!r} is not supported")
        return Path(urllib.request.url2pathname(parts.path))
    if scheme == "" or len(scheme) == 1:  # a plain path (a one-letter "scheme" is a Windows drive)
        return Path(url).expanduser()
    raise DownloadError(url, f"unsupported URL scheme {parts.scheme!r}: use http(s), file:// or a local path")


def _copy_hashing(url: str, source: Path, part: Path) -> str:
    """Copy a local mirror file into ``part``; a missing source fails at once (no retry)."""
    if not source.is_file():
        raise DownloadError(url, f"local source {source} does not exist or is not a file")
    shutil.copyfile(source, part)
    return sha256_file(part)


def _download_with_retries(url: str, part: Path, retries: int, timeout: float, backoff: float) -> str:
    """Retry only what can heal by itself (network trouble, 429, 5xx); a 404 will not go away by waiting."""
    attempts = max(0, int(retries)) + 1
    download = pooch.HTTPDownloader(progressbar=sys.stderr.isatty(), chunk_size=1 << 20, headers=_HEADERS,
                                    timeout=timeout)  # timeout: per socket operation (requests' meaning)
    for attempt in range(attempts):
        retry_after = None
        try:
            download(url, str(part), None)  # truncates what an earlier attempt left
            return sha256_file(part)
        except requests.HTTPError as e:  # before OSError: a requests error is an OSError
            code, reason = e.response.status_code, e.response.reason
            if code != 429 and code < 500:
                raise DownloadError(url, f"HTTP {code} {reason}") from e
            problem = f"HTTP {code} {reason}"
            retry_after = _retry_after_seconds(e.response.headers.get("Retry-After"))
            cause = e
        except OSError as e:  # refused/reset connections, timeouts, short bodies (requests.RequestException)
            problem = f"{type(e).__name__}: {e}"
            cause = e
        if attempt == attempts - 1:
            raise DownloadError(url, f"gave up after {attempts} attempt(s); last error: {problem}") from cause
        delay = backoff * 2**attempt
        if retry_after is not None:
            delay = max(delay, min(retry_after, _MAX_RETRY_AFTER))
        log.warning("fetching %s failed (%s); retry %d of %d in %.2fs", url, problem, attempt + 1, attempts - 1, delay)
        time.sleep(delay)
    raise AssertionError("unreachable")


def _retry_after_seconds(value: str | None) -> float | None:
    """A numeric Retry-After header in seconds (the HTTP-date form is ignored: exponential backoff applies)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


# ----------------------------------------------------------------------------------------------- materialize


def materialize(
    dataset_name: str,
    spec: dict,
    dest_dir: Path,
    retries: int = 3,
    timeout: float = 60.0,
    backoff: float = 1.0,
) -> list[Path]:
    """Put a dataset's files into ``dest_dir`` and return the data files (sorted; ``.sha256`` sidecars left out).

    ``{path}`` copies a file, or a folder recursively (a ``sha256`` given with a single file is verified);
    ``{files}``/``{url}`` fetch each file (named ``name`` or after the last URL path segment) and unpack
    archives next to them (the verified archive is kept). Everything is built in a temporary sibling folder
    and swapped in at the end, so a failure leaves ``dest_dir`` as it was and an existing ``dest_dir`` is
    replaced whole. Errors are DownloadErrors whose message names the dataset.
    """
    dest_dir = Path(dest_dir)
    if not isinstance(spec, dict):
        raise _spec_error(dataset_name, "", f"the dataset spec must be a mapping, got {type(spec).__name__}")
    has_path, has_remote = "path" in spec, ("files" in spec or "url" in spec)
    if has_path == has_remote:
        raise _spec_error(dataset_name, "", "give exactly one of 'path' (a local copy) or 'files'/'url' (a download)")
    entries = None if has_path else _remote_entries(dataset_name, spec)

    tmp = temp_beside(dest_dir, ".tmp", directory=True)
    try:
        try:
            if entries is None:
                rel = _copy_local(spec, tmp)
            else:
                rel = _fetch_remote(entries, tmp, retries, timeout, backoff)
        except InputError as e:
            raise DownloadError(e.path, f"dataset '{dataset_name}': {e.detail}", e.record, e.field) from e
        except OSError as e:
            raise DownloadError(e.filename or dest_dir, f"dataset '{dataset_name}': {e}") from e
        _swap_into_place(tmp, dest_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [dest_dir / r for r in sorted(set(rel))]


def _spec_error(dataset_name: str, field: str, message: str) -> DownloadError:
    """A config mistake: there is no data file to blame yet, so point at the config entry."""
    where = f"datasets.{dataset_name}" + (f".{field}" if field else "")
    return DownloadError("config", f"dataset '{dataset_name}': {message}", field=where)


def _remote_entries(dataset_name: str, spec: dict) -> list[tuple[str, str | None, str]]:
    """Normalise ``files``/``url`` into (url, sha256, file name), catching bad names before any download."""
    if "files" in spec and "url" in spec:
        raise _spec_error(dataset_name, "", "give either 'files' or the one-file shorthand 'url', not both")
    raw = spec["files"] if "files" in spec else [{k: spec[k] for k in ("url", "sha256", "name") if k in spec}]
    if not isinstance(raw, list) or not raw:
        raise _spec_error(dataset_name, "files", "must be a non-empty list of {url, sha256, name?}")
    entries, seen = [], set()
    for i, item in enumerate(raw):
        field = f"files[{i}]" if "files" in spec else "url"
        if not isinstance(item, dict) or not item.get("url"):
            raise _spec_error(dataset_name, field, "needs a 'url'")
        url = str(item["url"])
        name = item.get("name") or _name_from_url(url)
        if not _safe_name(name):
            message = (f"cannot use {name!r} as a file name; set 'name' to a plain file name or a relative path "
                       "inside the dataset folder (e.g. '1/chat.json')")
            raise _spec_error(dataset_name, field, message)
        if name in seen:
            raise _spec_error(dataset_name, field, f"two files would both be saved as {name!r}; set 'name'")
        seen.add(name)
        entries.append((url, item.get("sha256"), name))
    return entries


def _safe_name(name: str) -> bool:
    """A file name, or a relative path of them ('1/chat.json': a benchmark whose files share names across folders),
    that stays inside the dataset folder."""
    parts = name.split("/") if name else []
    return bool(parts) and "\\" not in name and all(p and p not in (".", "..") for p in parts) \
        and not name.endswith((".part", ".sha256"))


def _name_from_url(url: str) -> str:
    """The last path segment of a URL (query string dropped, %-escapes decoded), or of a plain path."""
    parts = urlsplit(url)
    if parts.scheme.lower() in ("http", "https", "file"):
        return unquote(parts.path).rstrip("/").rsplit("/", 1)[-1]
    return Path(url).name


def _copy_local(spec: dict, tmp: Path) -> list[str]:
    """Copy a local file, or every file under a local folder (keeping sub-folders), into ``tmp``."""
    src = Path(str(spec["path"])).expanduser()
    sha = spec.get("sha256")
    if src.is_file():
        if sha:
            fetch(src.resolve().as_uri(), tmp / src.name, sha)
        else:
            shutil.copy2(src, tmp / src.name)
        return [src.name]
    if not src.is_dir():
        raise DownloadError(src, "local path does not exist", field="path")
    if sha:
        raise DownloadError(src, "a sha256 can only be checked for a single file, not a folder", field="sha256")
    files = sorted(p for p in src.rglob("*") if p.is_file())
    if not files:
        raise DownloadError(src, "local folder holds no files", field="path")
    rel = []
    for f in files:
        r = f.relative_to(src)
        (tmp / r).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, tmp / r)
        rel.append(r.as_posix())
    return rel


def _fetch_remote(entries, tmp: Path, retries: int, timeout: float, backoff: float) -> list[str]:
    """Fetch every file first, then unpack the archives among them into the same folder."""
    rel = []
    for url, sha, name in entries:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        fetch(url, tmp / name, sha, retries=retries, timeout=timeout, backoff=backoff)
        rel.append(name)
    for name in list(rel):
        if archive_kind(name):
            rel.extend(p.relative_to(tmp).as_posix() for p in safe_extract(tmp / name, tmp))
    return rel


def _swap_into_place(tmp: Path, dest_dir: Path) -> None:
    """Rename the finished folder into place; an old ``dest_dir`` is moved aside first and removed after."""
    if not (dest_dir.exists() or dest_dir.is_symlink()):
        os.replace(tmp, dest_dir)
        return
    old = dest_dir.with_name(f".{dest_dir.name}.old-{uuid.uuid4().hex[:8]}")
    os.replace(dest_dir, old)
    try:
        os.replace(tmp, dest_dir)
    except BaseException:
        os.replace(old, dest_dir)
        raise
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink(missing_ok=True)
