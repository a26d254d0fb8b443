"""A generated catalogue of single meaningful edits of a match record (the record-audit mutation
test, tests/referee/test_record_audit.py, and benchmarks/record_audit.py).

Field by field: every number +1 and -1, every boolean flipped, a string swapped for another
value the same field has elsewhere in the record, two neighbouring items of a list swapped;
line by line: a line deleted, duplicated, swapped with the next. Each kind of field (the line's
kind, and the field's path with list positions left out) is edited at its first occurrences and
its last, so the catalogue stays small while every field of every kind of line is edited.

An edit that leaves the record's bytes as they were is no edit. :func:`unrevealable` names the
edits that neither the record nor its results row can reveal, and why: the checker is asked to
catch every other one.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from arena.games import find_game

Path_ = tuple[Any, ...]


@dataclass(frozen=True)
class Edit:
    """One edit: ``what`` it did (for messages), the ``shape`` of the field or line edited,
    the operation ``op``, the field's ``path`` in its line (() for a line edit), and the
    edited record's lines."""

    what: str
    shape: str
    op: str
    path: Path_
    lines: tuple[bytes, ...]


def line_kind(value: Any) -> str:
    """The kind of a record line: its type (with a reply's verdict, an action's chooser, a
    fault's kind), or a compact record's decision array by its length."""
    if isinstance(value, list):
        if len(value) == 2:
            return "array[us,index]" if not isinstance(value[1], str) else "array[seat,action]"
        return f"array[{len(value)}]"
    kind = value.get("type", "?")
    for detail in ("verdict", "by", "kind"):
        if detail in value and kind in ("reply", "action", "fault"):
            return f"{kind}[{value[detail]}]"
    return kind


