"""One ``git cat-file`` for a whole command: a session's object reads (issue 30: the hooks).

The reference-transaction hook asked git ~17 questions for a one-commit move, each a
new process (~2.5 ms of CPU, ~5 ms of wall time on the 2-core machine): most of them
object reads (``cat-file --batch``, ``--batch-check``, ``-e``) and commit lookups
(``rev-parse --verify``). Inside :func:`session` they all go to one long-lived
``git cat-file --batch-command --buffer`` per repository (and environment), and
``rev-parse --git-path`` answers are remembered. Outside a session nothing changes.

Only object names that do not read git's index go through it (a ``:path`` name is
answered by a process of its own, so a session never sees a stale index), and only
commands that move no ref open one: objects and refs are read as they are when asked,
but a session is meant for one check, not for a long-running server.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from scarwarden.errors import GitError
from scarwarden.git.run import NO_REPLACE, own_session

_Key = tuple[str, tuple[tuple[str, str], ...] | None]


class _Reader:
    """``git cat-file --batch-command --buffer``: requests queued, answered on ``flush``."""

    def __init__(self, root: str, env: Mapping[str, str] | None) -> None:
        import subprocess  # here: a recall on a current index starts no git

        self.proc = subprocess.Popen(
            ["git", *NO_REPLACE, "-C", root, "cat-file", "--batch-command", "--buffer"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=None if env is None else dict(env),
            start_new_session=own_session(),
        )

    def ask(self, command: str, names: Sequence[str]) -> list[tuple[list[bytes], bytes | None]]:
        """Each name's header fields and (for ``contents``) its bytes; ``None`` bytes
        when it names no object."""
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        request = "".join(f"{command} {name}\n" for name in names) + "flush\n"
        try:
            # git queues every command until the flush, then answers: all of the request
            # is read before any answer is written, so neither pipe can fill both ways.
            stdin.write(request.encode("utf-8", "surrogateescape"))
            stdin.flush()
            out: list[tuple[list[bytes], bytes | None]] = []
            for _ in names:
                header = stdout.readline()
                if not header.endswith(b"\n"):
                    raise GitError("git cat-file --batch-command stopped answering")
                fields = header[:-1].split(b" ")
                if len(fields) < 3 or fields[-1] in (b"missing", b"ambiguous"):
                    out.append((fields, None))
                    continue
                data = None
                if command == "contents":
                    size = int(fields[2])
                    data = stdout.read(size + 1)[:size]
                out.append((fields, data))
            return out
        except (BrokenPipeError, ValueError) as exc:
            raise GitError(f"git cat-file --batch-command failed: {exc}") from None

    def close(self) -> None:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        import subprocess

        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class Session:
    def __init__(self) -> None:
        self.readers: dict[_Key, _Reader] = {}
        self.paths: dict[tuple[str, str], Path] = {}

    def reader(self, root: Path | str, env: Mapping[str, str] | None) -> _Reader:
        key: _Key = (str(root), None if env is None else tuple(sorted(env.items())))
        if key not in self.readers:
            self.readers[key] = _Reader(str(root), env)
        return self.readers[key]

    def close(self) -> None:
        for reader in self.readers.values():
            reader.close()
        self.readers.clear()


_current: Session | None = None


@contextmanager
def session() -> Iterator[Session]:
    """Object reads and ``--git-path`` answers shared until the block ends (nested
    sessions share the outer one)."""
    global _current
    if _current is not None:
        yield _current
        return
    _current = Session()
    try:
        yield _current
    finally:
        current, _current = _current, None
        current.close()


def serves(names: Sequence[str]) -> bool:
    """Whether a session is open and can answer ``names`` (none reads git's index)."""
    return (
        _current is not None
        and bool(names)
        and all(n and n == n.strip() and not n.startswith(":") and "\n" not in n for n in names)
    )


def contents(root: Path | str, names: Sequence[str], env: Mapping[str, str] | None) -> list[bytes | None]:
    assert _current is not None
    return [data for _, data in _current.reader(root, env).ask("contents", names)]


def info(root: Path | str, names: Sequence[str], env: Mapping[str, str] | None) -> list[list[bytes]]:
    """Each name's ``<object> <type> <size>`` fields, or ``<name> missing``."""
    assert _current is not None
    return [fields for fields, _ in _current.reader(root, env).ask("info", names)]


def remembered_path(root: Path | str, name: str) -> Path | None:
    return None if _current is None else _current.paths.get((str(root), name))


def remember_path(root: Path | str, name: str, path: Path) -> None:
    if _current is not None:
        _current.paths[(str(root), name)] = path
