"""Secret deals, verifiable afterwards (SPEC 10.3): the tournament seed that every deal derives
from is drawn at random when the tournament file gives none, kept in the results file where no
bot may read it, published at the start only as a commitment (a hash of the seed with a random
salt), and revealed with its salt when the tournament ends, so that anyone can check the
commitment and re-derive every deal.

A match seed gives away the tournament seed (SplitMix64's steps can be undone), so until the
reveal every match seed is as secret as the tournament seed: the results file's rows and the
records hold them, and neither may be readable by a bot or shown to anyone while it runs.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

SEED_BITS = 63  # as a tournament file's `seed` (0 .. 2**63-1), so a revealed seed can be one
SALT_BYTES = 32  # 256 random bits: the commitment cannot be searched for the seed
COMMITMENT_TAG = "trick-arena-seed"
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def commitment_of(seed: int, salt: str) -> str:
    """SHA-256 of ``trick-arena-seed:<salt>:<seed>`` (the salt in lowercase hex, the seed in
    decimal), in lowercase hex: ``printf 'trick-arena-seed:%s:%s' SALT SEED | sha256sum``."""
    return hashlib.sha256(f"{COMMITMENT_TAG}:{salt}:{seed}".encode()).hexdigest()


@dataclass(frozen=True)
class DealSecret:
    """A tournament's secret seed and the salt its commitment is taken with."""

    seed: int
    salt: str

    @property
    def commitment(self) -> str:
        return commitment_of(self.seed, self.salt)

    @classmethod
    def draw(cls) -> DealSecret:
        """A fresh secret from the operating system's randomness (``secrets``)."""
        return cls(secrets.randbits(SEED_BITS), secrets.token_hex(SALT_BYTES))

    @classmethod
    def of(cls, data: object) -> DealSecret | None:
        """A secret as stored (``{"seed": N, "salt": "hex"}``); None for anything else."""
        if not isinstance(data, dict):
            return None
        seed, salt = data.get("seed"), data.get("salt")
        if not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**64):
            return None
        if not (isinstance(salt, str) and HEX64.match(salt)):
            return None
        return cls(seed, salt)

    def as_dict(self) -> dict[str, int | str]:
        return {"seed": self.seed, "salt": self.salt}


@dataclass(frozen=True)
class SealState:
    """What a results file holds of its seed's seal: the ``commitment`` published at the start
    (None: the seed is public, or the file is older than sealing), the ``secret`` while the
    tournament runs, and the ``revealed`` seed and salt once it has ended."""

    commitment: str | None = None
    secret: DealSecret | None = None
    revealed: DealSecret | None = None

    @property
    def sealed(self) -> bool:
        return self.commitment is not None

    def problem(self) -> str | None:
        """What is wrong with a reveal (None: it opens the commitment, or nothing is revealed)."""
        if self.revealed is None:
            return None
        if self.commitment is None:
            return "a revealed seed without a commitment"
        if self.revealed.commitment != self.commitment:
            return (
                f"the revealed seed {self.revealed.seed} and salt do not give the commitment "
                f"{self.commitment} (they give {self.revealed.commitment})"
            )
        return None


PUBLIC_SEED_NOTE = "its deals are public: a bot that knows the seed can know every card (SPEC 10.3)"
