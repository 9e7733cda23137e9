"""The architecture as the imports draw it: each subsystem a package, no package importing one
above it, and no import circle between modules.

Every `import` and `from ... import` of schedc's modules counts, at module level or inside a
function (a lazy import is still an arrow); imports under `if TYPE_CHECKING:` do not.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Where each package's modules live (pyproject.toml's package-dir).
SOURCES = {"schedc": ROOT / "python" / "schedc", "schedc.passes": ROOT / "passes", "schedc.dialects": ROOT / "dialects",
           "schedc.tools": ROOT / "tools"}

# The layers, bottom to top: a module imports only modules of its own package and of lower
# layers. The runtime stands beside the decisions: it needs only iree-base-runtime; so do
# schedc's CPU kernels (C, built on first use), which the IR adapter links into executables.
LAYERS = [
    ("schedc.errors", "schedc.outputs", "schedc.targets", "schedc.options", "schedc.version", "schedc.dialects"),
    ("schedc.decisions", "schedc.runtime", "schedc.kernels"),
    ("schedc.ir",),
    ("schedc.passes",),
    ("schedc.report",),
    ("schedc.compiler",),
    ("schedc.tune", "schedc.torch"),
    ("schedc.tools", "schedc"),
]


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for child in ast.walk(node):
                lines.add(getattr(child, "lineno", -1))
    return lines


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text())
    skipped = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {t for t in targets if t in known and t != name}


def layer_of(module: str) -> int:
    best = None
    for index, layer in enumerate(LAYERS):
        for prefix in layer:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > len(best[1]):
                    best = (index, prefix)
    assert best is not None, f"{module} belongs to no layer of test_layering.LAYERS"
    return best


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def test_every_module_belongs_to_a_subsystem_package():
    flat = [m for m in modules() if m.count(".") == 1 and layer_of(m)[1] == "schedc"]
    assert flat == [], f"modules directly under schedc/ that belong to no subsystem: {flat}"


def test_no_package_imports_one_above_it():
    upward = []
    for module, imported in graph().items():
        (level, package) = layer_of(module)
        for target in imported:
            target_level, target_package = layer_of(target)
            if target_package == package or target_level < level or target_level == level == 0:
                continue  # the base layer's modules are one package
            upward.append(f"{module} -> {target}")
    assert upward == [], "imports of a package from one at its level or above:\n" + "\n".join(sorted(upward))


def test_no_import_circles():
    imports = graph()
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in imports[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    # A package's __init__ that re-exports its modules is the package itself, not a circle.
    circles = [c for c in circles if not all(m == c[0] or m.startswith(c[0] + ".") for m in c)]
    assert circles == [], f"import circles: {circles}"


def test_a_pass_and_its_decision_have_one_name():
    from schedc.passes import REGISTRY

    decisions = {p.stem for p in (SOURCES["schedc"] / "decisions").glob("*.py")}
    shared = {"__init__", "kernel_graph", "liveness", "segments", "budget"}
    for name in REGISTRY:
        module = name.replace("-", "_")
        assert (SOURCES["schedc.passes"] / f"{module}.py").is_file(), f"pass {name}: no passes/{module}.py"
    orphans = decisions - shared - {n.replace("-", "_") for n in REGISTRY}
    assert orphans == set(), f"decision modules named after no pass: {sorted(orphans)}"
