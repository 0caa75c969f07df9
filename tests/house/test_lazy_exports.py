"""The packages that export lazily (PEP 562, docs/architecture.md "Start-up") resolve
every name they list, to what it names, in a fresh process whatever was imported first."""

from __future__ import annotations

import subprocess
import sys

import pytest

LAZY = ("scarwarden.index", "scarwarden.gate.check", "scarwarden.git")


@pytest.mark.parametrize("package", LAZY)
def test_every_exported_name_resolves_and_is_no_module(package: str) -> None:
    # Each submodule imported first, then each name: a submodule that shares an
    # exported name would bind the package's attribute to itself (a lazy export loses).
    probe = (
        "import importlib, pkgutil, sys, types\n"
        f"pkg = importlib.import_module({package!r})\n"
        "for info in pkgutil.iter_modules(getattr(pkg, '__path__', [])):\n"
        "    importlib.import_module(pkg.__name__ + '.' + info.name)\n"
        "bad = [n for n in pkg.__all__ if isinstance(getattr(pkg, n), types.ModuleType)]\n"
        "print('BAD', bad, len(pkg.__all__))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "BAD [] " in proc.stdout, proc.stdout
    assert int(proc.stdout.split()[-1]) > 3
