"""Wrong arguments to the Python API: a :class:`scarwarden.UsageError` naming the
argument (docs/python.md, "Exceptions"), with nothing written. Before, they surfaced as
a bare TypeError, AttributeError, ValueError, sqlite3.IntegrityError or
UnicodeEncodeError from deep inside, or were turned into text and recorded (an answer
given as ``4`` or ``[b'x']`` became an episode saying "4" or "[b'x']")."""

from __future__ import annotations

import io
import json
import shutil
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


def test_open_memory_on_a_file_says_it_is_a_file(demo_repo: MemoryRepo) -> None:
    """It said "... is not inside a git repository", of a file inside one."""
    with pytest.raises(scarwarden.UsageError) as raised:
        scarwarden.open_memory(demo_repo.playbook_path)
    assert raised.value.message == f"{demo_repo.playbook_path} is a file, not a folder"


def test_open_memory_on_a_missing_path_says_it_is_missing(demo_repo: MemoryRepo) -> None:
    """It said "... is not inside a git repository" (of a path in one) with the hint
    "run 'git init' first, or pass --repo PATH", an option the API does not have."""
    missing = demo_repo.root / "no-such-folder"
    with pytest.raises(scarwarden.UsageError) as raised:
        scarwarden.open_memory(missing)
    assert raised.value.message == f"{missing} does not exist"
    assert "--repo" not in (raised.value.hint or "")


@pytest.mark.parametrize(
    ("repo", "environ", "says"),
    [
        (".", None, "'repo' must be a MemoryRepo (scarwarden.open_memory(path) opens one), not str"),
        (None, None, "'repo' must be a MemoryRepo (scarwarden.open_memory(path) opens one), not NoneType"),
        ("memory", 5, "'environ' must be a mapping of names to values or None, not int"),
    ],
)
def test_memory_refuses_what_is_no_repository(
    demo_repo: MemoryRepo, repo: Any, environ: Any, says: str
) -> None:
    """``Memory(".")`` failed later, at its first call: AttributeError: 'str' object has
    no attribute 'state_dir'; ``environ=5`` a TypeError at once."""
    with pytest.raises(scarwarden.UsageError) as raised:
        scarwarden.Memory(demo_repo if repo == "memory" else repo, environ=environ)
    assert says in raised.value.message


