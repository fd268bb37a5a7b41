"""Names a package exports but imports on first use (PEP 562).

A command pays for every module its imports pull in: ``reviewbench run`` needs the gates
file's reader from ``score`` but not scipy, which ``score``'s entry point needs (0.4 s).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(namespace: dict[str, Any], names: Mapping[str, str]) -> tuple[Callable[[str], object],
                                                                              Callable[[], list[str]]]:  # fmt: skip
    """``__getattr__`` and ``__dir__`` for the module whose globals are ``namespace``.

    ``names`` maps each lazily exported name to the module that defines it (absolute, or
    relative to the package). The value is cached in ``namespace`` on first use.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        namespace[name] = value  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
