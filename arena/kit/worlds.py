"""``sample_world``: a full rules-engine state that agrees with everything one seat knows.

The world is rebuilt at the start of the current deal (round, hand) and the deal's public and own
actions are replayed on it through the engine's own ``apply``, so every rule is checked again: a
sampled hand that broke a void shown, or a patience pass that was not allowed, would raise.

What is drawn (the distribution):
- the cards this seat cannot see are dealt **uniformly over every assignment consistent with the
  seat's knowledge**: its own cards, the cards played, the kick / turned-up / removed cards, the
  hand counts, the exchange counts, and the constraints the play revealed: a seat that did not
  follow suit holds none of that suit (in Vingt-down, not trumping as well shows no trump; in All
  Fours an undertrump under ``no_undertrump`` shows only trumps), a patience pass shows no card
  fitting then other than a 7 (and no 7 before the first 7 is down, or when the pass was forced).
  See :mod:`arena.kit.deal` for how that is exactly uniform;
- decisions nobody saw are drawn uniformly among the legal ones: a secret bid in Alles oder
  Nichts, which cards another seat discarded (any of the cards consistent with the above) and
  which of its cards it drew in Vingt-down;
- what was never dealt yet (later deals, the stock's order) comes from a fresh seed taken from
  ``rng``, so each world has its own future.
Other seats' strategies are not modelled: a card someone would never have played with a hand is
still possible (that is a choice for the search built on top, e.g. weighting worlds).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from arena.games import GAMES
from arena.games.all_fours import AllFours
from arena.games.all_fours import right_of as all_fours_right_of
from arena.games.alles_oder_nichts import HAND_SIZES, AllesOderNichts
from arena.games.cards import COLOURS_48, PIQUET_32, STANDARD_52, StackedDealer
from arena.games.core import GameState
from arena.games.eight_rounds import PATIENCE_ROUND, EightRounds
from arena.games.vingt_down import VingtDown

from .deal import InconsistentDeal, deal_uniform

Events = Sequence[dict[str, Any]]


class InconsistentView(ValueError):
    """The view and events contradict each other (or come from another game or seat)."""


def sample_world(
    view: dict[str, Any],
    events: Events,
    rng: random.Random,
    options: dict[str, Any] | None = None,
) -> GameState:
    """A game state consistent with ``view`` (a request's view) and ``events`` (every event this
    seat has seen in the match, in order), drawn as the module says. ``options`` are the match's
    options from ``match_start`` (All Fours needs them: its view does not show them). The state is
    an ordinary engine state: ``legal_actions()``, ``apply()``, ``view()``, ``is_over``,
    ``result()``; its seed (for later deals) comes from ``rng``."""
    game = view.get("game")
    builder = _BUILDERS.get(game)  # type: ignore[arg-type]
    if builder is None:
        raise InconsistentView(f"sample_world knows no game {game!r} (games: {', '.join(GAMES)})")
    if view.get("seat") is None or view.get("to_move") is None:
        raise InconsistentView("sample_world needs a seat's view of a match in progress")
    try:
        state = builder(view, events, rng, dict(options or {}))
    except InconsistentDeal as error:
        raise InconsistentView(str(error)) from None
    if state.seat_to_move != view["to_move"]:
        raise InconsistentView(
            f"the replayed deal has seat {state.seat_to_move} to move, the view says "
            f"{view['to_move']}: are these the events of this match and seat?"
        )
    return state


# -- shared pieces -------------------------------------------------------------------------------


def current_deal_events(events: Events, starts: tuple[str, ...]) -> list[dict[str, Any]]:
    """The events since the last one whose type is in ``starts`` (that one included)."""
    for index in range(len(events) - 1, -1, -1):
        if events[index].get("type") in starts:
            return list(events[index:])
    raise InconsistentView(f"no {' or '.join(starts)} event among the events given")


def _seed(rng: random.Random) -> int:
    return rng.getrandbits(63)


def _replay(state: GameState, actions: list[tuple[int, str]]) -> None:
    """Apply (seat, action) pairs, checking each comes from the seat the engine expects."""
    for seat, action in actions:
        if state.seat_to_move != seat:
            raise InconsistentView(
                f"replaying {action!r}: the engine expects seat {state.seat_to_move}, "
                f"the events say seat {seat}"
            )
        try:
            state.apply(action)
        except Exception as error:  # an illegal replay means the sample broke a constraint
            raise InconsistentView(f"replaying seat {seat}'s {action!r}: {error}") from None


def _fresh(cls: type[GameState], players: int, options: dict[str, Any], deck: list[str], seed):
    """An engine object whose next shuffle is ``deck``, before its own setup runs."""
    state = cls.__new__(cls)
    spec = cls.SPEC
    GameState.__init__(
        state, players, spec.resolve_options(options), seed, StackedDealer([deck], seed)
    )
    return state


def _voids_in_tricks(
    plays: list[tuple[int, str, str | None]],
    me: int,
    trump: str | None,
    rule: Callable[[int, str, str, list[tuple[int, str]], str | None], set[str]],
) -> dict[int, set[str]]:
    """Suits each seat but ``me`` showed void in, from every (seat, card, led suit or None when
    leading) play of the deal;
    ``rule(seat, card, led, trick so far, trump)`` gives the suits one play shows missing."""
    voids: dict[int, set[str]] = {}
    trick: list[tuple[int, str]] = []
    for seat, card, led in plays:
        if led is None:
            trick = []
        elif seat != me:
            voids.setdefault(seat, set()).update(rule(seat, card, led, trick, trump))
        trick.append((seat, card))
    return voids


def _trick_plays(deal_events: list[dict[str, Any]]) -> list[tuple[int, str, str | None]]:
    """(seat, card, led suit, None for the lead) for every card played to a trick."""
    out: list[tuple[int, str, str | None]] = []
    led: str | None = None
    for event in deal_events:
        kind = event.get("type")
        if kind == "play":
            card = event["card"]
            out.append((event["seat"], card, led))
            if led is None:
                led = card[-1]
        elif kind == "trick":
            led = None
    return out


def _follow_rule(seat, card, led, trick, trump) -> set[str]:
    """Follow suit if you can, else anything: not following shows a void in the led suit."""
    return {led} if card[-1] != led else set()


def _forbidden_suits(voids: dict[int, set[str]], pool: list[str]) -> dict[int, set[str]]:
    return {seat: {c for c in pool if c[-1] in suits} for seat, suits in voids.items()}


# -- Alles oder Nichts ---------------------------------------------------------------------------


def _alles_oder_nichts(view, events, rng, options) -> GameState:
    n, me = view["players"], view["seat"]
    round_index = view["round"] - 1
    size = HAND_SIZES[round_index]
    deal = current_deal_events(events, ("round_start",))
    own = _dealt_to(deal, me)
    plays = _trick_plays(deal)
    played = [card for _, card, _ in plays]
    trump_card = view["trump_card"]
    known = set(own) | set(played) | {trump_card}
    pool = [c for c in COLOURS_48.cards if c not in known]
    counts = view["hand_counts"]
    sizes: dict[Any, int] = {s: counts[s] for s in range(n) if s != me}
    sizes["stock"] = len(pool) - sum(sizes.values())
    voids = _voids_in_tricks(plays, me, None, _follow_rule)
    hidden = deal_uniform(pool, sizes, _forbidden_suits(voids, pool), rng)
    hands = _original_hands(n, me, own, hidden, plays)
    deck = [c for s in range(n) for c in hands[s]] + [trump_card]
    state = _fresh(AllesOderNichts, n, {}, deck, _seed(rng))
    state.round = round_index
    state.first_dealer = (view["dealer"] - round_index) % n
    state.totals = list(view["scores"])
    state._others = [tuple(s for s in range(n) if s != seat) for seat in range(n)]
    state._start_round()
    open_bids = view["bids"]
    actions: list[tuple[int, str]] = []
    for event in deal:
        kind = event.get("type")
        if kind == "bid":
            seat = event["seat"]
            bid = event.get("bid", open_bids[seat])
            if bid is None:  # a secret bid: any is possible
                bid = rng.randrange(size + 1)
            actions.append((seat, f"bid:{bid}"))
        elif kind == "declare":
            actions.append((event["seat"], "declare:" + event["declaration"]))
        elif kind == "play":
            actions.append((event["seat"], event["card"]))
    _replay(state, actions)
    return state


def _dealt_to(deal: list[dict[str, Any]], seat: int) -> list[str]:
    """Every card the deal events show dealt to ``seat`` (all its packets)."""
    cards: list[str] = []
    for event in deal:
        if event.get("type") == "deal" and event.get("seat") == seat and "cards" in event:
            cards.extend(event["cards"])
    return cards


def _original_hands(n, me, own, hidden, plays) -> list[list[str]]:
    """Each seat's cards at the start of the deal: its hidden (or own) cards plus what it played."""
    hands = [list(own) if s == me else list(hidden[s]) for s in range(n)]
    for seat, card, _ in plays:
        if seat != me:
            hands[seat].append(card)
    return hands