RUNS = io.BytesIO(b'{"messages": [{"role": "user", "content": "Refund order 42"}]}\n')
CLOSED = io.BytesIO(RUNS.getvalue())
CLOSED.close()
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
    # TypeError: 'NoneType' object is not iterable; "record does not take 't', 'a', 's', 'k'".
    ("record_fields", (None,), {}, "'fields' must be a mapping of field names to values, not NoneType"),
    ("record_fields", ("task",), {}, "'fields' must be a mapping of field names to values, not str"),
    ("record_batch", (3,), {}, "'inputs' must be a list of episode inputs, not int"),
    ("answer", (3, 4), {}, "'task' must be text (a str), not int"),
    ("answer", ("Pick the office plants", [b"x"]), {}, "'answer' must be text (a str), not list"),
    ("answer", ("Pick the office plants", "Green"), {"refs": 3}, "'refs' must be a list of episode IDs"),
    ("confirm", ("Post our discount code", 3), {}, "'rule_id' must be text (a str), not int"),
    # AttributeError: 'str' object has no attribute 'unknown', once a refusal needed a hint;
    # taken unseen when none did.
    ("confirm", ("Book a table for the team dinner", "PB-99"), {"hints": "call recall"}, "'hints' must be"),
    (
        "confirm",
        ("Book a table for the team dinner", "PB-06"),
        {"hints": 5},
        "'hints' must be a ConfirmHints",
    ),
    ("distill", (), {"offline": True, "branch": 3}, "'branch' must be text (a str), not int"),
    ("distill", (), {"offline": True, "progress": 3}, "'progress' must be a function or None"),
    # A caller's "default" (None) or "no" was falsy: dry_run=None committed a distill.
    ("distill", (), {"offline": True, "dry_run": None}, "'dry_run' must be True or False, not NoneType"),
    (
        "distill",
        (),
        {"offline": True, "dry_run": False, "commit": "no"},
        "'commit' must be True or False, not str",
    ),
    ("distill", (), {"offline": "yes"}, "'offline' must be True or False (or None), not str"),
    ("import_runs", (None, "openai-chat"), {}, "'source' must be a path or a binary stream"),
    ("import_runs", (3, "openai-chat"), {}, "'source' must be a path or a binary stream"),
    ("import_runs", (b"/x", "openai-chat"), {}, "'source' must be a path or a binary stream"),
    ("import_runs", (RUNS, "openai-chat"), {"write_tools": 5}, "'write_tools' must be a list of tool names"),
    ("import_runs", (RUNS, "openai-chat"), {"write_tools": "refund"}, "'write_tools' must be a list"),
    ("import_runs", (RUNS, "openai-chat"), {"corrections": 5}, "'corrections' must be a mapping"),
    # A text key was a TypeError from the importer's comparison; 0, -1 and True were
    # dropped or taken as 1 unseen (a correction lost); 5 an "invalid episode input".
    *(
        ("import_runs", (RUNS, "openai-chat"), {"corrections": {key: "Ask first"}}, says)
        for key, says in (
            ("1", "'corrections' maps conversation numbers (int, from 1) to text, not '1'"),
            (0, "'corrections' maps conversation numbers (int, from 1) to text, not 0"),
            (-1, "'corrections' maps conversation numbers (int, from 1) to text, not -1"),
            (True, "'corrections' maps conversation numbers (int, from 1) to text, not True"),
        )
    ),
    ("import_runs", (RUNS, "openai-chat"), {"corrections": {1: 5}}, "'corrections[1]' must be text (a str)"),
    ("import_runs", (RUNS, "openai-chat"), {"corrections": {1: " "}}, "'corrections[1]' is empty"),
    ("import_runs", (RUNS, "openai-chat"), {"agent": 5}, "'agent' must be text (a str), not int"),
    # Each was a bare error from inside the reader: AttributeError: 'str' object has no
    # attribute 'decode'; ValueError: I/O operation on closed file; TypeError: 'int'
    # object is not callable (the last two once the first conversation was read).
    (
        "import_runs",
        (io.StringIO('{"messages": []}'), "openai-chat"),
        {},
        "'source' must be a path or a binary stream, not StringIO",
    ),
    ("import_runs", (CLOSED, "openai-chat"), {}, "'source' is closed"),
    ("import_runs", (RUNS, "openai-chat"), {"progress": 5}, "'progress' must be a function or None"),
    ("import_runs", (RUNS, "openai-chat"), {"warn": 5}, "'warn' must be a function or None"),
    ("import_runs", (RUNS, "openai-chat"), {"at": 5}, "'at' must be text (a str), not int"),
    (
        "record_batch",
        ([{"task": "Write the launch email"}],),
        {"warn": 5},
        "'warn' must be a function or None",
    ),
    # TypeError: 'int' object is not iterable (or not callable); AttributeError: 'str'
    # object has no attribute 'name', from inside the ledger's write; source=5 and
    # missing_hint=5 were taken, and made text.
    *(
        (
            "record_batch",
            ([{"task": "Write the launch email", "correction": "Lead with the pain"}],),
            kw,
            says,
        )
        for kw, says in (
            ({"images": 5}, "'images' must be a list of checked images (scarwarden.files.media.read_image)"),
            ({"images": ["banner.png"]}, "'images[]' must be a checked image"),
            ({"images": None}, "'images' must be a list of checked images"),
            ({"check": 5}, "'check' must be a function or None, not int"),
            ({"source": 5}, "'source' must be text (a str), not int"),
        )
    ),
    (
        "record_fields",
        ({"task": "Write the launch email", "correction": "Lead"},),
        {"source": 5},
        "'source' must be text",
    ),
    ("episode", ("ep-aaaaaaaaaa",), {"missing_hint": 5}, "'missing_hint' must be text (a str), not int"),
    # Each flag was taken by its truthiness: commit="no" committed, commit=None staged,
    # dry_run=None imported for real, log="no" logged the recall.
    *(
        (method, args, {name: value}, f"'{name}' must be True or False, not {type(value).__name__}")
        for method, args, name, value in (
            ("recall", ("Post our discount code",), "explain", "no"),
            ("recall", ("Post our discount code",), "log", "no"),
            ("recall", ("Post our discount code",), "log", None),
            ("record_batch", ([{"task": "Write the launch email"}],), "commit", None),
            ("record_batch", ([{"task": "Write the launch email"}],), "commit", "no"),
            ("record_batch", ([{"task": "Write the launch email"}],), "redact_pii", "yes"),
            ("answer", ("Pick the office plants", "Green"), "commit", "no"),
            ("answer", ("Pick the office plants", "Green"), "commit", 0),
            ("confirm", ("Post our discount code on Twitter", "PB-02"), "commit", "false"),
            ("import_runs", (RUNS, "openai-chat"), "dry_run", None),
            ("import_runs", (RUNS, "openai-chat"), "dry_run", "yes"),
        )
    ),
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


def test_write_tools_from_a_generator_are_marked(demo_repo: MemoryRepo) -> None:
    """The argument check iterated a generator to its end, so the import saw no write
    tool: the refund was recorded without its [write] mark, and nothing said so."""
    memory = scarwarden.open_memory(demo_repo.root)
    refund = {"id": "c1", "function": {"name": "refund", "arguments": "{}"}}
    run = {
        "messages": [
            {"role": "user", "content": "Refund order 42"},
            {"role": "assistant", "tool_calls": [refund]},
        ]
    }
    runs = io.BytesIO(json.dumps(run).encode() + b"\n")
    result = memory.import_runs(runs, "openai-chat", write_tools=(t for t in ["refund"]), dry_run=True)
    assert result.added[0].get("action") == "1 tool call(s), 1 write(s):\n1. [write] refund({})"


@pytest.mark.parametrize(
    ("method", "args"),
    [
        ("recall", ("Post our discount code",)),
        ("record", ("Write the launch email",)),
        ("record_batch", ([{"task": "Write the launch email"}],)),
        ("answer", ("Pick the office plants", "Green")),
        ("confirm", ("Post our discount code", "PB-02")),
        ("distill", ()),
        ("import_runs", (io.BytesIO(RUNS.getvalue()), "openai-chat")),
        ("rule", ("PB-02",)),
        ("episode", ("ep-aaaaaaaaaa",)),
    ],
)
def test_a_call_after_the_repository_was_deleted_says_so(
    demo_repo: MemoryRepo, method: str, args: tuple[Any, ...]
) -> None:
    """Each said what git or a later check made of it: GitError "git ls-files -s failed:
    fatal: not a git repository (or any of the parent directories): .git", a bare
    ScarwardenError, or UsageError "the repository has no commits yet"; recall made the
    deleted folder again to put its index cache in."""
    memory = scarwarden.open_memory(demo_repo.root)
    shutil.rmtree(demo_repo.root)
    with pytest.raises(scarwarden.UsageError) as raised:
        getattr(memory, method)(*args)
    assert raised.value.message == f"{demo_repo.root} does not exist (deleted or moved since it was opened)"
    assert not demo_repo.root.exists()
