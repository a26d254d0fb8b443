"""Trick Arena: a referee and tournament arena for bots that play trick-taking card games."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("trick-arena")  # the one version number: pyproject.toml's
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"
