"""pyproject.toml installs every package of the source tree (a subpackage left out breaks `pip install .`)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_listed_for_installation():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "evalcore").rglob("__init__.py")}
    found |= {"evalcore_dashboard." + ".".join(p.parent.relative_to(ROOT).parts)
              for p in (ROOT / "pages").rglob("__init__.py")}
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert config["package-dir"] == {"evalcore_dashboard": "."} and "evalcore_dashboard" in listed
