"""The package's shape, as docs/architecture.md writes it down: layers that import one way, no cycle, no private
name used across modules, package ``__init__`` files that hold only their docstring, and short functions.

Every import counts here, at module level and inside functions alike (an import inside a function can hide a cycle
but not remove it), except imports of optional heavy libraries, which are not depgraph's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

from tests.conftest import REPO

PACKAGE = REPO / "depgraph"
ARCHITECTURE = REPO / "docs" / "architecture.md"
#: the longest a function may be, from ``def`` to its last line, its docstring not counted
LONGEST_FUNCTION = 60


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
TREES: dict[str, ast.Module] = {name: ast.parse(path.read_text(), str(path)) for name, path in MODULES.items()}


def _imported(module: str, node: ast.ImportFrom) -> str:
    """The absolute name an ``from … import`` statement names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(module: str) -> Iterator[tuple[str, list[str], int]]:
    """(imported depgraph module, names taken from it, line) for every import anywhere in ``module``."""
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "depgraph" or alias.name.startswith("depgraph."):
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _imported(module, node)
            if target == "depgraph" or target.startswith("depgraph."):
                names = [a.name for a in node.names]
                # ``from depgraph.x import y`` where y is a module imports the module depgraph.x.y
                submodules = [n for n in names if f"{target}.{n}" in MODULES]
                if len(submodules) < len(names):
                    yield target, [n for n in names if n not in submodules], node.lineno
                for name in submodules:
                    yield f"{target}.{name}", [], node.lineno


def _owner(name: str) -> str:
    """The module that holds ``name``: a module, or the package an imported name lives in."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _layers() -> list[list[str]]:
    """The layers docs/architecture.md lists, lowest first: the fenced block after ``<!-- layers -->``."""
    text = ARCHITECTURE.read_text()
    block = re.search(r"<!-- layers -->\s*```text\n(.*?)```", text, re.DOTALL)
    assert block, "docs/architecture.md must list the layers in a ```text block after <!-- layers -->"
    layers = []
    for line in block.group(1).splitlines():
        names = line.split("#")[0].split()
        if names:
            layers.append(names)
    return layers


LAYERS = _layers()
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def _layer(module: str) -> int:
    """A module's layer: that of its first-level name under depgraph (``depgraph.spec.files`` → ``spec``)."""
    if module == "depgraph":
        return len(LAYERS)  # the public API sits on top of everything
    unit = module.split(".")[1]
    assert unit in LAYER_OF, f"{module} is in no layer of docs/architecture.md"
    return LAYER_OF[unit]


def _import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for module in MODULES:
        for target, _, line in _imports(module):
            graph.add_edge(module, _owner(target), line=line)
    return graph


def test_every_module_is_placed_in_a_layer() -> None:
    units = {name.split(".")[1] for name in MODULES if name != "depgraph"}
    assert units - {"__main__"} <= set(LAYER_OF), sorted(units - set(LAYER_OF))
    assert set(LAYER_OF) <= units, f"docs/architecture.md names what is not there: {sorted(set(LAYER_OF) - units)}"


def test_imports_form_no_cycle() -> None:
    graph = _import_graph()
    graph.remove_edges_from(nx.selfloop_edges(graph))
    cycles = [" → ".join(c) for c in nx.simple_cycles(graph)]
    assert not cycles, "\n".join(cycles)


def test_imports_run_down_the_layers() -> None:
    """A module imports only from its own layer or a lower one, and only the top (``depgraph/__init__`` and
    ``python -m depgraph``) may import the package itself."""
    upward = [
        f"{module}:{line} imports {target}"
        for module in MODULES
        for target, _, line in _imports(module)
        if module not in {"depgraph", "depgraph.__main__"} and _layer(_owner(target)) > _layer(module)
    ]
    assert not upward, "\n".join(upward)


def test_nothing_imports_a_package_init() -> None:
    """Package ``__init__`` files other than the top one hold only their docstring, and nothing imports from them,
    so importing one module never loads a whole stage."""
    inits = {name for name, path in MODULES.items() if path.name == "__init__.py" and name != "depgraph"}
    for name in inits:
        body = TREES[name].body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), f"{name} holds more than its docstring"
    taken = [
        f"{module}:{line} takes {names} from {target}"
        for module in MODULES
        for target, names, line in _imports(module)
        if (target in inits and names) or (target == "depgraph" and module != "depgraph.__main__")
    ]
    assert not taken, "\n".join(taken)


