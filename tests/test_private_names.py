"""No module imports another module's private name: a ``_name`` is its own module's business.

What one module needs of another has a public name (``sinks/redis/keys.py``,
``sinks/redis/errors.py``, ...); importing ``_something`` across modules couples
a caller to insides its owner may change without a word. The check reads every
module of the package's folders (their syntax, nothing is imported), resolves
relative imports, and fails naming each private import it finds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]
_PACKAGES = ("topics", "processors", "sinks", "models", "streams", "loadtest", "client")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(path: Path) -> tuple[str, bool]:
    """The dotted name of a module file, and whether it is a package's ``__init__``."""
    parts = path.relative_to(_REPO).with_suffix("").parts
    package = parts[-1] == "__init__"
    return ".".join(("slotwise", *(parts[:-1] if package else parts))), package


def _imported_from(node: ast.ImportFrom, module: str, package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def private_imports(path: Path, module: str, *, package: bool = False) -> Iterator[str]:
    """``line: from x import _name`` for each private name the source at ``path``, module
    ``module``, imports from another slotwise module (or each private module it imports)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            source = _imported_from(node, module, package)
            if not source.startswith("slotwise.") or source == module:
                continue
            for alias in node.names:
                if _private(alias.name) or any(_private(p) for p in source.split(".")):
                    yield f"{node.lineno}: from {source} import {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "slotwise" and any(_private(p) for p in parts):
                    yield f"{node.lineno}: import {alias.name}"


def _modules() -> Iterator[Path]:
    for package in _PACKAGES:
        yield from sorted((_REPO / package).rglob("*.py"))


def test_no_module_imports_another_modules_private_name() -> None:
    found = []
    for path in _modules():
        module, package = _module_of(path)
        where = path.relative_to(_REPO)
        found += [f"{where}:{line}" for line in private_imports(path, module, package=package)]
    assert found == [], "private names imported across modules:\n" + "\n".join(found)


def test_the_check_finds_a_private_import(tmp_path: Path) -> None:
    # The check must be able to fail: private names imported absolutely and relatively,
    # and a private module; a public import and one of the module's own names pass.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from slotwise.sinks.redis.store import RedisStore, _hidden\n"
        "from .keys import _SAFE\n"
        "from . import _secret\n"
        "import slotwise.sinks._internal\n"
        "from slotwise.topics.records import Fact\n"
        "from slotwise.sinks.redis.probe import _own\n",
        encoding="utf-8",
    )
    assert list(private_imports(probe, "slotwise.sinks.redis.probe")) == [
        "1: from slotwise.sinks.redis.store import _hidden",
        "2: from slotwise.sinks.redis.keys import _SAFE",
        "3: from slotwise.sinks.redis import _secret",
        "4: import slotwise.sinks._internal",
    ]
