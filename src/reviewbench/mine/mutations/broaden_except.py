"""broaden_except: a specific ``except`` clause catches ``Exception``, swallowing real errors."""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register

__all__ = ["BroadenExcept", "examples"]

_BROAD = frozenset({"Exception", "BaseException"})


@register
class BroadenExcept(Operator):
    name = "broaden_except"
    severity = Severity.MED
    hint_terms = ("broad except", "exception", "swallowed error", "catch-all")
    summary = "an except clause was broadened to Exception"
    effect = "errors the handler was never meant to catch are now caught and swallowed, hiding real failures"

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        kind = node.type
        if kind is None or (isinstance(kind, cst.Name) and kind.value in _BROAD):
            return
        elements = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
        if not all(isinstance(e, (cst.Name, cst.Attribute)) for e in elements):
            return
        code = cst.Module([]).code_for_node(kind)
        self.propose(kind, cst.Name("Exception"), f"`except {code}` became `except Exception`", at=node)


def examples() -> Examples:
    return Examples(
        pairs=[
            ("def f(d, k):\n    try:\n        return d[k]\n    except KeyError:\n        return None\n",
             "def f(d, k):\n    try:\n        return d[k]\n    except Exception:\n        return None\n"),
            ("def f(x):\n    try:\n        return int(x)\n    except (TypeError, ValueError) as e:\n        raise Bad(e)\n",
             "def f(x):\n    try:\n        return int(x)\n    except Exception as e:\n        raise Bad(e)\n"),
        ],
        unchanged=["def f():\n    try:\n        g()\n    except Exception:\n        pass\n",
                   "def f():\n    try:\n        g()\n    except:\n        pass\n"],
    )
