"""Import cycles among a package's modules, found from the source alone.

Every import counts, at module level or inside a function (a function-level
import hides a cycle from Python, not from the design), except those under
`if TYPE_CHECKING:`. `from a.b import c` is an edge to the module a.b.c when
there is one, else to a.b. Importing a module also runs its parents'
__init__, but that is not counted as an edge: a package's __init__ that
imports its own submodules is not a cycle.

    python -m tools.import_cycles                   # every cycle in zmlir
    python -m tools.import_cycles zmlir.runtime zmlir.trace   # those touching these

Exits 1 when a cycle is found; each is printed as one strongly connected
group of modules and one import loop through it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Compiled modules of the package (CMake builds them; they have no .py source
# and import nothing of ours): `from zmlir import _native` is an edge to no
# module of the graph, not to zmlir's __init__.
EXTENSIONS = frozenset({"zmlir._native"})


def modules(package_dir: Path) -> dict[str, Path]:
    """Module name -> source file, for every .py file under `package_dir`."""
    found = {}
    base = package_dir.parent
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, but under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imports(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules of `known` that module `name` (source at `path`) imports."""
    known = set(known)
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names if alias.name not in EXTENSIONS]
        else:
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            candidates = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                          for alias in node.names if f"{base}.{alias.name}" not in EXTENSIONS]
        for candidate in candidates:
            while candidate and candidate not in known:  # `import a.b.c` of a non-module c
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.add(candidate)
    return targets


def graph(package_dir: Path) -> dict[str, set[str]]:
    found = modules(package_dir)
    return {name: imports(name, path, found) for name, path in found.items()}


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the groups of two or more modules
    that import each other, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def loop(edges: dict[str, set[str]], group: list[str]) -> list[str]:
    """One import loop through the first module of `group` (a shortest one)."""
    members = set(group)
    start = group[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return group


def cycles(package_dir: Path, prefixes: Iterable[str] = ()) -> list[tuple[list[str], list[str]]]:
    """(group, one loop through it) for each import cycle; with `prefixes`,
    only the cycles that pass through a module under one of them."""
    prefixes = tuple(prefixes)
    edges = graph(package_dir)

    def selected(module: str) -> bool:
        return not prefixes or any(module == p or module.startswith(p + ".") for p in prefixes)

    return [(group, loop(edges, group)) for group in strongly_connected(edges)
            if any(selected(m) for m in group)]


def main(argv: list[str]) -> int:
    found = cycles(ROOT / "zmlir", argv)
    for group, path in found:
        print(f"cycle among {len(group)} modules: {', '.join(group)}")
        print("  " + " -> ".join(path))
    if not found:
        print("no import cycles" + (f" through {', '.join(argv)}" if argv else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
