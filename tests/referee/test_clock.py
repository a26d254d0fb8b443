"""Clock arithmetic: per-decision limit, bank with increment, margin forgiven and not carried."""

import pytest

from arena.referee.clock import SeatClock, TimeControl


def test_per_decision_limit_without_bank():
    clock = SeatClock(TimeControl(decision_ms=1000, margin_ms=50))
    assert clock.allowed_ms() == 1000 and clock.deadline_ms() == 1050
    charge = clock.charge(400)
    assert charge.in_time and charge.charged_ms == 0 and clock.allowed_ms() == 1000


def test_overrun_within_margin_is_forgiven_and_not_carried_over():
    clock = SeatClock(TimeControl(decision_ms=1000, bank_ms=5000, margin_ms=50))
    charge = clock.charge(1040)
    assert charge.in_time and charge.forgiven_ms == pytest.approx(40)
    assert charge.charged_ms == 1000 and clock.bank_left_ms == 4000


def test_overrun_beyond_margin_is_a_timeout():
    clock = SeatClock(TimeControl(decision_ms=1000, margin_ms=50))
    assert not clock.charge(1051).in_time
    assert clock.charge(1050).in_time


def test_bank_caps_a_decision_and_increment_refills_it():
    clock = SeatClock(TimeControl(decision_ms=1000, bank_ms=1500, increment_ms=200, margin_ms=0))
    assert clock.allowed_ms() == 1000
    clock.charge(900)  # 1500 - 900 + 200
    assert clock.bank_left_ms == 800 and clock.allowed_ms() == 800
    clock.charge(0.4)  # partial milliseconds round up
    assert clock.bank_left_ms == 999


def test_a_timeout_costs_the_allowed_time():
    clock = SeatClock(TimeControl(decision_ms=1000, bank_ms=700, increment_ms=100, margin_ms=10))
    charge = clock.charge(None)
    assert not charge.in_time and charge.charged_ms == 700 and clock.bank_left_ms == 100
    assert clock.allowed_ms() == 100


@pytest.mark.parametrize(
    "field, value", [("decision_ms", 0), ("margin_ms", -1), ("bank_ms", -5), ("startup_ms", -1)]
)
def test_bad_time_controls_are_refused(field, value):
    with pytest.raises(ValueError, match=field):
        TimeControl(**{field: value})


def test_the_no_bank_shortcut_charges_exactly_what_the_general_rule_gives():
    """charge() answers an in-time decision without a bank from a shortcut: compare it with the
    rule itself (SPEC.md 5) over times around every boundary."""
    control = TimeControl(decision_ms=1000, margin_ms=50)
    times = [0.0, 0.4, 999.0, 999.999, 1000.0, 1000.0001, 1049.5, 1050.0, 1050.0001, 2000.0]
    for used in times:
        charge = SeatClock(control).charge(used)
        in_time = used <= 1050
        assert charge.in_time is in_time
        assert charge.used_ms == used and charge.allowed_ms == 1000 and charge.charged_ms == 0
        assert charge.forgiven_ms == (max(0.0, used - 1000) if in_time else 0.0)


@pytest.mark.parametrize(
    "control",
    [TimeControl(decision_ms=100), TimeControl(decision_ms=100, bank_ms=250, increment_ms=20)],
)
def test_charged_in_time_is_what_charge_books(control):
    """The referee's usual decision asks only what the bank lost: the same as charge() books."""
    plain, short = SeatClock(control), SeatClock(control)
    for used in (0.2, 99.5, 100.0, 120.0, 37.0, 0.0):
        if used > plain.allowed_ms() + control.margin_ms:
            continue  # (in time only)
        assert short.charged_in_time_ms(used) == plain.charge(used).charged_ms
        assert short.bank_left_ms == plain.bank_left_ms
