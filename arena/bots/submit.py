"""``arena submit``: take a bot folder, build it, check it, and install it as a new version.

The steps, each of which can refuse the bot (and then nothing is installed)::

    validate bot.toml -> copy to BOTS_DIR/.staging/<tmp> -> content hash (sources, pre-build)
      -> already installed? stop (no-op) -> build (time limit, output kept) -> run program there?
      -> arena check -> install record -> rename to BOTS_DIR/<name>/<hash>

The rename is the one step that makes a version visible, so a version folder is always complete;
any failure removes the staging copy. The build runs in the staging copy and the folder is moved
afterwards, so a build must not depend on its absolute path.

Errors::

    SubmitError         the bot was refused; the message says why, one line per reason
    (BotFolderError / ManifestError from arena.bots.manifest pass through: a bad folder or manifest)
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from arena.bots.installed import (
    STAGING_DIR,
    InstalledBot,
    read_installed,
    version_folder,
    write_record,
)
from arena.bots.manifest import Manifest, bot_label, content_hash, copy_folder, load_manifest
from arena.referee.bot_spec import BotSpec
from arena.referee.confine import as_user_argv
from arena.referee.spawn import kill_every_process_of

# What a failed build's author is shown: its first lines (where compilers put the first error)
# and its last lines (where the build tool says what failed); of a chatty build only the two ends
# are read.
BUILD_OUTPUT_HEAD_LINES = 15
BUILD_OUTPUT_TAIL_LINES = 25
BUILD_OUTPUT_END_BYTES = 32 * 1024


class SubmitError(Exception):
    """The submission was refused (failed build or check, missing program); nothing installed."""


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    seconds: float
    summary: str  # one line: "exit status 2", "timed out after 5s (...)", ...
    output: str  # stdout+stderr, its middle left out when long (see _excerpt)


@dataclass(frozen=True)
class CheckOutcome:
    """What submit needs from ``arena check``: pass or fail, and the report for the author."""

    passed: bool
    report: str


Checker = Callable[[BotSpec], CheckOutcome]
# Wraps a build's command line, given the folder it builds in (the league's sandbox).
BuildWrapper = Callable[[list[str], Path], list[str]]


def arena_check(
    spec: BotSpec, *, sandbox: str | None = None, games: tuple[str, ...] = ()
) -> CheckOutcome:
    """What ``arena submit`` runs: ``arena check`` (every check, default settings) on the built bot,
    in ``sandbox`` ("bwrap") when given, on ``games`` (default: every game).

    The bot's standard error logs are kept, and named in the report, only when a check fails.
    """
    # Imported here: the referee and the games load only when a bot is checked.
    from arena.bots.check import FAILED, PASSED, CheckSettings, check_bot

    logs = Path(tempfile.mkdtemp(prefix=f"arena-submit-{spec.name}-"))
    results = check_bot(replace(spec, sandbox=sandbox), CheckSettings(games=games, log_dir=logs))
    failed = [result for result in results if result.status == FAILED]
    passed = sum(result.status == PASSED for result in results)
    skipped = len(results) - passed - len(failed)
    lines = [
        f"arena check: {passed} passed, {len(failed)} failed"
        + (f", {skipped} skipped" if skipped else "")
    ]
    lines += [f"  FAIL {result.name}: {result.reason}" for result in failed]
    hints = dict.fromkeys(result.hint for result in failed if result.hint)  # each once, in order
    lines += [f"  hint: {hint}" for hint in hints]
    if failed:
        lines.append(f"  the bot's standard error: {logs}")
    else:
        shutil.rmtree(logs, ignore_errors=True)
    return CheckOutcome(passed=not failed, report="\n".join(lines))


@dataclass(frozen=True)
class Submission:
    """The outcome of a successful :func:`submit` (failures raise)."""

    installed: InstalledBot
    already_installed: bool  # identical content was there already: nothing was built or changed
    build: BuildResult | None = None
    check: CheckOutcome | None = None

    @property
    def label(self) -> str:
        return bot_label(self.installed.spec)


def submit(
    folder: Path | str,
    bots_dir: Path | str,
    *,
    checker: Checker | None,
    progress: Callable[[str], None] = lambda message: None,
    wrap_build: BuildWrapper | None = None,
    max_build_s: float | None = None,
    build_env: Mapping[str, str] | None = None,
    build_user: tuple[int, int] | None = None,
) -> Submission:
    """Build, check (unless ``checker`` is None) and install the bot in ``folder`` in ``bots_dir``.
    ``wrap_build`` runs the build inside something (a sandbox); ``max_build_s`` caps the
    manifest's ``build_timeout_s``; ``build_env`` replaces this process's environment for the
    build (a league's server holds secrets in its own); ``build_user`` (uid, gid), for an arena
    run as root: the build runs as that user, who owns the staged folder while it builds (and
    nothing else: the caller gives a user id no account and no other process has); after it,
    every process of that user is killed and the folder is the arena's again, readable by all.

    Raises ManifestError, BotFolderError or SubmitError; after any failure nothing is installed.
    """
    source = load_manifest(folder)  # fail fast, before copying anything
    if Path(bots_dir).resolve().is_relative_to(source.folder.resolve()):
        raise SubmitError(
            f"{bots_dir}: the bots directory is inside the bot folder {folder} "
            f"(it would be copied into itself); choose another --to"
        )
    staging = _make_staging(Path(bots_dir).absolute())
    try:
        copy_folder(source.folder, staging)
        os.chmod(staging, stat.S_IMODE(os.stat(source.folder).st_mode))  # not mkdtemp's 0700
        # The staged copy is what gets built and installed, so it is what is hashed and validated.
        manifest = load_manifest(staging)
        digest = content_hash(staging)
        final = version_folder(bots_dir, manifest.name, digest).absolute()
        if final.exists():
            return Submission(read_installed(final), already_installed=True)

        build = None
        if max_build_s is not None and manifest.build_timeout_s > max_build_s:
            manifest = replace(manifest, build_timeout_s=max_build_s)
        if manifest.build is not None:
            progress(
                f"building: {_one_line(manifest.build)} (time limit {manifest.build_timeout_s:g}s)"
            )
            if build_user is not None:
                _hand_over(staging, build_user)
            try:
                build = run_build(manifest, wrap=wrap_build, base_env=build_env, user=build_user)
            finally:
                if build_user is not None:
                    kill_every_process_of(build_user[0])  # (before its files are taken back)
                    _take_back(staging)
            if not build.ok:
                raise SubmitError(_build_failure(manifest, build))
            progress(f"build ok in {build.seconds:.1f}s")
        _require_program(manifest, source.path)

        check = None
        if checker is not None:
            progress("checking the built bot with arena check")
            check = checker(manifest.bot_spec(digest))
            if not check.passed:
                raise SubmitError(
                    f"{manifest.name}: failed arena check; nothing installed\n{check.report}"
                )

        write_record(staging, content_hash=digest, checked=checker is not None)
        if not _install(staging, final):
            # Someone installed the very same content while we built it: theirs is identical.
            return Submission(read_installed(final), already_installed=True)
        return Submission(read_installed(final), already_installed=False, build=build, check=check)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _hand_over(folder: Path, user: tuple[int, int]) -> None:
    """``folder`` and everything in it owned by ``user`` (the build's own user)."""
    for root, dirs, files in os.walk(folder):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.chown(name, *user, follow_symlinks=False)


def _take_back(folder: Path) -> None:
    """After a build as another user: everything in ``folder`` the arena's own again, readable
    (and its programs runnable) by every user, writable by the arena alone. Links are not
    followed (a build may leave one pointing anywhere)."""
    owner = (os.geteuid(), os.getegid())
    for root, dirs, files in os.walk(folder):
        os.chown(root, *owner, follow_symlinks=False)
        os.chmod(root, 0o755)
        for name in dirs + files:
            path = os.path.join(root, name)
            os.chown(path, *owner, follow_symlinks=False)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                os.chmod(path, 0o644 | (0o111 if info.st_mode & 0o100 else 0))


def _make_staging(bots_dir: Path) -> Path:
    """A fresh folder in BOTS_DIR/.staging: on the same file system, so installing is a rename."""
    try:
        staging_root = bots_dir / STAGING_DIR
        staging_root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="submit-", dir=staging_root))
    except OSError as error:
        raise SubmitError(
            f"{bots_dir}: cannot create a staging folder in it: {error.strerror}; nothing installed"
        ) from None


