"""The package layout is the architecture (docs/architecture.md): imports run one way.

Each folder of ``arena`` has a layer; a module may import its own layer and those below it,
never one above, and no two modules may import each other, directly or round a longer cycle.
``protocol`` imports nothing of ``arena``. A new folder must be given its layer here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. Folders on one layer may not import each other (they are side by side).
LAYERS: dict[str, int] = {
    "protocol": 0,  # the wire format; msgspec only
    "arena.games": 1,  # pure rules, stdlib only
    "arena.stats": 1,  # pure statistics over results (no processes, no SQL)
    "arena.kit": 2,  # the bot author's search kit: games only; the referee never imports it
    "arena.referee": 2,  # bot processes, lines, clock, one match, its record and result
    "arena.bots": 3,  # manifests, submissions, installed bots, the checker
    "arena.tournament": 4,  # config, schedule, executors, runner, store, standings
    "arena.render": 5,  # terminal (and web) drawing of standings, progress and records
    "arena.web": 6,  # the read-only web server
    "arena.league": 7,  # the league: its store, matchmaking, submissions and web server
    "arena.cli": 8,  # click commands: parse, call, print
    "arena": 9,  # the package itself (__init__, __main__)
}


def _package_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "protocol":
        return "protocol"
    if len(parts) >= 2 and f"arena.{parts[1]}" in LAYERS:
        return f"arena.{parts[1]}"
    return "arena"


def _modules() -> dict[str, Path]:
    found = {}
    for top in ("arena", "protocol"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(path: Path, module: str) -> set[str]:
    """Every arena/protocol module this file imports, at any depth (lazy imports count too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {n for n in names if n.split(".")[0] in ("arena", "protocol")}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        graph[module] = {
            name for name in _imports(path, module) if name in modules and name != module
        }
    return graph


def test_every_folder_has_a_layer() -> None:
    folders = {
        p.name for p in (ROOT / "arena").iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    missing = sorted(f"arena.{f}" for f in folders if f"arena.{f}" not in LAYERS)
    assert not missing, f"give these folders a layer in tests/test_layout.py: {missing}"


def test_imports_never_climb() -> None:
    climbs = []
    for module, imported in _graph().items():
        own = _package_of(module)
        for name in imported:
            other = _package_of(name)
            if other == own:
                continue
            if LAYERS[other] >= LAYERS[own]:
                climbs.append(f"{module} imports {name} ({other} is not below {own})")
    assert not climbs, "\n".join(sorted(climbs))


def test_protocol_imports_nothing_of_arena() -> None:
    bad = [
        f"{m} imports {n}"
        for m, imported in _graph().items()
        if m.startswith("protocol")
        for n in imported
        if n.startswith("arena")
    ]
    assert not bad, bad


def test_games_use_the_standard_library_only() -> None:
    allowed_third_party: set[str] = set()
    bad = []
    for module, path in _modules().items():
        if _package_of(module) != "arena.games":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                for name in names:
                    top = name.split(".")[0]
                    if top == "arena" and _package_of(name) == "arena.games":
                        continue
                    if top in allowed_third_party or top in __import__("sys").stdlib_module_names:
                        continue
                    bad.append(f"{module} imports {name}")
    assert not bad, bad


def test_no_import_cycles() -> None:
    graph = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


# What reads a library's private internals lives in one module per library, with a self-check
# and a public fallback (docs/architecture.md): no other module of the arena may.
FAST_PATH_MODULES = {
    "trio": "arena/referee/trio_fast.py",
    "openskill": "arena/tournament/openskill_fast.py",
}
# The private names those modules read, looked for as attributes anywhere else.
PRIVATE_NAMES = re.compile(
    r"\._(epoll|heap|schedule_points|cancel_status|runner|next_send_fn|registered_deadline"
    r"|compute|calculate_\w+)\b|\bGLOBAL_RUN_CONTEXT\b"
)


def _private_imports(tree: ast.AST, library: str) -> list[str]:
    """The imports in ``tree`` of a private module or name of ``library`` (a dotted part that
    starts with an underscore)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == library and any(part.startswith("_") for part in parts[1:]):
                found.append(name)
    return found


def test_only_the_fast_path_modules_touch_private_names_of_trio_and_openskill() -> None:
    bad = []
    for path in sorted((ROOT / "arena").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        tree = ast.parse(text, filename=relative)
        for library, home in FAST_PATH_MODULES.items():
            if relative != home:
                bad += [f"{relative} imports {name}" for name in _private_imports(tree, library)]
        if relative not in FAST_PATH_MODULES.values():
            for number, line in enumerate(text.splitlines(), 1):
                if PRIVATE_NAMES.search(line):
                    bad.append(f"{relative}:{number}: {line.strip()}")
    assert not bad, "move these into the library's fast-path module:\n" + "\n".join(bad)


def test_the_private_name_check_catches_what_it_looks_for() -> None:
    tree = ast.parse("import trio._core._run as r\nfrom openskill.models import _x\nimport trio")
    assert _private_imports(tree, "trio") == ["trio._core._run"]
    assert _private_imports(tree, "openskill") == ["openskill.models._x"]
    assert PRIVATE_NAMES.search("model._compute(teams)")
    assert PRIVATE_NAMES.search("runner.io_manager._epoll")
    assert not PRIVATE_NAMES.search("self._computed = 1")
