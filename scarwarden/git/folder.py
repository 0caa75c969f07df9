"""Two questions answered from the git folder's own files, when they are plain: where the
work tree is, and whether HEAD still names the commit the index recorded.

A cold ``scarwarden recall`` asked git both (``rev-parse --show-toplevel`` and
``rev-parse HEAD^{commit}``): two processes (~3 ms of CPU) and the ``subprocess``
module (~13M instructions), about a tenth of the whole recall (issue 30: a cold recall
within 6x ``python -c pass``). Each answer here is the one git gives, or ``None``:
anything this module does not read exactly as git does (an environment variable that
moves the repository, a ``.git`` file or link, a ``.git`` folder that is not a repository, a bare
repository or a git folder on the way up, another filesystem, another owner, a config
with ``core.worktree``, an include or an extension, a reftable, a symbolic ref that is
not HEAD's) means "ask git", and the caller does. tests/git/test_folder.py compares
the answers with git's on each of those layouts.
"""

from __future__ import annotations

import os
import re
import stat

#: How git's answer is trusted: the longest packed-refs file read here (a bigger one
#: is git's to search).
MAX_PACKED_REFS = 1 << 20


#: git's environment variables that move the repository, its objects or refs, or add to
#: its config (git(1), "ENVIRONMENT VARIABLES"): with one set, git is asked. (The others,
#: ``GIT_SSL_*``, ``GIT_AUTHOR_*``, ``GIT_CONFIG_GLOBAL``..., change neither answer: the
#: global and system config are read for ``safe.directory`` alone, and only when the
#: owner differs, which sends the question to git anyway. ``GIT_PREFIX``, which git sets
#: for every hook and alias, git only writes, never reads; ``GIT_INDEX_FILE`` moves the
#: index, not the work tree or HEAD.)
MOVING = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_NAMESPACE",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_DEFAULT_HASH",
        "GIT_DEFAULT_REF_FORMAT",
        "GIT_IMPLICIT_WORK_TREE",
    }
)


def _env_of_git() -> bool:
    """Whether one of :data:`MOVING` (or a ``GIT_TEST_*`` knob) is set."""
    return any(name in MOVING or name.startswith("GIT_TEST_") for name in os.environ)


def _is_git_folder(path: str) -> bool:
    """git's ``is_git_directory``, the part of it that matters here: HEAD, objects, refs."""
    return (
        os.path.isfile(os.path.join(path, "HEAD"))
        and os.path.isdir(os.path.join(path, "objects"))
        and os.path.isdir(os.path.join(path, "refs"))
    )


def toplevel(path: str) -> str | None:
    """``git -C path rev-parse --show-toplevel``, read from the folders: the work tree's
    root with its links resolved, or ``None`` to ask git."""
    if os.name != "posix" or _env_of_git():
        return None  # (elsewhere: no owner IDs to compare, and git's path rules differ)
    try:
        here = os.path.realpath(path)
        if not os.path.isdir(here) or not os.access(here, os.X_OK):
            return None
        if ".git" in here.split(os.sep):
            return None  # inside a git folder: git's words, not ours
        device = os.stat(here).st_dev
        while True:
            found = _repository_at(here)
            if found is not None:
                return here if found else None
            parent = os.path.dirname(here)
            if parent == here or os.stat(parent).st_dev != device:
                return None  # at the root or another filesystem: git says what it finds
            here = parent
    except (OSError, ValueError):
        return None


def _repository_at(folder: str) -> bool | None:
    """Whether ``folder`` is a plain work tree root (True), something git must judge
    (False), or no repository at all, to look further up (None)."""
    dotgit = os.path.join(folder, ".git")
    try:
        st = os.lstat(dotgit)
    except FileNotFoundError:
        return False if _is_git_folder(folder) else None  # a bare repository: git's
    if not stat.S_ISDIR(st.st_mode) or not _is_git_folder(dotgit):
        return False  # a .git file (worktree, submodule), a link, a folder git may skip
    uid = os.geteuid()
    if st.st_uid != uid or os.stat(folder).st_uid != uid:
        return False  # safe.directory is git's to apply
    return _plain_config(os.path.join(dotgit, "config")) and _plain_head(dotgit)


