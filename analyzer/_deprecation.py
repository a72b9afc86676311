"""Old public names kept working for a release, with a warning that names the new one.

A package that renames a public name keeps the old one in a table and serves it from its
module ``__getattr__``::

    __getattr__ = renamed(__name__, {"write_reports": "write_report"}, since="0.2.0")

``from package import write_reports`` then still works, warns once per call site with a
:class:`DeprecationWarning` naming the replacement and the release that deprecated it, and
returns the new object; the old name is not in ``__all__``. A name that moved to another
module is given with its module, ``{"EvidenceChunk": "groundtrace.analyzer.replay.ReplayChunk"}``.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["renamed"]


def renamed(module: str, names: Mapping[str, str], *, since: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving each old name of ``names`` (old -> new) as the new one.

    Args:
        module: the module's ``__name__``.
        names: old public name -> its new name in the same module (or ``module.name`` when
            it moved to another module).
        since: the release that deprecated the old names.
    """
    table = dict(names)

    def __getattr__(name: str) -> Any:
        new = table.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        home, _, attr = new.rpartition(".")
        home = home or module
        warnings.warn(
            f"{module}.{name} is deprecated since groundtrace {since}: use {home}.{attr}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), attr)

    return __getattr__
