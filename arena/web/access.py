"""Who may see what of a tournament's hidden cards (SPEC 10.7).

The cards a seat holds are hidden while they can still matter: in a match being played, and in
a finished match whose deal (the same seed, the same cards, other seats) still has a rotation
not finished. Such cards are *sealed*. A sealed match is shown

- whole (all hands) only to the organiser, who presents the organiser's token (the secret);
- while it is being played, as seat K saw it, to the organiser and to the owner of the bot at
  seat K, who presents a token that names the bot (to watch their bot play);
- finished, while another rotation of its deal is not, only to the organiser: its cards are
  dealt again in that rotation, to other seats.

Everything else (the standings, the scores, who plays whom) is open to anyone who reaches the
server. A token is a string: the organiser's is the secret itself; a bot's is derived from the
secret and the bot's name (an HMAC), so the organiser can hand it out before a tournament starts
and it stays the same across runs with the same secret, and nothing need be stored. A league
that gives authors tokens of its own passes them in ``tokens`` (token -> the bots it names).
Tokens are compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SECRET_ENV = "ARENA_WEB_SECRET"  # the organiser's token, given rather than generated
MIN_SECRET_CHARS = 16
TOKEN_COOKIE = "arena_token"
TOKEN_PARAM = "token"
BOT_TOKEN_LABEL = b"trick-arena seat views of bot\x00"


@dataclass(frozen=True)
class Viewer:
    """Who is asking: the organiser, the owner of some bots, or (neither) a spectator."""

    organiser: bool = False
    bots: frozenset[str] = frozenset()

    def may_see(self, seat_bot: str | None, *, sealed: bool, playing: bool = False) -> bool:
        """Whether this viewer may see a seat (``seat_bot``: the bot sitting there; None: all
        hands) of a match whose cards are ``sealed``, and which is being ``playing``."""
        if not sealed or self.organiser:
            return True
        return playing and seat_bot is not None and seat_bot in self.bots


SPECTATOR = Viewer()
ORGANISER = Viewer(organiser=True)


class SecretError(ValueError):
    """A given secret that is too short to be one (one line)."""


def new_secret() -> str:
    """A fresh organiser's token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def check_secret(secret: str) -> str:
    """A secret given by the organiser, checked: long enough, and usable in a URL as it is."""
    if len(secret) < MIN_SECRET_CHARS or not all(c.isalnum() or c in "-_." for c in secret):
        raise SecretError(
            f"{SECRET_ENV}: expected at least {MIN_SECRET_CHARS} characters of letters, digits, "
            "'-', '_' or '.' (e.g. python3 -c 'import secrets; print(secrets.token_urlsafe())')"
        )
    return secret


def bot_token(secret: str, bot: str) -> str:
    """The token of ``bot``'s owner: seat views of its sealed matches."""
    mac = hmac.new(secret.encode(), BOT_TOKEN_LABEL + bot.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:24]).decode()


class Access:
    """The tokens a server accepts: none (``secret`` None: sealed cards are served to no one),
    or the organiser's secret, the bots' derived tokens, and any ``tokens`` given."""

    def __init__(
        self,
        secret: str | None = None,
        bots: Iterable[str] = (),
        tokens: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.secret = secret
        self._tokens: list[tuple[bytes, frozenset[str]]] = []
        if secret is not None:
            for bot in bots:
                self._tokens.append((bot_token(secret, bot).encode(), frozenset([bot])))
        for token, named in (tokens or {}).items():
            self._tokens.append((token.encode(), frozenset(named)))

    @property
    def enabled(self) -> bool:
        return self.secret is not None or bool(self._tokens)

    def bot_tokens(self, bots: Iterable[str]) -> dict[str, str]:
        """Each bot's owner's token (none without a secret)."""
        if self.secret is None:
            return {}
        return {bot: bot_token(self.secret, bot) for bot in bots}

    def viewer(self, token: str | None) -> Viewer:
        """Who presents ``token`` (None or unknown: a spectator). Every known token is compared,
        each in constant time, so the time taken says nothing about which was close."""
        if not token:
            return SPECTATOR
        presented = token.encode()
        organiser = self.secret is not None and hmac.compare_digest(presented, self.secret.encode())
        bots: set[str] = set()
        for known, named in self._tokens:
            if hmac.compare_digest(presented, known):
                bots |= named
        if organiser:
            return ORGANISER
        return Viewer(bots=frozenset(bots)) if bots else SPECTATOR
