"""The decision structure SPEC.md section 8 promises, checked on a match record.

Each decision is one ``request`` (or ``autopilot``) line, then the ``reply`` lines read for it
(``pending`` is its id), then at most one ``fault`` (with its id), then one ``action``: by the bot
(with the request's id, and no fault) or by the autopilot (after exactly one fault, or for an
``autopilot`` decision with no reply and no fault). A fault outside a decision has no id (startup).
"""

from __future__ import annotations

from typing import Any


def decision_problems(entries: list[dict[str, Any]]) -> list[str]:
    """Every way ``entries`` (a record's lines) break the one-decision-one-outcome rule."""
    problems: list[str] = []
    current: dict[str, Any] | None = None  # the decision in progress
    for n, entry in enumerate(entries):
        kind = entry["type"]
        where = f"line {n + 1} ({kind})"
        if kind in ("request", "autopilot"):
            if current is not None:
                problems.append(f"{where}: the decision of line {current['line']} has no action")
            current = {
                "line": n + 1,
                "kind": kind,
                "seat": entry["seat"],
                "id": entry.get("id"),
                "faults": 0,
                "replies": 0,
            }
        elif kind == "reply":
            if current is None or current["kind"] != "request":
                problems.append(f"{where}: a reply outside a request")
            elif entry["seat"] != current["seat"] or entry["pending"] != current["id"]:
                problems.append(f"{where}: charged to seat {entry['seat']} {entry['pending']}")
            elif current["faults"]:
                problems.append(f"{where}: a reply after the decision's fault")
            else:
                current["replies"] += 1
        elif kind == "fault":
            if current is None:
                if entry["id"] is not None:
                    problems.append(f"{where}: fault for request {entry['id']} outside it")
            elif current["kind"] != "request":
                problems.append(f"{where}: a fault in an autopilot decision")
            elif entry["seat"] != current["seat"] or entry["id"] != current["id"]:
                problems.append(
                    f"{where}: seat {entry['seat']} request {entry['id']} charged during "
                    f"seat {current['seat']} request {current['id']}"
                )
            else:
                current["faults"] += 1
                if current["faults"] > 1:
                    problems.append(f"{where}: a second fault for one decision")
        elif kind == "action":
            if current is None:
                problems.append(f"{where}: an action without a request or autopilot line")
                continue
            if entry["seat"] != current["seat"]:
                problems.append(f"{where}: seat {entry['seat']} moves in seat {current['seat']}'s")
            if entry["by"] == "bot":
                if current["kind"] != "request" or entry["id"] != current["id"]:
                    problems.append(f"{where}: a bot's action for id {entry['id']}")
                if current["faults"]:
                    problems.append(f"{where}: the bot's action applied after its fault")
            elif current["kind"] == "request" and current["faults"] != 1:
                problems.append(f"{where}: the autopilot moved for a request without a fault")
            current = None
    if current is not None:
        problems.append(f"the decision of line {current['line']} never ends")
    return problems