def _module_aliases(module: str) -> set[str]:
    """Names bound to depgraph modules in ``module`` (``import depgraph.x as y``, ``from depgraph import x``)."""
    found = set()
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            found |= {a.asname for a in node.names if a.asname and a.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            target = _imported(module, node)
            found |= {a.asname or a.name for a in node.names if f"{target}.{a.name}" in MODULES}
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_private_name_is_used_across_modules() -> None:
    """``from depgraph.x import _name`` and ``module._name`` on another depgraph module are refused: what
    another module needs is public, or lives where it is used."""
    crossing = []
    for module in MODULES:
        for target, names, line in _imports(module):
            crossing += [f"{module}:{line} imports {target}.{n}" for n in names if _private(n) and target != module]
        aliases = _module_aliases(module)
        for node in ast.walk(TREES[module]):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
            ):
                crossing.append(f"{module}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not crossing, "\n".join(crossing)


def _length(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1
    return lines


def _says_why_one_piece(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the docstring says why the function must be one piece (a line starting ``One piece:``)."""
    doc = ast.get_docstring(node) or ""
    return any(line.strip().startswith("One piece:") for line in doc.splitlines())


def test_no_function_is_longer_than_the_limit() -> None:
    long = sorted(
        f"{module}.{node.name} ({_length(node)} lines)"
        for module, tree in TREES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _length(node) > LONGEST_FUNCTION
        and not _says_why_one_piece(node)
    )
    assert not long, "\n".join(long)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from depgraph.spec.files import read_spec\n", [("depgraph.spec.files", ["read_spec"])]),
        ("def f():\n    from depgraph.graph import model\n", [("depgraph.graph.model", [])]),
        ("import depgraph.vocab as v\n", [("depgraph.vocab", [])]),
    ],
)
def test_the_walker_sees_every_kind_of_import(source: str, expected: list, monkeypatch) -> None:
    """The checks above are only as good as the walker: it must see imports inside functions and imports of
    modules through ``from package import module``."""
    monkeypatch.setitem(TREES, "depgraph.probe", ast.parse(source))
    monkeypatch.setitem(MODULES, "depgraph.probe", PACKAGE / "probe.py")
    monkeypatch.setitem(MODULES, "depgraph.spec.files", PACKAGE / "spec" / "files.py")
    monkeypatch.setitem(MODULES, "depgraph.graph.model", PACKAGE / "graph" / "model.py")
    assert [(t, n) for t, n, _ in _imports("depgraph.probe")] == expected


# --------------------------------------------------------------------------- one vocabulary, used
def _vocabulary_literals(tree: ast.Module) -> list[tuple[int, str]]:
    """Strings in code (not docstrings) that are a relation's name or a node type's: code names them through
    ``vocab`` (``RelationName.SUBJECT_RELATED_TO``, ``NodeType.SAMPLE``), so a renamed relation is renamed once."""
    from depgraph.vocab import NODE_TYPES, RELATION_NAMES

    words = set(RELATION_NAMES) | {t.value for t in NODE_TYPES}
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in words and id(node) not in docstrings
    )


def test_relations_and_node_types_are_named_through_the_vocabulary() -> None:
    # the package's own API names a class Study (depgraph.study.model), not the node type
    exempt = {"depgraph.vocab", "depgraph"}
    found = [
        f"{module}:{line}: {word!r}"
        for module, tree in TREES.items()
        if module not in exempt
        for line, word in _vocabulary_literals(tree)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('x = graph.has_relation("subject_related_to")\n', [(1, "subject_related_to")]),
        ('if t == "Sample":\n    pass\n', [(1, "Sample")]),
        ('"""Docstrings may say sample_duplicate_of."""\nx = f"{1} sample_duplicate_of"\n', []),
        ("from depgraph.vocab import RelationName\nx = RelationName.SUBJECT_RELATED_TO\n", []),
    ],
)
def test_the_vocabulary_check_sees_literals_and_only_them(source: str, expected: list) -> None:
    assert _vocabulary_literals(ast.parse(source)) == expected


#: What a command may call from outside the command line besides its one library function: errors, turning an
#: option's text into a value (a key from its environment variable, a scheme's or a table's name, the schemes taking
#: an option, the study file's input tables) and the words of a finding or a share it prints.
PARSING = {"DepgraphError", "describe_ids", "key_from_env", "canonical_scheme_name", "table_format", "schemes_taking",
           "depgraph.study.inputs", "no_grouping_message", "TABLE_FORMATS", "share"}  # fmt: skip


def _command_calls(tree: ast.Module) -> dict[str, set[str]]:
    """Each command function of a ``cli/`` module (``..._command`` or registered with ``@app.command``), with the
    names it calls — itself or through the module's own helpers — that the module imports from outside ``cli``."""
    imported = {
        alias.asname or alias.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("depgraph")
        and not node.module.startswith("depgraph.cli")
        for alias in node.names
    }  # fmt: skip
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}

    def called(function: ast.FunctionDef, seen: set[str]) -> set[str]:
        names = {n.func.id for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        names |= {
            n.func.value.id
            for n in ast.walk(function)  # Study.read(...)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
        }
        found = {f"{imported[name]}.{name}" for name in names if name in imported}
        for name in names & functions.keys() - seen:
            found |= called(functions[name], seen | {name})
        return found

    def is_command(node: ast.FunctionDef) -> bool:
        decorated = any(
            isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command" for d in node.decorator_list
        )
        return decorated or node.name.endswith("_command")

    return {name: called(node, {name}) for name, node in functions.items() if is_command(node)}


def test_each_command_parses_its_options_and_calls_one_library_function() -> None:
    """A command in ``cli/`` calls one function of ``depgraph.study`` (the library function doing its work) and
    nothing else of the library but errors and option parsing: reading, computing and writing live below it, for
    Python callers too. The demo, a tour of every command, is the one exception."""
    found = {}
    for module, tree in TREES.items():
        if module.startswith("depgraph.cli.") and module not in {"depgraph.cli.demo", "depgraph.cli.main"}:
            for command, calls in _command_calls(tree).items():
                work = {call for call in calls if not {call.rsplit(".", 1)[1], call.rsplit(".", 1)[0]} & PARSING}
                if len(work) != 1 or not next(iter(work)).startswith("depgraph.study."):
                    found[f"{module}.{command}"] = sorted(work)
    assert not found, found
    assert len([m for m in TREES if m.startswith("depgraph.cli.")]) > 10  # the walk sees the commands


def test_the_command_check_follows_helpers_and_sees_stage_calls() -> None:
    source = (
        "from depgraph.spec.files import read_spec\nfrom depgraph.study.steps import fold_file\n"
        "@app.command('folds')\ndef folds(p):\n    _read(p)\n    fold_file(p)\n"
        "def _read(p):\n    return read_spec(p)\n"
    )
    assert _command_calls(ast.parse(source)) == {
        "folds": {"depgraph.spec.files.read_spec", "depgraph.study.steps.fold_file"}
    }
