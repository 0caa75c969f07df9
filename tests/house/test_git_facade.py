"""``scarwarden.git`` imports its modules on first use (PEP 562): a cold command pays
only for the git questions it asks. Every name it offers is still what it was."""

from __future__ import annotations

import json
import subprocess
import sys
from types import ModuleType

import scarwarden.git as git


def _fresh(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_importing_the_facade_loads_only_how_git_is_run() -> None:
    loaded = _fresh(
        "import json, sys, scarwarden.git\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('scarwarden.git.'))))"
    )
    assert loaded == ["scarwarden.git.run"]


def test_every_name_is_the_function_or_value_not_a_module() -> None:
    """Whatever modules were imported first (a submodule named like a function would
    otherwise be bound in its place: ``git.run``)."""
    import pkgutil

    for info in pkgutil.iter_modules(git.__path__):
        __import__(f"scarwarden.git.{info.name}")
    for name in git.__all__:
        value = getattr(git, name)
        assert not isinstance(value, ModuleType), name
    assert callable(git.run) and callable(git.blob_id) and isinstance(git.EMPTY_TREE, str)
    assert set(git.__all__) <= set(dir(git))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        git.no_such_question  # noqa: B018
    except AttributeError as exc:
        assert "no_such_question" in str(exc)
    else:
        raise AssertionError("no AttributeError")
