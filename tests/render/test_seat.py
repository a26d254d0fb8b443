"""What a person's terminal shows of its seat's messages (arena.render.seat): every line within
the width, names for seats, the view's summary, and the person's typing understood."""

from __future__ import annotations

from arena.games import GAMES
from arena.render.seat import Narrator, others_move, pick


def test_a_typed_answer_is_a_number_the_action_or_its_part_after_the_colon():
    legal = ["declare:open", "declare:secret"]
    assert pick("2", legal) == "declare:secret"
    assert pick(" Declare:Open ", legal) == "declare:open"
    assert pick("secret", legal) == "declare:secret"
    assert pick("3", legal) is None and pick("0", legal) is None and pick("", legal) is None
    assert pick("qs", ["QS", "7H"]) == "QS"
    assert pick("10r", ["10R"]) == "10R" and pick("10", ["10R"]) is None
    assert pick("x", ["a:x", "b:x"]) is None  # two actions end so: neither is guessed


def test_every_message_of_a_match_fits_the_width():
    """A whole match of each game, as one seat is told it: the narrator's lines fit 80 columns,
    with its hand and choices at each of its decisions and the result at the end."""
    for game in GAMES.values():
        state = game.new_match(seed=4)
        narrator = Narrator(80)
        start = {
            "type": "match_start",
            "game": game.id,
            "seat": 0,
            "seats": [{"seat": s, "name": f"bot{s}", "team": None} for s in range(state.players)],
        }
        lines = narrator.lines(start)
        seen = 0
        while not state.is_over:
            for event in state.events[seen:]:
                if event.visible_to(0):
                    lines += narrator.lines({"type": "event", "event": event.data})
            seen = len(state.events)
            if state.seat_to_move == 0:
                lines += narrator.table(state.view(0))
                lines += narrator.choices(state.decision, state.legal_actions())
            state.apply(state.legal_actions()[-1])
        lines += narrator.lines(
            {
                "type": "match_end",
                "scores": [1] * state.players,
                "placings": [1] * state.players,
                "reason": "completed",
            }
        )
        assert lines and max(len(line) for line in lines) <= 80, game.id
        assert "you are seat 0" in lines[0]
        assert any("your hand:" in line for line in lines)
        assert lines[-state.players - 1] == "Match over (completed)."


def test_the_pause_comes_after_another_seats_move_or_a_trick():
    assert others_move({"type": "event", "event": {"type": "play", "seat": 2, "card": "QS"}}, 0)
    assert not others_move({"type": "event", "event": {"type": "play", "seat": 0}}, 0)
    assert others_move({"type": "event", "event": {"type": "trick", "winner": 0}}, 0)
    assert not others_move({"type": "request"}, 0)
