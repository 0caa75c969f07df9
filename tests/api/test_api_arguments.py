"""Wrong arguments to the Python API: a :class:`scarwarden.UsageError` naming the
argument (docs/python.md, "Exceptions"), with nothing written. Before, they surfaced as
a bare TypeError, AttributeError, ValueError, sqlite3.IntegrityError or
UnicodeEncodeError from deep inside, or were turned into text and recorded (an answer
given as ``4`` or ``[b'x']`` became an episode saying "4" or "[b'x']")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import git

import scarwarden
from scarwarden.repo import MemoryRepo


def _state(root: Path) -> tuple[str, str]:
    return git(root, "rev-parse", "HEAD").stdout, git(root, "status", "--porcelain").stdout


@pytest.mark.parametrize(
    ("path", "says"),
    [
        (None, "'path' must be a str or a path, not NoneType"),
        (3, "'path' must be a str or a path, not int"),
        (b"/tmp", "'path' must be a str or a path, not bytes"),
        ([b"x"], "'path' must be a str or a path, not list"),
        ("a\x00b", "'path' holds a NUL character"),
    ],
)
def test_open_memory_refuses_what_is_no_path(path: Any, says: str) -> None:
    with pytest.raises(scarwarden.UsageError) as raised:
        scarwarden.open_memory(path)
    assert says in raised.value.message


CALLS = [
    ("recall", (3,), {}, "'task' must be text (a str), not int"),
    ("recall", ([b"x"],), {}, "'task' must be text (a str), not list"),
    ("recall", ("Post our discount code",), {"limit": "3"}, "'limit' must be a whole number"),
    ("recall", ("Post our discount code",), {"limit": 2.5}, "'limit' must be a whole number"),
    ("rule", ([b"x"],), {}, "'rule_id' must be text (a str), not list"),
    ("rule", ("PB-\ud800",), {}, "'rule_id' holds a lone surrogate (U+D800)"),
    ("episode", (3,), {}, "'episode_id' must be text (a str), not int"),
    ("episode", ("ep-\ud800",), {}, "'episode_id' holds a lone surrogate (U+D800)"),
    ("record_batch", (None,), {}, "'inputs' must be a list of episode inputs, not NoneType"),
    ("record_batch", (3,), {}, "'inputs' must be a list of episode inputs, not int"),
    ("answer", (3, 4), {}, "'task' must be text (a str), not int"),
    ("answer", ("Pick the office plants", [b"x"]), {}, "'answer' must be text (a str), not list"),
    ("answer", ("Pick the office plants", "Green"), {"refs": 3}, "'refs' must be a list of episode IDs"),
    ("confirm", ("Post our discount code", 3), {}, "'rule_id' must be text (a str), not int"),
    ("distill", (), {"offline": True, "branch": 3}, "'branch' must be text (a str), not int"),
    ("distill", (), {"offline": True, "progress": 3}, "'progress' must be a function or None"),
    ("import_runs", (None, "openai-chat"), {}, "'source' must be a path or a binary stream"),
    ("import_runs", (3, "openai-chat"), {}, "'source' must be a path or a binary stream"),
    ("import_runs", (b"/x", "openai-chat"), {}, "'source' must be a path or a binary stream"),
]


@pytest.mark.parametrize(("method", "args", "kwargs", "says"), CALLS)
def test_a_wrong_argument_is_a_usage_error_naming_it(
    demo_repo: MemoryRepo, method: str, args: tuple[Any, ...], kwargs: dict[str, Any], says: str
) -> None:
    memory = scarwarden.open_memory(demo_repo.root)
    before = _state(demo_repo.root)
    with pytest.raises(scarwarden.UsageError) as raised:
        getattr(memory, method)(*args, **kwargs)
    assert says in raised.value.message
    assert raised.value.exit_code == 2
    assert _state(demo_repo.root) == before
