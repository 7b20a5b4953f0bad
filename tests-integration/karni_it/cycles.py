"""Finding import circles: modules that import each other, directly or through others.

grimp, the graph import-linter is built on, lists every import of every
module of the given packages, including those inside functions and under
``TYPE_CHECKING``. A circle is a strongly connected group of two or more
modules (each reaches every other by imports); each group is reported with
one loop through it, so a failure can name the imports to break.
"""

from __future__ import annotations

from collections import deque

ROOTS = ("karni", "karni_history_adr", "karni_historian", "karni_provider_testkit")
"""The top-level packages of every distribution in the workspace."""


class Circle:
    """A strongly connected group of modules, and one loop of imports among them."""

    def __init__(self, modules: frozenset[str], loop: list[str]) -> None:
        self.modules = modules
        self.loop = loop

    def __str__(self) -> str:
        members = ", ".join(sorted(self.modules))
        return f"{{{members}}}, e.g. {' -> '.join(self.loop)}"


def import_circles(roots: tuple[str, ...] = ROOTS) -> list[Circle]:
    """Every import circle among the modules of ``roots``, in module order."""
    import grimp

    graph = grimp.build_graph(*roots, cache_dir=None)
    modules = sorted(graph.modules)
    edges = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in modules}
    groups = [group for group in _strongly_connected(modules, edges) if len(group) > 1]
    circles = [Circle(frozenset(group), _loop(min(group), set(group), edges)) for group in groups]
    return sorted(circles, key=lambda circle: sorted(circle.modules))


def _strongly_connected(modules: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, without recursion (import chains run deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(edges.get(target, ()))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                groups.append(sorted(group))
    return groups


def _loop(start: str, group: set[str], edges: dict[str, list[str]]) -> list[str]:
    """The shortest chain of imports from ``start`` back to itself, inside ``group``."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for target in edges[module]:
            if target == start:
                back = [module]
                while back[-1] != start:
                    back.append(came_from[back[-1]])
                return [*reversed(back), start]
            if target in group and target not in came_from:
                came_from[target] = module
                queue.append(target)
    raise ValueError(f"{start} is in no loop of {sorted(group)}")
