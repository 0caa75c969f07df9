"""The Python API's arguments, checked at the door: an argument of the wrong type is a
:class:`~scarwarden.errors.UsageError` naming it (docs/python.md, "Exceptions"), never a
``TypeError``, ``AttributeError`` or ``sqlite3`` error from deep inside, and never text
made of it with ``str()`` and recorded."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from scarwarden.characters import SURROGATE, first_refused, not_unicode
from scarwarden.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any


#: List fields that also take one comma-separated string, as the CLI's --tag does.
LIST_FIELDS = ("tags", "refs", "rules_applied")


def wrong_type(name: str, value: Any, wanted: str) -> UsageError:
    return UsageError(
        f"'{name}' must be {wanted}, not {type(value).__name__}",
        hint="docs/python.md lists every argument and its type",
    )


def text_or_none(value: Any, name: str) -> str | None:
    """``value`` unchanged when it is a ``str`` or ``None`` (the callee says when it is
    empty), else :class:`UsageError`."""
    if value is not None and not isinstance(value, str):
        raise wrong_type(name, value, "text (a str)")
    return value


def required(value: Any, name: str) -> str:
    """``value`` stripped; :class:`UsageError` when it is missing, blank or not a ``str``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise UsageError(f"'{name}' is empty", hint=f"give '{name}' in plain words")
    return str(text_or_none(value, name)).strip()


def an_id(value: Any, name: str) -> str:
    """A rule or episode ID to look up: text that can be UTF-8 (the index's queries)."""
    text = required(value, name)
    found = first_refused(text, SURROGATE)
    if found is not None:
        hint = "IDs look like PB-7k2m9q4x and ep-7k2m9q4x1z"
        raise UsageError(f"'{name}' {not_unicode(*found)}", hint=hint)
    return text


def limit(value: Any) -> int | None:
    """``None`` or a whole number (the engine refuses one below 1)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise wrong_type("limit", value, "a whole number (an int) or None")
    return value


def id_list(value: Any, name: str) -> list[str] | None:
    """``None`` or a list (or tuple) of IDs as text."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise wrong_type(name, value, "a list of episode IDs (str) or None")
    items = list(value)
    for item in items:
        text_or_none(item, f"{name}[]")
    return items


def function(value: Any, name: str) -> Any:
    if value is not None and not callable(value):
        raise wrong_type(name, value, "a function or None")
    return value


def hints(value: Any) -> Any:
    """``None`` or a :class:`~scarwarden.answers.asking.ConfirmHints` (``confirm``'s)."""
    from scarwarden.answers.asking import ConfirmHints

    if value is not None and not isinstance(value, ConfirmHints):
        raise wrong_type("hints", value, "a ConfirmHints (scarwarden.answers.asking) or None")
    return value


def path(value: Any, name: str) -> Path:
    """A ``str`` or ``os.PathLike`` naming a file or folder, without a NUL character."""
    if not isinstance(value, (str, os.PathLike)):
        raise wrong_type(name, value, "a str or a path")
    name_of = os.fspath(value)
    if not isinstance(name_of, str):
        raise wrong_type(name, name_of, "a str or a path")
    if "\x00" in name_of:
        raise UsageError(f"'{name}' holds a NUL character, which no file name can", hint="check the path")
    return Path(name_of)


def episode_inputs(value: Any, warn: Any) -> Any:
    """:meth:`~scarwarden.api.memory.Memory.record_batch`'s inputs: a list or tuple (each
    input is validated by the ledger), and its ``warn``."""
    if not isinstance(value, (list, tuple)):
        raise wrong_type("inputs", value, "a list of episode inputs")
    function(warn, "warn")
    return value


def batch_options(source: Any, images: Any, check: Any) -> None:
    """:meth:`~scarwarden.api.memory.Memory.record_batch`'s ``source`` (what errors call
    the input), ``images`` (as :func:`scarwarden.files.media.read_image` returns them) and
    ``check``: refused here, not a TypeError from inside the ledger's write."""
    if not isinstance(source, str):
        raise wrong_type("source", source, "text (a str)")
    function(check, "check")
    if not isinstance(images, (list, tuple)):
        raise wrong_type("images", images, "a list of checked images (scarwarden.files.media.read_image)")
    if images:
        from scarwarden.files.media import Image

        for image in images:
            if not isinstance(image, Image):
                raise wrong_type("images[]", image, "a checked image (scarwarden.files.media.read_image)")


def fields(value: Any) -> Mapping[str, Any]:
    """:meth:`~scarwarden.api.memory.Memory.record_fields`'s episode fields."""
    if not isinstance(value, Mapping):
        raise wrong_type("fields", value, "a mapping of field names to values")
    return value


def flags(or_none: tuple[str, ...] = (), **given: Any) -> None:
    """Each of ``given`` True or False (those named in ``or_none``: None too), never taken
    by its truthiness: ``commit="no"`` committed, ``dry_run=None`` (a caller's "default")
    wrote for real."""
    for name, value in given.items():
        if not isinstance(value, bool) and not (value is None and name in or_none):
            raise wrong_type(name, value, "True or False" + (" (or None)" if name in or_none else ""))


def distill(branch: Any, progress: Any, **given: Any) -> None:
    """:meth:`~scarwarden.api.memory.Memory.distill`'s arguments (``offline`` None too)."""
    text_or_none(branch, "branch")
    function(progress, "progress")
    flags(("offline",), **given)