def _plain_config(path: str) -> bool:
    """Whether the repository's config parses as git parses it and holds nothing that
    moves or changes the repository; and every global and system config git reads
    parses too (git refuses to run on a bad line in any of them)."""
    text = _config_text(path)
    if text is None or not _parses(text):
        return False
    lowered = text.lower()
    if b"worktree" in lowered or b"extensions" in lowered:
        return False
    for line in lowered.splitlines():
        key, _, value = line.partition(b"=")
        key, value = key.strip(), value.strip()
        if key == b"bare" and value != b"false":
            return False
        if key == b"repositoryformatversion" and value not in (b"0", b"1"):
            return False
    return all(_parses(text) for text in _user_configs())


#: A config line read the same by git and here: a comment, a section, ``key = value``
#: (no quote, backslash or continuation in the value), a bare boolean key.
_LINE = re.compile(
    rb'\s*(?:[#;].*|\[[A-Za-z0-9.-]+(?: "[^"\\\n]*")?\]\s*|[A-Za-z][A-Za-z0-9-]*\s*(?:=[^"\\]*)?)?'
)


def _parses(text: bytes) -> bool:
    """Every line plain (:data:`_LINE`), no include: else git is the one to read it."""
    if b"include" in text.lower():
        return False
    return all(_LINE.fullmatch(line) for line in text.splitlines())


def _config_text(path: str) -> bytes | None:
    """A config file's bytes; b"" when there is none; None when unreadable or too big."""
    try:
        with open(path, "rb") as f:
            text = f.read((1 << 16) + 1)
    except FileNotFoundError:
        return b""
    except OSError:
        return None
    return text if len(text) <= 1 << 16 else None


def _user_configs() -> list[bytes]:
    """The global and system config files git reads (git-config(1), "FILES"); one that
    cannot be read is None's stand-in: b"\\" (which no line parses as)."""
    home = os.environ.get("HOME", "")
    if "GIT_CONFIG_GLOBAL" in os.environ:
        paths = [os.environ["GIT_CONFIG_GLOBAL"]]
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        paths = [
            os.path.join(xdg, "git", "config") if xdg else "",
            os.path.join(home, ".gitconfig") if home else "",
        ]
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        paths.append(os.environ.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))
    texts = [_config_text(path) for path in paths if path]
    return [b"\\" if text is None else text for text in texts]


def _plain_head(git_dir: str) -> bool:
    try:
        if not stat.S_ISREG(os.lstat(os.path.join(git_dir, "HEAD")).st_mode):
            return False  # a symbolic link (git's oldest HEAD): git's to read
        with open(os.path.join(git_dir, "HEAD"), "rb") as f:
            head = f.read(4096).strip()
    except OSError:
        return False
    return head.startswith(b"ref: refs/") or _is_object_id(head)


def _is_object_id(value: bytes) -> bool:
    return len(value) in (40, 64) and all(c in b"0123456789abcdef" for c in value)


def head_is(root: str, commit: str) -> bool:
    """Whether HEAD, read from ``root``'s ``.git`` files, names ``commit`` (an ID git gave
    for ``HEAD^{commit}`` earlier). False means "not known": ask git. A ref naming the
    same ID names the same commit, so the answer is git's."""
    if os.name != "posix" or _env_of_git() or not commit:
        return False
    git_dir = os.path.join(root, ".git")
    try:
        if not stat.S_ISDIR(os.lstat(git_dir).st_mode) or os.path.exists(os.path.join(git_dir, "reftable")):
            return False
        with open(os.path.join(git_dir, "HEAD"), "rb") as f:
            head = f.read(4096).strip()
        if not head.startswith(b"ref: "):
            return head == commit.encode()
        ref = head[5:].decode("utf-8", "strict")
        if not ref.startswith("refs/") or ".." in ref.split("/"):
            return False
        return _ref_value(git_dir, ref) == commit.encode()
    except (OSError, ValueError):
        return False


def _ref_value(git_dir: str, ref: str) -> bytes | None:
    """A ref's object ID: its own file, else its packed-refs line; None when neither
    holds a plain ID (a symbolic ref, a missing ref, a packed-refs file too big)."""
    try:
        with open(os.path.join(git_dir, *ref.split("/")), "rb") as f:
            value = f.read(4096).strip()
        return value if _is_object_id(value) else None
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        return None
    packed = os.path.join(git_dir, "packed-refs")
    try:
        if os.path.getsize(packed) > MAX_PACKED_REFS:
            return None
        with open(packed, "rb") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    wanted = ref.encode()
    for line in lines:
        value, _, name = line.partition(b" ")
        if name == wanted:
            return value if _is_object_id(value) else None
    return None
