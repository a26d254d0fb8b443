"""Rng.shuffle draws all at once (128-bit lanes of one big integer): it must deal exactly what
SPEC.md section 3 says, one ``below`` after the other, and leave the generator where that leaves it.
"""

from __future__ import annotations

import pytest

from arena.games.cards import GAMMA, MASK64, TWO64, Rng, derive_seed

K1, K2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def spec_shuffle(rng: Rng, items: list, count: int | None = None) -> None:
    """SPEC.md section 3 as written: for i from 0 up to count - 1, swap i and i + below(len - i)."""
    for i in range(len(items) - 1 if count is None else count):
        j = i + rng.below(len(items) - i)
        items[i], items[j] = items[j], items[i]


def unmix(output: int) -> int:
    """The state whose SplitMix64 output is ``output`` (the mix is a bijection of 64-bit words)."""

    def unxorshift(y: int, shift: int) -> int:
        x = y
        for _ in range(64 // shift + 1):
            x = y ^ (x >> shift)
        return x

    z = unxorshift(output, 31)
    z = (z * pow(K2, -1, TWO64)) & MASK64
    z = unxorshift(z, 27)
    z = (z * pow(K1, -1, TWO64)) & MASK64
    return unxorshift(z, 30)


def seed_whose_draw_is(draw: int, output: int) -> int:
    """A seed whose ``draw``-th next() (0 first) returns ``output``."""
    return (unmix(output) - (draw + 1) * GAMMA) & MASK64


def test_unmix_inverts_the_generator():
    for output in (0, 1, TWO64 - 1, 0x0123456789ABCDEF):
        rng = Rng(seed_whose_draw_is(3, output))
        assert [rng.next() for _ in range(4)][3] == output


@pytest.mark.parametrize("size", [*range(1, 67), 70, 100])
def test_the_shuffle_deals_what_the_spec_says(size):
    seeds = Rng(derive_seed(size, "shuffle test"))
    for trial in range(60):
        seed = seeds.next()
        count = (None, 0, 1, size // 2, size - 2, size + 5)[trial % 6]
        if count is not None and count > size - 1:
            expected_count = size - 1  # (shuffle's count is at most len - 1)
        else:
            expected_count = count
        ours, theirs = Rng(seed), Rng(seed)
        dealt, expected = list(range(size)), list(range(size))
        ours.shuffle(dealt, count)
        spec_shuffle(theirs, expected, expected_count)
        assert dealt == expected, (seed, size, count)
        assert ours.state == theirs.state, (seed, size, count)
        assert ours.next() == theirs.next()  # the generator goes on from the same place


@pytest.mark.parametrize("size", [3, 5, 32, 48, 52, 64])
@pytest.mark.parametrize("draw", [0, 1, 7])
def test_a_rejected_draw_shifts_the_rest_as_the_spec_says(size, draw, monkeypatch):
    # The largest output is rejected by every bound that is not a power of two.
    n = size - draw
    if n & (n - 1) == 0 or n < 2:
        pytest.skip("a power of two rejects nothing")
    seed = seed_whose_draw_is(draw, TWO64 - 1)
    ours, theirs = Rng(seed), Rng(seed)
    dealt, expected = list(range(size)), list(range(size))
    one_by_one = []
    steps = Rng.shuffle_steps
    monkeypatch.setattr(Rng, "shuffle_steps", lambda *a: one_by_one.append(1) or steps(*a))
    ours.shuffle(dealt)
    assert one_by_one, "the lanes did not see the rejection"
    spec_shuffle(theirs, expected)
    assert dealt == expected
    assert ours.state == theirs.state == (seed + size * GAMMA) & MASK64  # one draw more


@pytest.mark.parametrize("output", [TWO64 - 64, TWO64 - 2, TWO64 - 1 - 2**20])
def test_outputs_near_the_limit_that_are_kept(output):
    """Outputs within 64 of 2**64 send the shuffle the one-by-one way; those a bound keeps are
    kept (a power of two bound keeps every output)."""
    for size in (2, 4, 33, 52):
        seed = seed_whose_draw_is(size - 2, output)  # the last draw: below(2)
        ours, theirs = Rng(seed), Rng(seed)
        dealt, expected = list(range(size)), list(range(size))
        ours.shuffle(dealt)
        spec_shuffle(theirs, expected)
        assert dealt == expected
        assert ours.state == theirs.state == (seed + (size - 1) * GAMMA) & MASK64