def source(value: Any) -> Path | IO[bytes]:
    """What :meth:`Memory.import_runs` reads: a path, or an open binary stream."""
    if isinstance(value, (str, os.PathLike)):
        return path(value, "source")
    if isinstance(value, io.TextIOBase) or not callable(getattr(value, "read", None)):
        raise UsageError(
            f"'source' must be a path or a binary stream, not {type(value).__name__}",
            hint="open the file with open(path, 'rb'), or give its path",
        )
    if getattr(value, "closed", False) is True:
        raise UsageError("'source' is closed", hint="give an open stream, or the file's path")
    stream: IO[bytes] = value
    return stream


@contextmanager
def opened(source: Path | IO[bytes]) -> Iterator[IO[bytes]]:
    """The stream :meth:`Memory.import_runs` reads: ``source``, or the file it names
    (closed after)."""
    if not isinstance(source, Path):
        yield source
        return
    try:
        stream = source.open("rb")
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    with stream:
        kind = _DEVICES.get(stat.S_IFMT(os.fstat(stream.fileno()).st_mode))
        if kind is not None:  # /dev/zero was read up to the size cap, /dev/urandom as "not UTF-8"
            raise UsageError(
                f"{source}: not a regular file or a pipe (a {kind}); nothing was read",
                hint="give a file, a pipe, or an open binary stream",
            )
        yield stream


#: What a path of runs may not be (the CLI's ``episode import`` refuses the same).
_DEVICES = {stat.S_IFCHR: "character device", stat.S_IFBLK: "block device", stat.S_IFSOCK: "socket"}


def folder(value: Any, name: str) -> Path:
    """:func:`path`, refused when it names a file or nothing (a folder is wanted: git
    would call either "not inside a git repository")."""
    where = path(value, name)
    try:
        wrong = "is a file, not a folder" if where.is_file() else None if where.exists() else "does not exist"
    except OSError:  # not to be looked at (permission denied): left to git to say
        wrong = None
    if wrong is not None:
        raise UsageError(f"{where} {wrong}", hint="give the repository's folder, or one inside it")
    return where


def memory(repo: Any, environ: Any) -> None:
    """:class:`~scarwarden.api.memory.Memory`'s arguments (its methods would fail later):
    a path where the repository goes is the likely mistake (a stand-in with a MemoryRepo's
    attributes, as ``mcp --help``'s catalogue builds the server with, is let through)."""
    if repo is None or isinstance(repo, (str, bytes, os.PathLike)):
        raise wrong_type("repo", repo, "a MemoryRepo (scarwarden.open_memory(path) opens one)")
    if environ is not None and not isinstance(environ, Mapping):
        raise wrong_type("environ", environ, "a mapping of names to values or None")


def import_options(
    name: Any, corrections: Any, write_tools: Any, agent: Any, at: Any, progress: Any, warn: Any
) -> tuple[str, ...]:
    """:meth:`~scarwarden.api.memory.Memory.import_runs`'s keyword arguments; returns
    ``write_tools`` as a tuple (a generator is read once, here, not used up unseen)."""
    for value, called in ((name, "name"), (agent, "agent"), (at, "at")):
        text_or_none(value, called)
    function(progress, "progress")
    function(warn, "warn")
    if corrections is not None and not isinstance(corrections, Mapping):
        raise wrong_type("corrections", corrections, "a mapping of conversation numbers to text, or None")
    for number, text in (corrections or {}).items():  # as the CLI's --correction N:TEXT
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise UsageError(
                f"'corrections' maps conversation numbers (int, from 1) to text, not {number!r:.40}",
                hint="the file's first conversation is 1: corrections={1: 'Ask before refunding'}",
            )
        required(text, f"corrections[{number}]")
    if isinstance(write_tools, (str, bytes)) or not hasattr(write_tools, "__iter__"):
        raise wrong_type("write_tools", write_tools, "a list of tool names (str)")
    tools = tuple(write_tools)
    for tool in tools:
        text_or_none(tool, "write_tools[]")
    return tools


def not_future(at: Any, allow_future: bool, what: str = "'at'") -> None:
    """``at`` beyond clock skew is refused unless ``allow_future``, as ``episode add --at``
    and ``episode import --at`` without ``--allow-future`` (:func:`times.future_problem`)."""
    from scarwarden.times import future_problem

    allow = "allow_future=True (the CLI's --allow-future)"
    problem = None if not at or allow_future else future_problem(at, what, allow)
    if problem is not None:
        raise problem


def batch_at(inputs: Any, source: str, allow_future: bool) -> None:
    """Each episode input's ``at`` by :func:`not_future`, named by its place in the batch."""
    for number, item in enumerate(inputs, 1):
        if isinstance(item, Mapping):
            not_future(item.get("at"), allow_future, f"{source}: episode {number}'s 'at'")


def empty(value: Any) -> bool:
    """A :meth:`~scarwarden.api.memory.Memory.record_fields` value that is left out."""
    return value is None or (isinstance(value, (str, list, tuple)) and len(value) == 0)


def as_list(key: str, value: Any) -> Any:
    """``"linkedin,post"`` -> ``["linkedin", "post"]`` for the list fields (issue 18)."""
    if key in LIST_FIELDS and isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if key in LIST_FIELDS and isinstance(value, Iterable) and not isinstance(value, (list, Mapping)):
        return list(value)
    return value