def _install(staging: Path, final: Path) -> bool:
    """Rename the staged version into place; False when that version appeared meanwhile."""
    try:
        final.parent.mkdir(exist_ok=True)
        os.rename(staging, final)
    except OSError as error:
        if error.errno in (errno.EEXIST, errno.ENOTEMPTY) and final.is_dir():
            return False
        raise SubmitError(f"{final}: cannot install: {error.strerror}; nothing installed") from None
    return True


def run_build(
    manifest: Manifest,
    *,
    wrap: BuildWrapper | None = None,
    base_env: Mapping[str, str] | None = None,
    user: tuple[int, int] | None = None,
) -> BuildResult:
    """Run the manifest's build command in its folder under its time limit, output captured
    (inside ``wrap``'s command line when given), in this process's environment (or
    ``base_env``) plus the manifest's; as ``user`` (uid, gid) when given (the arena is root:
    the switch happens inside ``wrap``'s sandbox).

    The build gets its own process group, killed when the build ends or times out, so nothing it
    started outlives it.
    """
    argv = manifest.build_argv()
    assert argv is not None
    run = list(argv) if user is None else as_user_argv(*user, argv)
    command = run if wrap is None else wrap(run, manifest.folder)
    env = {**(os.environ if base_env is None else base_env), **dict(manifest.env)}
    started = time.monotonic()
    with tempfile.TemporaryFile() as log:
        try:
            process = subprocess.Popen(
                command,
                cwd=manifest.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            return BuildResult(False, 0.0, f"cannot start {command[0]!r}: {error.strerror}", "")
        timed_out = False
        try:
            process.wait(timeout=manifest.build_timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(process.pid)
            process.wait()
        seconds = time.monotonic() - started
        output = _excerpt(log)
    if timed_out:
        return BuildResult(
            False,
            seconds,
            f"timed out after {manifest.build_timeout_s:g}s (build_timeout_s in bot.toml)",
            output,
        )
    if process.returncode != 0:
        return BuildResult(False, seconds, _exit_summary(process.returncode), output)
    return BuildResult(True, seconds, "ok", output)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def _exit_summary(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _excerpt(log: IO[bytes]) -> str:
    """The build's output, or its first and last lines with a marker where lines are left out."""
    size = os.fstat(log.fileno()).st_size
    log.seek(0)
    if size <= 2 * BUILD_OUTPUT_END_BYTES:
        lines = _lines(log.read())
        head, tail = lines[:BUILD_OUTPUT_HEAD_LINES], lines[BUILD_OUTPUT_HEAD_LINES:]
        left_out = max(0, len(tail) - BUILD_OUTPUT_TAIL_LINES)
        gap = [f"... ({left_out} lines left out) ..."] if left_out else []
    else:
        head = _lines(log.read(BUILD_OUTPUT_END_BYTES))[:BUILD_OUTPUT_HEAD_LINES]
        log.seek(size - BUILD_OUTPUT_END_BYTES)
        tail = _lines(log.read())[1:]  # the first line is cut
        gap = [f"... ({size - 2 * BUILD_OUTPUT_END_BYTES} or more bytes left out) ..."]
    return "\n".join(head + gap + tail[-BUILD_OUTPUT_TAIL_LINES:])


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").rstrip("\n").splitlines()


def _build_failure(manifest: Manifest, build: BuildResult) -> str:
    command = _one_line(manifest.build or ())
    message = f"{manifest.name}: build failed ({command}): {build.summary}; nothing installed"
    if build.output:
        message += f"\nbuild output:\n{build.output}"
    return message


def _one_line(argv: tuple[str, ...]) -> str:
    """A command as the author would type it, on one line."""
    return shlex.join(argv).replace("\n", "\\n")


def _require_program(manifest: Manifest, where: Path) -> None:
    """The run command's program must exist once built: a clear message beats a startup fault.

    ``where`` is the author's bot.toml (the staged copy's path would mean nothing to them).
    """
    program = manifest.run_argv()[0]
    if "/" in program:
        if not os.path.isfile(program):
            shown = os.path.relpath(program, manifest.folder)
            raise SubmitError(
                f"{where}: run: {shown} does not exist after the build; nothing installed"
            )
        if not os.access(program, os.X_OK):
            shown = os.path.relpath(program, manifest.folder)
            raise SubmitError(
                f"{where}: run: {shown} is not executable (chmod +x it, or run it "
                f"through its interpreter); nothing installed"
            )
    else:
        search_path = dict(manifest.env).get("PATH", os.environ.get("PATH"))
        if shutil.which(program, path=search_path) is None:
            raise SubmitError(
                f"{where}: run: program {program!r} is not installed on this "
                f"machine (not found on PATH); nothing installed"
            )