def _leaves(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every value in a line with its path, containers included (lists are swapped whole)."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))


def _shape(kind: str, path: Path_) -> str:
    """A field's kind: list positions left out, but a decision array's (each is a field)."""
    field = kind.startswith("array") and path
    steps = [f"[{path[0]}]"] if field else []
    steps += ["[*]" if isinstance(p, int) else f".{p}" for p in path[1 if field else 0 :]]
    return kind + "".join(steps)


def _set(value: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = _set(value[path[0]], path[1:], new)
    return copy


def _encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _changes(value: Any, others: list[Any]) -> Iterator[tuple[str, Any]]:
    """The edits of one value: (operation, new value)."""
    if isinstance(value, bool):
        yield "flip", not value
    elif isinstance(value, int | float):
        yield "+1", value + 1
        yield "-1", value - 1
    elif isinstance(value, str):
        other = next((o for o in others if isinstance(o, str) and o != value), None)
        if other is not None:
            yield "swap value", other
    elif isinstance(value, list):
        for i in range(len(value) - 1):
            if value[i] != value[i + 1]:
                swapped = list(value)
                swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
                yield "swap items", swapped
                break


def catalogue(lines: list[bytes], *, first: int = 1, last: bool = True) -> list[Edit]:
    """The single edits of a record's lines (compact or full): each field kind edited at its
    ``first`` occurrences and (``last``) at its last one; each line kind deleted, duplicated
    and swapped with its next line at the same occurrences."""
    values = [json.loads(line) for line in lines]
    kinds = [line_kind(v) for v in values]
    at: dict[str, list[tuple[int, Path_]]] = defaultdict(list)  # shape -> occurrences
    seen: dict[str, list[Any]] = defaultdict(list)  # shape -> its values, for swaps
    for number, (value, kind) in enumerate(zip(values, kinds)):
        at[kind].append((number, ()))
        for path, leaf in _leaves(value):
            if path:
                shape = _shape(kind, path)
                at[shape].append((number, path))
                if isinstance(leaf, str):
                    seen[shape].append(leaf)
    edits: list[Edit] = []
    for shape, places in at.items():
        chosen = places[:first] + (places[-1:] if last and len(places) > first else [])
        for number, path in chosen:
            if not path:  # a line kind: line edits
                edits += _line_edits(lines, number, shape)
                continue
            value = values[number]
            leaf = value
            for step in path:
                leaf = leaf[step]
            for op, new in _changes(leaf, seen[shape]):
                edited = _encode(_set(value, path, new))
                if edited != lines[number]:
                    changed = (*lines[:number], edited, *lines[number + 1 :])
                    what = f"line {number + 1} {shape} {op}"
                    edits.append(Edit(what, shape, op, path, changed))
    return edits


def _line_edits(lines: list[bytes], number: int, shape: str) -> list[Edit]:
    if number == 0:  # the header: deleting or moving it is no record at all
        return []
    rest = lines[number + 1 :]
    what = f"line {number + 1} {shape}"
    edits = [
        Edit(f"{what} deleted", shape, "delete", (), (*lines[:number], *rest)),
        Edit(f"{what} duplicated", shape, "duplicate", (), (*lines[: number + 1], *lines[number:])),
    ]
    if rest and rest[0] != lines[number]:
        swapped = (*lines[:number], rest[0], lines[number], *rest[1:])
        edits.append(Edit(f"{what} swapped with the next", shape, "swap lines", (), swapped))
    return edits


def _answer(line: bytes) -> dict | None:
    """The reply of a full ``reply`` line or a compact 7-field decision array, as JSON."""
    value = json.loads(line)
    text = value[5] if isinstance(value, list) and len(value) == 7 else None
    if isinstance(value, dict):
        text = value.get("text")
    try:
        answer = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def _same_answer(original: list[bytes], edited: tuple[bytes, ...], number: int) -> bool:
    """Whether line ``number``'s reply, edited, still answers its request's id with the action
    the record says was chosen (compact: the array's; full: the next action line's, with the
    request's legal actions to read an index by)."""
    before, after = _answer(original[number]), _answer(edited[number])
    if before is None or after is None or before.get("id") != after.get("id"):
        return False
    value = json.loads(original[number])
    legal: list[str] | None = None
    if isinstance(value, list):
        chosen = value[6]
    else:
        legal = _legal_before(original, number)
        chosen = next(
            (
                entry.get("action")
                for entry in map(json.loads, original[number + 1 :])
                if isinstance(entry, dict) and entry.get("type") == "action"
            ),
            None,
        )
    if "action" in after:
        return after["action"] == chosen
    index = after.get("index")
    if legal is not None and isinstance(index, int) and 0 <= index < len(legal):
        return legal[index] == chosen
    return "index" in before and index == before["index"]


def unrevealable(
    edit: Edit, original: list[bytes], compact: bool, has_short_arrays: bool
) -> str | None:
    """Why neither the record (``original`` before the edit) nor its results row can reveal
    ``edit``, but perhaps in a fault's English message (None: they can)."""
    shape, op = edit.shape, edit.op
    if shape in ("reply[ok].text", "array[7][5]") and op == "swap value":
        number = int(edit.what.split(" ")[1]) - 1
        if _same_answer(original, edit.lines, number):
            # (another seat's reply to a request of the same id that chose the same action:
            # whether a record holds one depends on the bots' play, so on the ids they are sent)
            return "another seat's answer with the same id and the same action"
    if shape == "reply[late]" and op == "delete":
        return "a late line gone: the same timeout, charged the same (its message differs)"
    if shape in ("reply[stale].text", "reply[illegal].text") and op == "swap value":
        number = int(edit.what.split(" ")[1]) - 1
        before = json.loads(json.loads(original[number])["text"])
        after = json.loads(json.loads(edit.lines[number])["text"])
        if before.get("id") == after.get("id"):
            if shape == "reply[stale].text":
                return "another answer in a stale line: only its id is ever read"
            legal = _legal_before(original, number)
            if _illegal(after, legal) and _illegal(before, legal):
                return "another illegal answer: the same fault (its message differs)"
    if shape == "header.started":
        return "when the match started: written in the header alone"
    if shape in ("header.seats[*].ready_name", "header.seats[*].version"):
        return "what the bot said in ready: recorded, never used"
    if shape == "reply[stale].ms":
        return "a stale line's time: bounded below only (it came after its decision ended)"
    if shape == "reply[stale]" and op in ("delete", "duplicate"):
        return "a stale line gone or repeated: up to 5 are recorded, nothing counts them"
    if shape == "header.format" and op == "-1" and not (compact and has_short_arrays):
        return "formats 1 to 3 have the same full lines (compact ones differ in arrays only)"
    if shape == "array[us,index][1]" and compact and _another_game(edit.lines, original):
        return (
            "another legal game with the same result: a compact record names a canonical "
            "reply's action by its index only, and a results row holds no actions"
        )
    if shape in ("array[7][3]", "array[us,index][0]") and op in ("+1", "-1"):
        return "a microsecond of a decision's time: finer than the results file's 0.01 ms"
    return None


def _legal_before(lines: list[bytes], number: int) -> list[str]:
    """The legal actions of the request a full record's line ``number`` answers."""
    for line in reversed(lines[:number]):
        value = json.loads(line)
        if isinstance(value, dict) and value.get("type") == "request":
            return value["legal"]
    return []


def _illegal(answer: dict, legal: list[str]) -> bool:
    index = answer.get("index")
    if isinstance(index, int):
        return not 0 <= index < len(legal)
    return answer.get("action") not in legal


def _another_game(edited: tuple[bytes, ...], original: list[bytes]) -> bool:
    """Whether a compact record with one decision's index changed is still a whole match by the
    rules with the original's result: the actions its arrays and lines name, played from its
    header's seed (the rules engines themselves, not the record's checker)."""
    header = json.loads(original[0])
    result = json.loads(original[-1])
    spec = find_game(header["game"])
    state = spec.new_match(
        header["players"], spec.resolve_options(header["options"]), header["seed"]
    )
    ids: dict[int, int] = {}
    for line in edited[1:]:
        value = json.loads(line)
        if isinstance(value, dict):
            if value.get("type") == "request":
                ids[value["seat"]] = value["id"]
            if value.get("type") != "action":
                continue
            action = value["action"]
        elif len(value) == 2 and not isinstance(value[1], str):
            legal = state.legal_actions()
            if not 0 <= value[1] < len(legal):
                return False
            action = legal[value[1]]
        else:
            action = value[-1]
        if state.is_over or action not in state.legal_actions():
            return False
        state.apply(action)
    if not state.is_over:
        return False
    outcome = state.result()
    return (
        list(outcome.scores) == result["scores"]
        and list(outcome.placings) == result["game_placings"]
    )


def has_short_arrays(lines: list[bytes]) -> bool:
    """Whether a compact record holds format 3's short arrays ``[us, index]``."""
    for line in lines:
        if line.startswith(b"["):
            value = json.loads(line)
            if len(value) == 2 and not isinstance(value[1], str):
                return True
    return False
