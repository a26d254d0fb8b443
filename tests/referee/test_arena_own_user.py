"""`user = "@arena"`: a trusted bot runs as the arena's own user, root included (SPEC 7)."""

from __future__ import annotations

import os

import pytest

from arena.referee.spawn import (
    ARENA_OWN_USER,
    BOT_USER_VARIABLE,
    OWN_UID_USER,
    ROOT_DEFAULT_USER,
    bot_user,
)
from arena.tournament.config import load_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_at_arena_never_switches(monkeypatch):
    monkeypatch.delenv(BOT_USER_VARIABLE, raising=False)
    assert bot_user(ARENA_OWN_USER) is None
    monkeypatch.setenv(BOT_USER_VARIABLE, ARENA_OWN_USER)
    assert bot_user(None) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="the @own default applies only to root")
def test_root_defaults_to_a_user_id_of_its_own(monkeypatch):
    monkeypatch.delenv(BOT_USER_VARIABLE, raising=False)
    assert ROOT_DEFAULT_USER == OWN_UID_USER
    chosen = bot_user(None)
    assert chosen is not None and chosen.lease is not None
    try:
        assert chosen.uid == chosen.gid == chosen.lease.uid
        assert chosen.name == f"uid {chosen.uid}"
    finally:
        chosen.lease.release()


def test_the_demo_runs_its_trusted_samples_as_the_arena_user():
    config = load_config(os.path.join(ROOT, "tournaments", "demo.toml"))
    assert {bot.user for bot in config.bots} == {ARENA_OWN_USER}
