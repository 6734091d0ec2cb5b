"""An import-linter contract of this project: no module uses another module's underscore names.

A leading underscore says "private to this module". Importing such a name (`from .engine import _check_input`) or
reading it off an imported module (`engine._check_input`) ties two modules to a detail one of them may change.
Configured in pyproject.toml; lint-imports finds this file with PYTHONPATH=.ci (tests/unit/test_import_contracts.py
runs it so).
"""

from __future__ import annotations

import ast
import importlib.util

from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name of the module a `from ... import` statement reads from."""
    if not node.level:
        return node.module or ""
    parts = importer.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def private_uses(importer: str, roots: tuple[str, ...]) -> list[str]:
    """Each use, in module `importer`, of an underscore name of another module of `roots`."""
    spec = importlib.util.find_spec(importer)
    source = open(spec.origin, encoding="utf-8").read()
    is_package = spec.submodule_search_locations is not None
    found, modules = [], {}  # modules: local name -> the project module it stands for
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            source_module = _resolve(importer, is_package, node)
            if source_module.split(".")[0] not in roots:
                continue
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{importer}:{node.lineno} imports {alias.name} from {source_module}")
                else:
                    modules[alias.asname or alias.name] = f"{source_module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in roots:
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in modules and modules[node.value.id] != importer):
            found.append(f"{importer}:{node.lineno} reads {node.attr} of {modules[node.value.id]}")
    return found


class PrivateNamesContract(Contract):
    """No module of `containers` imports or reads an underscore name of another module of the root packages."""

    type_name = "private_names"
    containers = fields.SetField(subfield=fields.ModuleExpressionField())

    def check(self, graph, verbose: bool) -> ContractCheck:
        roots = tuple(sorted({m.split(".")[0] for m in graph.modules}))
        containers = {c.expression for c in self.containers}
        uses = []
        for module in sorted(graph.modules):
            if any(module == c or module.startswith(c + ".") for c in containers):
                uses += private_uses(module, roots)
        return ContractCheck(kept=not uses, metadata={"uses": uses})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for use in check.metadata["uses"]:
            output.print_error(use, bold=False)
            output.new_line()