# -- Eight Rounds --------------------------------------------------------------------------------


def _eight_rounds(view, events, rng, options) -> GameState:
    n, me = view["players"], view["seat"]
    round_index = view["round"] - 1
    deal = current_deal_events(events, ("round_start",))
    own = _dealt_to(deal, me)
    removed = list(view["removed"])
    counts = view["hand_counts"]
    if round_index == PATIENCE_ROUND:
        plays, forbidden = _patience_knowledge(deal, n, removed)
    else:
        plays = _trick_plays(deal)
        forbidden = {}
    played = {card for _, card, _ in plays}
    pool = [c for c in STANDARD_52.without(removed) if c not in played and c not in own]
    if round_index != PATIENCE_ROUND:
        voids = _voids_in_tricks(plays, me, None, _follow_rule)
        forbidden = _forbidden_suits(voids, pool)
    forbidden.pop(me, None)
    sizes = {s: counts[s] for s in range(n) if s != me}
    hidden = deal_uniform(pool, sizes, forbidden, rng)
    hands = _original_hands(n, me, own, hidden, plays)
    deck = [c for s in range(n) for c in hands[s]]
    state = _fresh(EightRounds, n, {}, deck, _seed(rng))
    state.first_dealer = (view["dealer"] - round_index) % n
    state.removed = removed
    state.hand_size = (52 - len(removed)) // n
    state.totals = list(view["scores"])
    state.round = round_index
    state._start_round()
    actions = [
        (event["seat"], event["card"] if event["type"] == "play" else "pass")
        for event in deal
        if event.get("type") in ("play", "pass")
    ]
    _replay(state, actions)
    return state


