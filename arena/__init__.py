"""Trick Arena: a referee and tournament arena for bots that play trick-taking card games."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``arena.__version__``, read from the installed metadata only when asked for (reading it
    parses the package's METADATA file: a cost every ``arena`` command would pay at start)."""
    if name != "__version__":
        raise AttributeError(f"module 'arena' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("trick-arena")  # the one version number: pyproject.toml's
    except PackageNotFoundError:  # run from a checkout that was never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found
