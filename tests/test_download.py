"""Tests for membench.fetch.download against a real local HTTP server whose failures the test scripts exactly."""

from __future__ import annotations

import hashlib
import io
import logging
import stat
import tarfile
import threading
import zipfile
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from membench.fetch.download import DownloadError, fetch, materialize, safe_extract
from membench.errors import InputError

FAST = {"backoff": 0.01, "timeout": 2.0}
BODY = b"hello membench\n" * 1000
BODY_SHA = hashlib.sha256(BODY).hexdigest()
OTHER_SHA = "0" * 64


class Server:
    """A real ThreadingHTTPServer plus the script it follows: files to serve, failures to give first."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.script: dict[str, list] = defaultdict(list)  # per path: actions for the next requests
        self.counts: Counter = Counter()
        self.lock = threading.Lock()
        self.release = threading.Event()  # lets a hanging handler finish at teardown
        self.httpd = None

    def url(self, path: str) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def serve(self, path: str, body: bytes, fail_first: list | None = None) -> str:
        self.files[path] = body
        self.script[path] = list(fail_first or [])
        return self.url(path)


def _make_handler(state: Server):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?", 1)[0]
            with state.lock:
                state.counts[path] += 1
                action = state.script[path].pop(0) if state.script[path] else "ok"
            try:
                if action == "hang":  # "truncate" falls through and sends half the body
                    state.release.wait(10)  # far past the client's timeout
                elif isinstance(action, int):
                    self.send_error(action)
                    return
                if path not in state.files:
                    self.send_error(404)
                    return
                body = state.files[path]
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if action == "truncate" else body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up on a hung request

        def log_message(self, *args):
            pass

    return Handler


@pytest.fixture
def server():
    state = Server()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(state))
    httpd.handle_error = lambda request, client_address: None  # keep test output quiet
    state.httpd = httpd
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield state
    state.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ----------------------------------------------------------------------------------------------------- fetch


def test_happy_path_returns_digest_and_content(server, tmp_path):
    url = server.serve("/data.json", BODY)
    dest = tmp_path / "data.json"
    assert fetch(url, dest, BODY_SHA, **FAST) == BODY_SHA
    assert dest.read_bytes() == BODY
    assert listing(tmp_path) == ["data.json"]  # no .part, no sidecar when the checksum is pinned
    assert server.counts["/data.json"] == 1


def test_checksum_is_case_insensitive(server, tmp_path):
    url = server.serve("/d", BODY)
    assert fetch(url, tmp_path / "d", BODY_SHA.upper(), **FAST) == BODY_SHA


def test_recovers_after_two_500s(server, tmp_path):
    url = server.serve("/flaky", BODY, fail_first=[500, 500])
    assert fetch(url, tmp_path / "flaky", BODY_SHA, retries=3, **FAST) == BODY_SHA
    assert server.counts["/flaky"] == 3
    assert listing(tmp_path) == ["flaky"]


def test_recovers_after_429(server, tmp_path):
    url = server.serve("/busy", BODY, fail_first=[429])
    assert fetch(url, tmp_path / "busy", BODY_SHA, **FAST) == BODY_SHA
    assert server.counts["/busy"] == 2


def test_recovers_after_a_hang_past_the_timeout(server, tmp_path):
    url = server.serve("/slow", BODY, fail_first=["hang"])
    got = fetch(url, tmp_path / "slow", BODY_SHA, retries=2, timeout=0.3, backoff=0.01)
    assert got == BODY_SHA
    assert server.counts["/slow"] == 2
    assert (tmp_path / "slow").read_bytes() == BODY


def test_backoff_doubles_between_retries(server, tmp_path, monkeypatch):
    delays = []
    monkeypatch.setattr("membench.fetch.download.time.sleep", delays.append)
    url = server.serve("/slowly", BODY, fail_first=[500, 502, 503])
    fetch(url, tmp_path / "slowly", BODY_SHA, retries=3, timeout=2.0, backoff=0.5)
    assert delays == [0.5, 1.0, 2.0]
    assert server.counts["/slowly"] == 4


def test_truncated_body_is_retried(server, tmp_path):
    url = server.serve("/short", BODY, fail_first=["truncate"])
    assert fetch(url, tmp_path / "short", None, **FAST) == BODY_SHA  # even with no checksum to catch it
    assert server.counts["/short"] == 2
    assert (tmp_path / "short").read_bytes() == BODY


def test_gives_up_after_retries_and_leaves_nothing(server, tmp_path):
    url = server.serve("/down", BODY, fail_first=[503] * 10)
    with pytest.raises(DownloadError) as err:
        fetch(url, tmp_path / "down", BODY_SHA, retries=2, **FAST)
    assert server.counts["/down"] == 3  # 1 try + 2 retries
    assert "3 attempt" in str(err.value) and "503" in str(err.value)
    assert listing(tmp_path) == []


def test_404_fails_at_once(server, tmp_path):
    url = server.url("/missing")
    with pytest.raises(DownloadError) as err:
        fetch(url, tmp_path / "missing", BODY_SHA, retries=5, **FAST)
    assert server.counts["/missing"] == 1
    assert "404" in str(err.value) and url in str(err.value)
    assert listing(tmp_path) == []


def test_403_fails_at_once(server, tmp_path):
    url = server.serve("/secret", BODY, fail_first=[403])
    with pytest.raises(DownloadError):
        fetch(url, tmp_path / "secret", BODY_SHA, retries=5, **FAST)
    assert server.counts["/secret"] == 1


def test_checksum_mismatch_names_both_hashes_and_leaves_no_file(server, tmp_path):
    url = server.serve("/bad", BODY)
    folder = tmp_path / "out"
    with pytest.raises(DownloadError) as err:
        fetch(url, folder / "bad", OTHER_SHA, **FAST)
    message = str(err.value)
    assert OTHER_SHA in message and BODY_SHA in message and url in message
    assert isinstance(err.value, InputError)
    assert listing(folder) == []
    assert server.counts["/bad"] == 1  # a wrong checksum is not retried


def test_missing_checksum_writes_sidecar_and_warns(server, tmp_path, caplog):
    url = server.serve("/unpinned.json", BODY)
    dest = tmp_path / "unpinned.json"
    with caplog.at_level(logging.WARNING, logger="membench.fetch.download"):
        assert fetch(url, dest, None, **FAST) == BODY_SHA
    assert (tmp_path / "unpinned.json.sha256").read_text() == f"{BODY_SHA}  unpinned.json\n"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert BODY_SHA in warnings[0].getMessage() and url in warnings[0].getMessage()
    assert listing(tmp_path) == ["unpinned.json", "unpinned.json.sha256"]


def test_present_file_makes_no_request(server, tmp_path):
    url = server.serve("/here", BODY)
    dest = tmp_path / "here"
    dest.write_bytes(BODY)
    assert fetch(url, dest, BODY_SHA, **FAST) == BODY_SHA
    assert server.counts["/here"] == 0


def test_present_unpinned_file_with_matching_sidecar_makes_no_request(server, tmp_path):
    url = server.serve("/u", BODY)
    dest = tmp_path / "u"
    fetch(url, dest, None, **FAST)
    assert fetch(url, dest, None, **FAST) == BODY_SHA
    assert server.counts["/u"] == 1


def test_present_file_with_wrong_content_is_replaced(server, tmp_path):
    url = server.serve("/stale", BODY)
    dest = tmp_path / "stale"
    dest.write_bytes(b"old")
    assert fetch(url, dest, BODY_SHA, **FAST) == BODY_SHA
    assert dest.read_bytes() == BODY
    assert server.counts["/stale"] == 1


def test_bad_sha256_in_config_is_refused_before_any_request(server, tmp_path):
    url = server.serve("/x", BODY)
    with pytest.raises(DownloadError, match="64 hexadecimal"):
        fetch(url, tmp_path / "x", "abc123", **FAST)
    assert server.counts["/x"] == 0


def test_file_url_and_plain_path_sources(tmp_path):
    mirror = tmp_path / "mirror" / "data.json"
    mirror.parent.mkdir()
    mirror.write_bytes(BODY)
    out = tmp_path / "out"
    assert fetch(mirror.as_uri(), out / "a.json", BODY_SHA) == BODY_SHA
    assert fetch(str(mirror), out / "b.json", BODY_SHA) == BODY_SHA
    assert (out / "a.json").read_bytes() == BODY and (out / "b.json").read_bytes() == BODY
    with pytest.raises(DownloadError) as err:
        fetch(str(mirror), out / "c.json", OTHER_SHA)
    assert OTHER_SHA in str(err.value) and BODY_SHA in str(err.value)
    with pytest.raises(DownloadError, match="does not exist"):
        fetch(str(tmp_path / "nope.json"), out / "d.json", BODY_SHA)
    assert listing(out) == ["a.json", "b.json"]


# ---------------------------------------------------------------------------------------------- safe_extract


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w") -> Path:
    with tarfile.open(path, mode) as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def _link(name: str, target: str, kind=tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _zip(path: Path, members: list[tuple[str, bytes, int | None]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


BAD_TAR_MEMBERS = {
    "dotdot": (_file("../evil"), b"x"),
    "nested-dotdot": (_file("sub/../../evil"), b"x"),
    "absolute": (_file("/abs"), b"x"),
    "symlink-out": (_link("link", "/etc/passwd"), None),
    "symlink-climb": (_link("link", "../../etc/passwd"), None),
    "hardlink-out": (_link("hard", "../../etc/passwd", tarfile.LNKTYPE), None),
    "device": (_link("dev", "", tarfile.CHRTYPE), None),
}


@pytest.mark.parametrize("case", sorted(BAD_TAR_MEMBERS))
def test_tar_with_a_bad_member_is_refused_and_nothing_is_extracted(tmp_path, case):
    bad_info, bad_data = BAD_TAR_MEMBERS[case]
    archive = _tar(tmp_path / "a.tar", [(_file("good.txt"), b"fine"), (bad_info, bad_data)])
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(DownloadError) as err:
        safe_extract(archive, dest)
    assert "a.tar" in str(err.value) and repr(bad_info.name) in str(err.value)
    assert listing(dest) == []
    assert not (tmp_path / "evil").exists()


def test_symlink_chain_escape_is_refused(tmp_path):
    # "p" -> "." is harmless alone, but "p/p/../.." really climbs one level above dest.
    archive = _tar(tmp_path / "chain.tar", [(_link("p", "."), None), (_link("q", "p/p/../.."), None)])
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(DownloadError, match="'q'"):
        safe_extract(archive, dest)
    assert listing(dest) == []


def test_symlink_placed_inside_another_symlink_is_refused(tmp_path):
    # On disk "sub/l" is the link "d/l" -> "..", i.e. dest itself, so "sub/l/../../evil" lands above dest.
    sub = tarfile.TarInfo("sub")
    sub.type = tarfile.DIRTYPE
    archive = _tar(
        tmp_path / "nest.tar",
        [(sub, None), (_link("d", "sub"), None), (_link("d/l", ".."), None), (_file("sub/l/../../evil"), b"x")],
    )
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(DownloadError, match="'d/l'"):
        safe_extract(archive, dest)
    assert listing(dest) == []
    assert not (tmp_path / "evil").exists()


@pytest.mark.parametrize(
    "bad",
    [
        ("../evil", b"x", None),
        ("/abs", b"x", None),
        ("link", b"/etc/passwd", stat.S_IFLNK | 0o777),
    ],
)
def test_zip_with_a_bad_member_is_refused_and_nothing_is_extracted(tmp_path, bad):
    archive = _zip(tmp_path / "a.zip", [("good.txt", b"fine", None), bad])
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(DownloadError) as err:
        safe_extract(archive, dest)
    assert "a.zip" in str(err.value) and repr(bad[0]) in str(err.value)
    assert listing(dest) == []
    assert not (tmp_path / "evil").exists()


def test_good_tar_gz_is_extracted(tmp_path):
    sub = tarfile.TarInfo("data/sub")
    sub.type = tarfile.DIRTYPE
    archive = _tar(
        tmp_path / "good.tar.gz",
        [
            (sub, None),
            (_file("data/sub/b.json"), b'{"b": 2}'),
            (_file("data/a.json"), b'{"a": 1}'),
            (_link("data/latest.json", "sub/b.json"), None),
        ],
        mode="w:gz",
    )
    dest = tmp_path / "dest"
    files = safe_extract(archive, dest)
    assert files == [dest / "data/sub/b.json", dest / "data/a.json"]
    assert (dest / "data/a.json").read_bytes() == b'{"a": 1}'
    assert (dest / "data/latest.json").read_bytes() == b'{"b": 2}'  # an inside symlink is fine


def test_good_zip_with_inside_symlink_is_extracted(tmp_path):
    archive = _zip(
        tmp_path / "good.zip",
        [("d/x.txt", b"x", None), ("d/link", b"x.txt", stat.S_IFLNK | 0o777)],
    )
    dest = tmp_path / "dest"
    assert safe_extract(archive, dest) == [dest / "d/x.txt"]
    assert (dest / "d/link").is_symlink() and (dest / "d/link").read_bytes() == b"x"


def test_corrupt_archive_is_a_download_error(tmp_path):
    archive = tmp_path / "broken.tar.gz"
    archive.write_bytes(b"not a tarball at all")
    with pytest.raises(DownloadError, match="broken.tar.gz"):
        safe_extract(archive, tmp_path / "dest")


# ----------------------------------------------------------------------------------------------- materialize


def test_materialize_local_folder_recursively(tmp_path):
    src = tmp_path / "src"
    (src / "nested").mkdir(parents=True)
    (src / "a.json").write_text("A")
    (src / "nested" / "b.json").write_text("B")
    dest = tmp_path / "resources" / "locomo"
    files = materialize("locomo", {"kind": "locomo", "path": str(src)}, dest)
    assert files == [dest / "a.json", dest / "nested/b.json"]
    assert (dest / "nested/b.json").read_text() == "B"
    assert listing(dest.parent) == ["locomo"]  # no temp folder left


def test_materialize_local_file_with_checksum(tmp_path):
    src = tmp_path / "one.json"
    src.write_bytes(BODY)
    dest = tmp_path / "res"
    assert materialize("x", {"kind": "k", "path": str(src), "sha256": BODY_SHA}, dest) == [dest / "one.json"]
    with pytest.raises(DownloadError, match="dataset 'x'"):
        materialize("x", {"kind": "k", "path": str(src), "sha256": OTHER_SHA}, dest)
    assert (dest / "one.json").read_bytes() == BODY  # the earlier result is untouched


def test_materialize_missing_local_path_names_the_dataset(tmp_path):
    with pytest.raises(DownloadError, match="dataset 'procedural'.*does not exist"):
        materialize("procedural", {"kind": "procedural", "path": str(tmp_path / "nope")}, tmp_path / "res")
    assert listing(tmp_path) == []


def test_materialize_url_spec_with_archive(server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in [("bench/q.json", b"[1]"), ("bench/c.json", b"[2]")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    blob = buf.getvalue()
    url = server.serve("/dl/bench.tar.gz", blob)
    plain_url = server.serve("/dl/extra.json", BODY) + "?download=true"
    spec = {
        "kind": "procedural",
        "files": [
            {"url": url, "sha256": hashlib.sha256(blob).hexdigest()},
            {"url": plain_url, "sha256": BODY_SHA, "name": "renamed.json"},
        ],
    }
    dest = tmp_path / "resources" / "procedural"
    files = materialize("procedural", spec, dest, retries=1, timeout=2.0)
    assert files == [dest / n for n in ["bench.tar.gz", "bench/c.json", "bench/q.json", "renamed.json"]]
    assert (dest / "bench/q.json").read_bytes() == b"[1]"
    assert (dest / "renamed.json").read_bytes() == BODY
    assert listing(dest.parent) == ["procedural"]


def test_materialize_shorthand_url_without_checksum(server, tmp_path, caplog):
    url = server.serve("/lme/longmemeval_m.json", BODY)
    dest = tmp_path / "lme"
    with caplog.at_level(logging.WARNING, logger="membench.fetch.download"):
        files = materialize("longmemeval_m", {"kind": "longmemeval", "url": url, "sha256": None}, dest)
    assert files == [dest / "longmemeval_m.json"]
    assert (dest / "longmemeval_m.json.sha256").read_text().split()[0] == BODY_SHA
    assert any("no sha256" in r.getMessage() for r in caplog.records)


def test_failed_materialize_leaves_previous_dest_and_no_temp(server, tmp_path):
    good = server.serve("/ok.json", BODY)
    dest = tmp_path / "res" / "ds"
    dest.mkdir(parents=True)
    (dest / "old.json").write_text("old")
    gone = server.url("/gone.json")
    spec = {"kind": "k", "files": [{"url": good, "sha256": BODY_SHA}, {"url": gone, "sha256": BODY_SHA}]}
    with pytest.raises(DownloadError) as err:
        materialize("ds", spec, dest, backoff=0.01)
    assert "dataset 'ds'" in str(err.value) and "404" in str(err.value)
    assert listing(dest.parent) == ["ds"]
    assert listing(dest) == ["old.json"]


def test_materialize_replaces_an_existing_dest(server, tmp_path):
    url = server.serve("/new.json", BODY)
    dest = tmp_path / "ds"
    dest.mkdir()
    (dest / "old.json").write_text("old")
    materialize("ds", {"kind": "k", "url": url, "sha256": BODY_SHA}, dest)
    assert listing(dest) == ["new.json"]
    assert listing(tmp_path) == ["ds"]


def test_materialize_names_files_by_relative_paths(server, tmp_path):
    """BEAM's chats share file names (`1/chat.json`, `2/chat.json`): `name` may be a path inside the folder."""
    urls = [server.serve(f"/{n}/chat.json", BODY) for n in (1, 2)]
    dest = tmp_path / "beam"
    files = materialize("beam", {"kind": "beam", "files": [{"url": u, "sha256": BODY_SHA, "name": f"{n}/chat.json"}
                                                           for n, u in zip((1, 2), urls)]}, dest)
    assert files == [dest / "1" / "chat.json", dest / "2" / "chat.json"]
    assert all(f.read_bytes() == BODY for f in files)


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"kind": "k"}, "exactly one of"),
        ({"kind": "k", "path": "x", "url": "http://h/x"}, "exactly one of"),
        ({"kind": "k", "files": []}, "non-empty list"),
        ({"kind": "k", "files": [{"sha256": None}]}, "needs a 'url'"),
        ({"kind": "k", "url": "http://h/"}, "file name"),
        ({"kind": "k", "files": [{"url": "http://h/a.json"}, {"url": "http://g/a.json"}]}, "both be saved"),
        ({"kind": "k", "url": "http://h/a", "name": "../a"}, "file name"),
        ({"kind": "k", "url": "http://h/a", "name": "1/../../a"}, "file name"),
        ({"kind": "k", "url": "http://h/a", "name": "/etc/a"}, "file name"),
        ({"kind": "k", "url": "http://h/a", "name": "1//a"}, "file name"),
        ({"kind": "k", "url": "http://h/a", "name": "1\\a"}, "file name"),
    ],
)
def test_bad_specs_name_the_dataset(tmp_path, spec, message):
    with pytest.raises(DownloadError) as err:
        materialize("mydata", spec, tmp_path / "res")
    assert "dataset 'mydata'" in str(err.value) and message in str(err.value)
    assert listing(tmp_path) == []