_PATIENCE_ORDER = {
    s: [r + s for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")]
    for s in STANDARD_52.suits
}


def _patience_knowledge(deal, n, removed):
    """The patience plays as (seat, card, None) and, per seat, the cards its passes rule out."""
    sequences = {s: [c for c in _PATIENCE_ORDER[s] if c not in removed] for s in _PATIENCE_ORDER}
    rows: dict[str, tuple[int, int]] = {}
    plays: list[tuple[int, str, str | None]] = []
    forbidden: dict[int, set[str]] = {}
    consecutive = 0
    sevens = {"7" + s for s in _PATIENCE_ORDER}
    for event in deal:
        kind = event.get("type")
        if kind == "play":
            card = event["card"]
            plays.append((event["seat"], card, None))
            seq = sequences[card[-1]]
            index = seq.index(card)
            low, high = rows.get(card[-1], (index, index))
            rows[card[-1]] = (min(low, index), max(high, index))
            consecutive = 0
        elif kind == "pass":
            ruled_out = forbidden.setdefault(event["seat"], set())
            if not rows or consecutive >= n - 1:  # no 7 down yet, or a forced pass
                ruled_out |= sevens
            for suit, (low, high) in rows.items():
                seq = sequences[suit]
                if low > 0:
                    ruled_out.add(seq[low - 1])
                if high < len(seq) - 1:
                    ruled_out.add(seq[high + 1])
            consecutive += 1
    return plays, forbidden


# -- Vingt-down ----------------------------------------------------------------------------------


def _vingt_rule(seat, card, led, trick, trump) -> set[str]:
    """Follow suit; else trump if you can: not following shows a void, not trumping too."""
    if card[-1] == led:
        return set()
    return {led} if card[-1] == trump or trump is None else {led, trump}


def _vingt_down(view, events, rng, options) -> GameState:
    n, me = view["players"], view["seat"]
    forehand, trump = view["forehand"], view["trump"]
    deal = current_deal_events(events, ("deal_start",))
    packets = [e["cards"] for e in deal if e.get("type") == "deal" and e.get("seat") == me]
    counts: dict[int, int] = {}  # exchange counts, for every seat that has exchanged
    own_discards: list[str] = []
    own_drawn: list[str] = []
    for event in deal:
        if event.get("type") == "exchange":
            counts[event["seat"]] = event["count"]
            if event["seat"] == me:
                own_discards, own_drawn = event["discarded"], event["drawn"]
    plays = _trick_plays(deal)
    played = {card for _, card, _ in plays}
    known = {c for packet in packets for c in packet} | set(own_drawn) | played
    pool = [c for c in PIQUET_32.cards if c not in known]
    hand_counts = view["hand_counts"]
    others = [s for s in range(n) if s != me]
    sizes: dict[Any, int] = {s: hand_counts[s] for s in others}
    for s in others:
        if s in counts:
            sizes[("discards", s)] = counts[s]
    sizes["stock"] = len(pool) - sum(sizes.values())
    voids = _voids_in_tricks(plays, me, trump, _vingt_rule)
    hidden = deal_uniform(pool, sizes, _forbidden_suits(voids, pool), rng)
    played_by: dict[int, list[str]] = {s: [] for s in range(n)}
    for seat, card, _ in plays:
        played_by[seat].append(card)
    # Each seat's packets and draws, then the deck in dealing order (SPEC 9.2).
    first: dict[int, list[str]] = {}
    second: dict[int, list[str]] = {}
    drawn: dict[int, list[str]] = {}
    discards: dict[int, list[str]] = {}
    second_dealt = len(packets) >= 2
    for s in range(n):
        if s == me:
            first[s] = list(packets[0])
            second[s] = list(packets[1]) if second_dealt else []
            drawn[s], discards[s] = list(own_drawn), list(own_discards)
            continue
        after = list(hidden[s]) + played_by[s]  # what the seat held after its exchange
        discards[s] = list(hidden.get(("discards", s), []))
        if s in counts:
            rng.shuffle(after)
            drawn[s] = after[: counts[s]]
            dealt = after[counts[s] :] + discards[s]
        else:
            drawn[s], dealt = [], after
        rng.shuffle(dealt)
        first[s], second[s] = dealt[:2], dealt[2:]
    order = [(forehand + i) % n for i in range(n)]
    stock = list(hidden["stock"])
    rng.shuffle(stock)
    deck = [c for s in order for c in first[s]]
    if second_dealt:  # else the second packets are still in the stock (its first 12 cards)
        deck += [c for s in order for c in second[s]]
    deck += [c for s in order if s in counts for c in drawn[s]] + stock
    state = _fresh(VingtDown, n, {**options, **view_options(view)}, deck, _seed(rng))
    state.first_dealer = (view["dealer"] - (view["deal"] - 1)) % n
    state.max_deals = view["max_deals"]
    state.drop_out = view["drop_out"]
    state.deal = view["deal"] - 1
    state.totals = list(view["scores"])
    state._start_deal()
    actions: list[tuple[int, str]] = []
    for event in deal:
        kind = event.get("type")
        if kind == "trump" and event.get("chosen_by") is not None:
            actions.append((event["chosen_by"], "trump:" + event["suit"]))
        elif kind == "exchange":
            seat = event["seat"]
            cards = PIQUET_32.sorted(discards[seat])
            actions.append((seat, "discard:" + (",".join(cards) if cards else "none")))
        elif kind == "drop":
            actions.append((event["seat"], event["choice"]))
        elif kind == "play":
            actions.append((event["seat"], event["card"]))
    _replay(state, actions)
    return state


def view_options(view: dict[str, Any]) -> dict[str, Any]:
    """The game options a view shows (the rest take their defaults)."""
    if view["game"] == "vingt-down":
        return {"max_deals": view["max_deals"], "drop_out": view["drop_out"]}
    return {}


# -- All Fours -----------------------------------------------------------------------------------


def _all_fours_rule(no_undertrump: bool):
    def rule(seat, card, led, trick, trump) -> set[str]:
        suit = card[-1]
        if led == trump:
            return {trump} if suit != trump else set()
        if suit != led and suit != trump:
            return {led}
        if no_undertrump and suit == trump:
            top = max(
                (STANDARD_52.rank[c] for _, c in trick if c[-1] == trump),
                default=None,
            )
            if top is not None and STANDARD_52.rank[card] < top:
                return {s for s in STANDARD_52.suits if s != trump}  # it held only trumps
        return set()

    return rule


def _all_fours(view, events, rng, options) -> GameState:
    me = view["seat"]
    n = 4
    deal = current_deal_events(events, ("hand_start", "redeal"))
    no_undertrump = bool(AllFours.SPEC.resolve_options(options)["no_undertrump"])
    own = _dealt_to(deal, me)
    plays = _trick_plays(deal)
    played = {card for _, card, _ in plays}
    kicked = list(view["kicked"])
    known = set(own) | played | set(kicked)
    pool = [c for c in STANDARD_52.cards if c not in known]
    counts = view["hand_counts"]
    sizes: dict[Any, int] = {s: counts[s] for s in range(n) if s != me}
    sizes["stock"] = len(pool) - sum(sizes.values())
    voids = _voids_in_tricks(plays, me, view["trump"], _all_fours_rule(no_undertrump))
    hidden = deal_uniform(pool, sizes, _forbidden_suits(voids, pool), rng)
    hands = _original_hands(n, me, own, hidden, plays)
    for seat, hand in enumerate(hands):
        if seat != me:  # which packet each of its cards came in is never seen
            rng.shuffle(hand)
    dealer = view["dealer"]
    order = [(dealer - 1 - i) % n for i in range(n)]
    deck = [c for s in order for c in hands[s][:6]] + [kicked[0]]
    for run in range(1, len(kicked)):
        start = 6 + 3 * (run - 1)
        deck += [c for s in order for c in hands[s][start : start + 3]] + [kicked[run]]
    stock = list(hidden["stock"])
    rng.shuffle(stock)
    deck += stock
    state = _fresh(AllFours, n, options, deck, _seed(rng))
    state.no_undertrump = state.options["no_undertrump"]
    state.game_points = state.options["game_points"]
    state.dealer_seat = dealer
    state.team_scores = [0, 0]
    state.hand_number = view["hand_number"]
    state._start_hand()
    actions = [
        (event["seat"], event["type"])
        for event in deal
        if event.get("type") in ("stand", "beg", "give", "run")
    ] + [(event["seat"], event["card"]) for event in deal if event.get("type") == "play"]
    _replay(state, actions)
    state.team_scores = list(view["team_scores"])
    assert all_fours_right_of(dealer) == state.beggar
    return state


_BUILDERS: dict[str, Callable[..., GameState]] = {
    "alles-oder-nichts": _alles_oder_nichts,
    "vingt-down": _vingt_down,
    "eight-rounds": _eight_rounds,
    "all-fours": _all_fours,
}
