"""A contract that some packages import nothing but the standard library and themselves.

karni-core runs before every edit an agent makes and is installed beside
anything, so it depends on no third-party package and no other Karni
package (docs/architecture.md). The built-in contracts can only forbid named
packages; this one forbids every import that is neither the standard library
nor one of ``allowed_modules``.
"""

from __future__ import annotations

import sys

from importlinter import Contract, ContractCheck, fields, output


class StandardLibraryOnlyContract(Contract):
    """``source_modules`` import only the standard library and ``allowed_modules``.

    Configuration::

        [[tool.importlinter.contracts]]
        name = "..."
        type = "stdlib_only"
        source_modules = ["karni.agent.history"]
        allowed_modules = ["karni.agent.history", "karni.agent.common"]
    """

    type_name = "stdlib only"

    source_modules = fields.ListField(subfield=fields.StringField())
    allowed_modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph, verbose):
        allowed = [str(module) for module in self.allowed_modules]
        violations = []
        for source in self.source_modules:
            importers = {str(source)} | graph.find_descendants(str(source))
            for importer in sorted(importers):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if not _permitted(imported, allowed):
                        violations.append((importer, imported))
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check):
        for importer, imported in check.metadata["violations"]:
            output.print_error(f"{importer} imports {imported}, which is not allowed here")
            output.new_line()


def _permitted(module: str, allowed: list[str]) -> bool:
    top = module.split(".", 1)[0]
    if top in sys.stdlib_module_names or top == "__future__":
        return True
    return any(module == name or module.startswith(name + ".") for name in allowed)
