"""Authors and their uploads against a real ``arena league serve``: the CLI upload, a version
built, checked and playing, a failed build shown to its author only, each kind of bad archive
refused with its reason and nothing else changed, the rate limit, CSRF, and two authors who
cannot see or change each other's versions."""

from __future__ import annotations

import io
import socket
import zipfile
from pathlib import Path

import pytest

from arena.league.web import CSRF_HEADER
from tests.league.conftest import (
    ORGANISER,
    Server,
    add_author,
    arena,
    bot_files,
    http,
    league_toml,
    open_store,
    serving,
    targz,
)
from tests.sandbox_support import needs_bwrap
from tests.waiting import wait_for


def _state(toml: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """What a refused upload must leave alone: the versions and the installed bot folders."""
    store = open_store(toml)
    try:
        versions = [(v.label, v.status) for v in store.versions()]
    finally:
        store.close()
    bots = toml.parent / "data" / "bots"
    folders = sorted(str(p.relative_to(bots)) for p in bots.rglob("*")) if bots.exists() else []
    return versions, [f for f in folders if not f.startswith(".staging/") and "/.staging" not in f]


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


BAD_ARCHIVES = {
    "not an archive": (b"just some text, not an archive", "not a tar.gz or zip archive"),
    "damaged": (b"\x1f\x8b\x08\x00garbage-after-a-gzip-magic", "damaged tar.gz"),
    "path escape": (targz({**bot_files(), "../escaped.txt": "x"}), "leaving the bot folder"),
    "absolute path": (targz({**bot_files(), "/tmp/absolute.txt": "x"}), "absolute path"),
    "link out": (targz(bot_files(), links={"passwd": "/etc/passwd"}), "a link"),
    "too many files": (
        targz({**bot_files(), **{f"f{i}.txt": "x" for i in range(60)}}),
        "more than 50 files",
    ),
    "tar bomb": (targz({**bot_files(), "zeros": bytes(3 << 20)}), "unpacks to more than 1 MB"),
    "zip bomb": (_zip({"bot.toml": b"", "zeros": bytes(3 << 20)}), "unpacks to more than 1 MB"),
    "no bot.toml": (targz({"a/random_bot.py": "print()", "b/x": "y"}), "no bot.toml"),
    "bad bot.toml": (targz({"bot.toml": "name = 3\n"}), "bot.toml"),
}
LIMITS = """
[limits]
files = 50
unpacked_mb = 1
upload_mb = 2
"""


def test_each_bad_archive_is_refused_with_its_reason_and_nothing_changes(tmp_path: Path) -> None:
    toml = league_toml(tmp_path, extra=LIMITS + "[organiser]\nsubmissions_per_hour = 100\n")
    alice = add_author(toml, "alice")
    with serving(toml) as server:
        before = _state(toml)
        for kind, (data, reason) in BAD_ARCHIVES.items():
            status, answer = server.post("api/submit", data, token=alice)
            assert status == 400, (kind, status, answer)
            assert reason in answer["error"], (kind, answer)
            assert kind == "bad bot.toml" or "\n" not in answer["error"], kind
            assert _state(toml) == before, kind
        status, answer = server.post("api/submit", bytes(3 << 20), token=alice)
        assert status == 413 and "over 2 MB" in answer["error"]
        assert _state(toml) == before
        assert not list((toml.parent / "data" / "uploads").iterdir())  # nothing left behind


def _folder(tmp_path: Path, name: str, files: dict[str, bytes | str]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file, content in files.items():
        path = folder / file
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        path.chmod(0o755)
    return folder


def _session(server: Server, token: str) -> tuple[str, str]:
    """Log in as a browser does: the session cookie and the CSRF token."""
    import urllib.request

    request = urllib.request.Request(
        server.url + "api/session",
        data=b'{"token": "%s"}' % token.encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        cookie = response.headers["Set-Cookie"].split(";")[0]
        import json

        return cookie, json.loads(response.read())["csrf"]


def test_authors_upload_build_check_and_play_and_cannot_touch_each_other(tmp_path: Path) -> None:
    toml = league_toml(
        tmp_path, extra="[organiser]\nsubmissions_per_hour = 2\nactive_versions = 1\n"
    )
    alice = add_author(toml, "alice")
    bob = add_author(toml, "bob")
    store = open_store(toml)
    assert "alice" in [a.name for a in store.authors()]
    assert alice not in (toml.parent / "data" / "league.sqlite").read_bytes().decode("latin-1")
    store.close()
    with serving(toml) as server:
        # the CLI upload: built, checked, active
        folder = _folder(tmp_path, "mybot", bot_files("mybot"))
        done = arena("submit", str(folder), "--to", server.url, env={"ARENA_LEAGUE_TOKEN": alice})
        assert done.returncode == 0, done.stderr + done.stdout
        assert "alice.mybot.v1 is active" in done.stdout
        assert "arena check: " in done.stdout and " 0 failed" in done.stdout

        # a failed build: rejected, its log shown to alice only
        status, answer = server.post(
            "api/submit",
            targz(bot_files("broken", build=["sh", "-c", "echo compiling now; env; exit 3"])),
            token=alice,
        )
        assert status == 422 and answer["status"] == "rejected"
        assert "exit status 3" in answer["log"] and "compiling now" in answer["log"]
        assert "PATH=" in answer["log"] and ORGANISER not in answer["log"]  # not the server's env
        broken = answer["id"]
        assert "log" in server.get(f"api/versions/{broken}", token=alice)[1]
        assert "log" not in server.get(f"api/versions/{broken}", token=bob)[1]
        assert "log" not in server.get(f"api/versions/{broken}")[1]
        assert "log" in server.get(f"api/versions/{broken}", token=ORGANISER)[1]

        # the rate limit: two uploads an hour, the third refused, nothing stored for it
        status, answer = server.post("api/submit", targz(bot_files("other")), token=alice)
        assert status == 400 and "2 uploads in the last hour" in answer["error"]

        # alice's version plays and is on the ladder
        versions = {v["label"]: v for v in server.get("api/authors/alice")[1]["versions"]}
        mine = versions["alice.mybot.v1"]["id"]

        def on_ladder() -> bool:
            rows = server.get("api/ladder")[1]["tables"].get("eight-rounds", {}).get("rows", [])
            return any(r["bot"] == "alice.mybot.v1" and r["played"] > 0 for r in rows)

        wait_for("alice's version on the ladder", on_ladder)

        # bob can neither retire it, nor read its stderr, nor disqualify it
        status, answer = server.post(f"api/versions/{mine}/retire", b"{}", token=bob)
        assert status == 403 and "only its author" in answer["error"]
        logs = wait_for(
            "alice's stderr logs",
            lambda: server.get(f"api/versions/{mine}", token=alice)[1].get("stderr"),
        )
        assert "stderr" not in server.get(f"api/versions/{mine}", token=bob)[1]
        status, _ = server.get(f"api/versions/{mine}/stderr/{logs[0]}", token=bob)
        assert status == 403
        status, _ = server.get(f"api/versions/{mine}/stderr/{logs[0]}", token=alice)
        assert status == 200
        status, _ = server.post(f"api/versions/{mine}/disqualify", b"{}", token=bob)
        assert status == 403
        assert server.get(f"api/versions/{mine}")[1]["status"] == "active"

        # a cookie session must send its CSRF token to change anything
        cookie, csrf = _session(server, alice)
        status, answer = http(
            server.url + f"api/versions/{mine}/retire", b"{}", headers={"Cookie": cookie}
        )
        assert status == 403 and CSRF_HEADER in answer["error"]
        status, answer = http(
            server.url + f"api/versions/{mine}/retire",
            b"{}",
            headers={"Cookie": cookie, CSRF_HEADER: csrf, "Origin": "http://evil.example"},
        )
        assert status == 403 and "cross-site" in answer["error"]
        status, answer = http(
            server.url + f"api/versions/{mine}/retire",
            b"{}",
            headers={"Cookie": cookie, CSRF_HEADER: csrf},
        )
        assert status == 200 and answer["status"] == "retired"

        # the organiser disqualifies
        status, answer = server.post(
            f"api/versions/{broken}/disqualify", b'{"reason": "test"}', token=ORGANISER
        )
        assert status == 200 and answer["status"] == "disqualified"


@needs_bwrap
def test_a_build_reaches_no_network(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    toml = league_toml(tmp_path)
    alice = add_author(toml, "alice")
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
    try:
        with serving(toml) as server:
            status, answer = server.post(
                "api/submit", targz(bot_files("net", build=["python3", "-c", probe])), token=alice
            )
    finally:
        listener.close()
    assert status == 422 and answer["status"] == "rejected"
    assert "ConnectionRefusedError" in answer["log"] or "unreachable" in answer["log"]


@pytest.mark.parametrize("name", ["house", "a.b", ""])
def test_author_names_are_checked(tmp_path: Path, name: str) -> None:
    toml = league_toml(tmp_path)
    done = arena("league", "author", "add", name, "--league", str(toml))
    assert done.returncode == 2 and "expected 1-40 letters" in done.stderr
    assert "Traceback" not in done.stderr
