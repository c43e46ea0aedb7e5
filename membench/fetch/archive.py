"""Safe archive extraction: every member is checked before anything is written, so a hostile or broken
archive (absolute paths, `..` escapes, links leading outside, device files) leaves nothing extracted.

Why this is not pooch's ``Unzip``/``Untar`` (read in pooch 1.9's ``processors.py``) nor the standard library's
extraction filter alone (tried on this project's Python 3.11.7):
 * pooch's ``Untar`` passes ``filter="data"`` only on Python >= 3.12, so on 3.11 a tar member can write
   anywhere; its ``Unzip`` is ``zipfile.extractall``, which silently rewrites ``../x`` and ``/x`` to other
   names rather than refusing them, and writes a zip symlink as a text file. Both extract member by member,
   so a bad member found late leaves the earlier ones written, and both skip extraction when the files exist.
 * ``tarfile``'s ``filter="data"`` (kept below as a second guard) strips a leading ``/`` instead of refusing
   it, checks each member only as it is written (a refused member leaves the earlier ones on disk), and on
   3.11.7 lacks the June 2025 fixes for link-chain escapes (CVE-2025-4517, -4330, -4138): ``p -> .`` then
   ``q -> p/p/../..`` is only caught once ``p`` is already written.
So the check of every member, through the archive's own links, before writing anything stays here.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath, PureWindowsPath

from membench.errors import DownloadError

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
_MAX_LINK_HOPS = 40
CHUNK = 1 << 20


def archive_kind(name: str) -> str | None:
    """'zip' or 'tar' if the file name says it is an archive that :func:`safe_extract` can unpack, else None."""
    lower = name.lower()
    if lower.endswith(".zip"):
        return "zip"
    if any(lower.endswith(s) for s in ARCHIVE_SUFFIXES):
        return "tar"
    return None


def safe_extract(archive: Path, dest_dir: Path) -> list[Path]:
    """Unpack a .zip or .tar[.gz|.tgz|.bz2|.xz] into ``dest_dir`` and return the regular files written.

    Every member is checked before anything is written, so a refused archive leaves nothing behind:
    absolute paths, ``..`` that climbs out, links (symbolic or hard) that resolve outside ``dest_dir`` -
    also through other links in the same archive - and device files, FIFOs and other special members are
    refused with a DownloadError naming the archive and the member.
    """
    archive = Path(archive)
    dest_dir = Path(dest_dir)
    kind = archive_kind(archive.name)
    if kind is None:
        raise DownloadError(archive, f"not a supported archive type (expected one of {', '.join(ARCHIVE_SUFFIXES)})")
    try:
        if kind == "zip":
            with zipfile.ZipFile(archive) as zf:
                return _extract_zip(archive, zf, dest_dir)
        with tarfile.open(archive, "r:*") as tf:
            return _extract_tar(archive, tf, dest_dir)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as e:
        raise DownloadError(archive, f"cannot read archive: {e}") from e


class _Member:
    """What the safety check needs to know about one archive member, whatever the archive format."""

    def __init__(self, name: str, kind: str, link: str | None = None):
        self.name = name
        self.kind = kind  # 'file', 'dir', 'symlink', 'hardlink'
        self.link = link
        self.location: list[str] = []  # resolved path inside dest_dir, filled by _check_members


def _split(archive: Path, name: str, member: str | None = None) -> list[str]:
    """Path components of a member name (or of ``member``'s link target); absolute and drive names are refused."""
    unified = name.replace("\\", "/")
    if unified.startswith("/") or PurePosixPath(unified).is_absolute() or PureWindowsPath(name).drive:
        what = f"member {name!r} has" if member is None else f"member {member!r} links to"
        raise DownloadError(archive, f"{what} an absolute path" + ("" if member is None else f" {name!r}"))
    return [p for p in unified.split("/") if p not in ("", ".")]


def _resolve(parts: list[str], links: dict[str, str], archive: Path, member: str) -> list[str]:
    """Walk ``parts`` from dest_dir, following the archive's own symlinks; refuse if it ever climbs out."""
    out: list[str] = []
    todo = list(parts)
    hops = 0
    while todo:
        part = todo.pop(0)
        if part == "..":
            if not out:
                raise DownloadError(archive, f"member {member!r} points outside the destination folder")
            out.pop()
            continue
        out.append(part)
        target = links.get("/".join(out))
        if target is not None:
            hops += 1
            if hops > _MAX_LINK_HOPS:
                raise DownloadError(archive, f"member {member!r} goes through a symlink loop")
            out.pop()
            todo = _split(archive, target, member) + todo
    return out


def _check_members(archive: Path, members: list[_Member], dest_dir: Path) -> None:
    """Refuse the whole archive if any member could land, or point, outside ``dest_dir``."""
    links: dict[str, str] = {}
    for m in members:
        if m.kind == "symlink":
            if not m.link:
                raise DownloadError(archive, f"member {m.name!r} is a symlink with an empty target")
            _split(archive, m.link, m.name)  # absolute targets are refused here
            parts = _split(archive, m.name)
            if not parts or parts[-1] == "..":
                raise DownloadError(archive, f"member {m.name!r} is a symlink without a proper name")
            # Resolving with no links is plain lexical normalisation (and refuses a climb out).
            links["/".join(_resolve(parts[:-1], {}, archive, m.name) + [parts[-1]])] = m.link
    root = os.path.realpath(dest_dir)
    for m in members:
        parts = _split(archive, m.name)
        if not parts:
            if m.kind != "dir":
                raise DownloadError(archive, f"member {m.name!r} has no file name")
            continue
        if parts[-1] == "..":
            raise DownloadError(archive, f"member {m.name!r} points outside the destination folder")
        m.location = _resolve(parts[:-1], links, archive, m.name) + [parts[-1]]
        if m.kind == "symlink":
            if "/".join(m.location) not in links:  # keeps every link's real place equal to its key above
                raise DownloadError(archive, f"member {m.name!r} is a symlink placed inside another symlink")
            _resolve(m.location[:-1] + _split(archive, m.link, m.name), links, archive, m.name)
        elif m.kind == "hardlink":  # tar hard-link names are relative to the archive root
            _resolve(_split(archive, m.link or "", m.name), links, archive, m.name)
        # Symlinks already on disk in dest_dir count too (realpath follows the parts that exist).
        real = os.path.realpath(os.path.join(root, *m.location))
        if os.path.commonpath([root, real]) != root:
            raise DownloadError(archive, f"member {m.name!r} would be written outside the destination folder")


def _extract_tar(archive: Path, tf: tarfile.TarFile, dest_dir: Path) -> list[Path]:
    """Check every tar member, then let tarfile write them (with its 'data' filter as a second guard)."""
    infos = tf.getmembers()
    members = []
    for info in infos:
        if info.isreg():
            kind = "file"
        elif info.isdir():
            kind = "dir"
        elif info.issym():
            kind = "symlink"
        elif info.islnk():
            kind = "hardlink"
        else:
            what = "device file" if (info.ischr() or info.isblk()) else "FIFO" if info.isfifo() else "special member"
            raise DownloadError(archive, f"member {info.name!r} is a {what}; refusing to extract it")
        members.append(_Member(info.name, kind, info.linkname if kind in ("symlink", "hardlink") else None))
    _check_members(archive, members, dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    tf.extractall(dest_dir, members=infos, **extra)
    return [dest_dir.joinpath(*m.location) for m in members if m.kind in ("file", "hardlink")]


def _extract_zip(archive: Path, zf: zipfile.ZipFile, dest_dir: Path) -> list[Path]:
    """Check every zip member, then write them ourselves (zipfile would turn symlinks into text files)."""
    infos = zf.infolist()
    members = []
    for info in infos:
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            target = zf.read(info).decode("utf-8", errors="replace")
            members.append(_Member(info.filename, "symlink", target))
        elif info.is_dir():
            members.append(_Member(info.filename, "dir"))
        elif stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):  # 0: no Unix mode recorded
            raise DownloadError(archive, f"member {info.filename!r} is a device file or other special member")
        else:
            members.append(_Member(info.filename, "file"))
    _check_members(archive, members, dest_dir)
    written = []
    dest_dir.mkdir(parents=True, exist_ok=True)
    for info, m in zip(infos, members):
        target = dest_dir.joinpath(*m.location) if m.location else dest_dir
        if m.kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if m.kind == "symlink":
            if target.is_symlink() or target.exists():
                target.unlink()
            os.symlink(m.link, target)
            continue
        with zf.open(info) as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out, CHUNK)
        written.append(target)
    return written
