"""No import circle among the modules of extraction/, nor between the packages of both apps: each stage and
each feature imports only the ones below it.

The graph comes from every import statement of every module (those inside functions too, which only hide a
circle from the interpreter), so a circle broken today by a lazy import still fails here.
"""

from __future__ import annotations

from tests.support.domain_modules import import_graph, is_pure, package_graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules, as a path that ends where it starts."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_circle(graph, group) for group in groups]


def _circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:  # breadth first inside the group: the shortest way back to the start
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no circle in {group}")


def _names(cycles: list[list[str]]) -> str:
    return "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_finder_names_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_pure_domain_modules_import_each_other_without_a_circle():
    graph = import_graph()
    pure = {name: {m for m in deps if is_pure(m)} for name, deps in graph.items() if is_pure(name)}
    cycles = _cycles(pure)
    assert not cycles, f"import circles among the domain modules:\n{_names(cycles)}"


def test_no_module_of_extraction_is_part_of_an_import_circle():
    cycles = _cycles(import_graph())
    assert not cycles, f"import circles in extraction/:\n{_names(cycles)}"


def test_no_package_of_either_app_is_part_of_an_import_circle():
    graph = package_graph()
    assert {"extraction.pipeline", "extraction.proofs", "reviewer.desk", "reviewer.audit"} <= set(graph)
    cycles = _cycles(graph)
    assert not cycles, f"import circles between packages:\n{_names(cycles)}"
