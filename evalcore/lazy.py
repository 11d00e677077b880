"""Names of a package imported on first use (PEP 562), so that importing one light submodule of the package (the
command line's help does) does not import the heavy libraries its siblings need."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def exports(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` for ``names`` (name -> the submodule defining it): the first access
    imports the submodule and keeps the value in the package's namespace."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{names[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
