"""Installing the provenance gate as git hooks (``scarwarden hooks install``).

The hook runs ``python -m scarwarden check --staged`` with the interpreter that installed
it (so it works from a virtualenv that is not activated), falling back to ``scarwarden``
on ``PATH``. Like ``pre-commit install``, a hook that was already there is kept as
``<hook>.legacy`` and chained: it runs first, then the gate, and the commit fails if
either fails. ``uninstall`` puts it back. Both ``pre-commit`` and ``pre-merge-commit``
are installed: ``git merge`` runs the latter, not the former, when it commits by itself.

The script written is :func:`render_hook`; ``hooks/pre-commit`` at the project root is
the same script for copying by hand (``scarwarden`` on ``PATH``).
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from scarwarden import git
from scarwarden.errors import UsageError
from scarwarden.gate.merge_driver import uninstall_merge_driver
from scarwarden.git.index_commit import DOOR_MARKS

MARKER = "# scarwarden-hook-v1"
HOOK_TYPES = ("pre-commit", "pre-merge-commit")
#: The doors pre-commit cannot see (issue 15): every branch move, and every push.
REF_HOOK_TYPES = ("reference-transaction", "pre-push")

_TEMPLATE = """\
#!/bin/sh
{marker}: the Scarwarden provenance gate (installed by 'scarwarden hooks install').
# It checks the tree being committed (git's index), never the working folder.
# A hook that was here before is kept as <this hook>.legacy and runs first; the commit
# fails if either fails. Remove with 'scarwarden hooks uninstall'.
INSTALL_PYTHON={python}
HOOK_DIR=$(dirname -- "$0")
HOOK_NAME=$(basename -- "$0")
status=0
if [ -x "$HOOK_DIR/$HOOK_NAME.legacy" ]; then
    "$HOOK_DIR/$HOOK_NAME.legacy" "$@" || status=$?
fi
# A write door (episode add, rule add...) ran this very check on this very index before
# it ran the hooks: it names the index here, and Python is not started twice. (Setting
# it by hand skips this hook, as --no-verify does; the reference-transaction hook still
# checks the commit.)
if [ -n "${{SCARWARDEN_DOOR_CHECKED:-}}" ] && [ "$SCARWARDEN_DOOR_CHECKED" = "${{GIT_INDEX_FILE:-}}" ]; then
    exit $status
fi
if [ -n "$INSTALL_PYTHON" ] && [ -x "$INSTALL_PYTHON" ]; then
    # The gate's own entry: 'scarwarden check --staged' without the CLI's start-up
    "$INSTALL_PYTHON" -m scarwarden.gate.hook_main pre-commit || status=$?
elif command -v scarwarden >/dev/null 2>&1; then
    scarwarden check --staged || status=$?
else
    echo "scarwarden: cannot run the provenance gate: '$INSTALL_PYTHON' is gone and" \\
         "'scarwarden' is not on PATH" >&2
    echo "hint: install scarwarden and run 'scarwarden hooks install' again" >&2
    exit 1
fi
exit $status
"""


_REF_TEMPLATE = """\
#!/bin/sh
{marker}: the Scarwarden provenance gate (installed by 'scarwarden hooks install').
# reference-transaction refuses to move a branch onto commits that fail the gate
# (revert, cherry-pick, rebase, am, fast-forward merges and pulls run no pre-commit
# hook); pre-push refuses to push them. Bypass: SCARWARDEN_SKIP=1 ('scarwarden verify'
# still catches what it let through). A hook that was here before is kept as
# <this hook>.legacy and runs first, on the same input.
INSTALL_PYTHON={python}
HOOK_DIR=$(dirname -- "$0")
HOOK_NAME=$(basename -- "$0")
status=0
input=$(cat)
if [ -x "$HOOK_DIR/$HOOK_NAME.legacy" ]; then
    printf '%s\\n' "$input" | "$HOOK_DIR/$HOOK_NAME.legacy" "$@" || status=$?
fi
[ "${{SCARWARDEN_SKIP:-}}" = 1 ] && exit $status
if [ "$HOOK_NAME" = reference-transaction ]; then
    # Only 'prepared' can refuse; only branches carry memory worth checking.
    [ "$1" = prepared ] || exit $status
    case "$input" in *" refs/heads/"*) ;; *) exit $status ;; esac
    # Fast paths (issue 30), so Python (~300 ms) starts only when there is something to
    # check. A move onto a commit a write door (episode add, rule add...) built and
    # gated on this very parent: the door left a marker named by the commit's ID that
    # holds the parent's ID (a commit ID fixes its tree and parent, so the marker
    # vouches for that one move and no other). A move whose new commits touch no
    # memory file: git says so in milliseconds (a memory_dir set in scarwarden.yaml
    # always takes the full check).
    door=$(git rev-parse --git-path {door} 2>/dev/null)
    custom=
    grep -qs memory_dir scarwarden.yaml && custom=1
    touched=
    while read -r old new ref; do
        case "$ref" in refs/heads/*) ;; *) continue ;; esac
        # A zero value (a new branch, no expected value given, a deletion or a
        # rename) is for the gate to resolve.
        case "$old$new" in *0000000000000000000000000000000000000000*) touched=1; break ;; esac
        [ "$old" = "$new" ] && continue
        checked=
        [ -n "$door" ] && [ -f "$door/$new" ] && read -r checked < "$door/$new"
        [ -n "$checked" ] && [ "$checked" = "$old" ] && continue
        [ -z "$custom" ] || {{ touched=1; break; }}
        # Does a new commit change the memory folder? Its tree ID beside each parent's,
        # read in one cat-file (a pathspec'd 'rev-list old..new -- memory' reads the
        # changed month folders' trees: ~25 ms at a million episodes). A folder on one
        # side only is a change; a commit without parents is for the gate.
        pairs=$(git rev-list --parents "$old..$new" 2>/dev/null) || {{ touched=1; break; }}
        specs=$(printf '%s\\n' "$pairs" | while read -r commit parents; do
            [ -n "$commit" ] || continue
            [ -n "$parents" ] || {{ echo root; continue; }}
            for parent in $parents; do printf '%s:memory\\n%s:memory\\n' "$commit" "$parent"; done
        done)
        case "$specs" in *root*) touched=1; break ;; esac
        [ -n "$specs" ] || continue
        ids=$(printf '%s\\n' "$specs" | git cat-file --batch-check='%(objectname)' 2>/dev/null) ||
            {{ touched=1; break; }}
        differ=$(printf '%s\\n' "$ids" | while read -r a && read -r b; do
            case "$a" in *' missing') a=missing ;; *' '*) echo x; break ;; esac
            case "$b" in *' missing') b=missing ;; *' '*) echo x; break ;; esac
            [ "$a" = "$b" ] || {{ echo x; break; }}
        done)
        [ -z "$differ" ] || {{ touched=1; break; }}
    done <<EOF
$input
EOF
    [ -n "$touched" ] || exit $status
fi
if [ -n "$INSTALL_PYTHON" ] && [ -x "$INSTALL_PYTHON" ]; then
    # The gate's own entry (what 'scarwarden gate-hook' runs, without the CLI's start-up)
    printf '%s\\n' "$input" | "$INSTALL_PYTHON" -m scarwarden.gate.hook_main "$HOOK_NAME" || status=$?
elif command -v scarwarden >/dev/null 2>&1; then
    printf '%s\\n' "$input" | scarwarden gate-hook "$HOOK_NAME" || status=$?
else
    echo "scarwarden: cannot run the provenance gate: '$INSTALL_PYTHON' is gone and" \\
         "'scarwarden' is not on PATH (bypass once: SCARWARDEN_SKIP=1)" >&2
    exit 1
fi
exit $status
"""


def render_hook(python: str | None = None, name: str = "pre-commit") -> str:
    """The hook script; ``python=None`` relies on ``scarwarden`` being on ``PATH``."""
    template = _REF_TEMPLATE if name in REF_HOOK_TYPES else _TEMPLATE
    quoted = shlex.quote(python) if python else "''"
    return template.format(marker=MARKER, python=quoted, door=DOOR_MARKS)


def is_ours(path: Path) -> bool:
    if not path.is_file():  # a FIFO would block the read for ever; a folder is no hook of ours
        return False
    try:
        with open(path, "rb") as handle:
            return MARKER.encode() in handle.read(2048)
    except OSError:
        return False


def hooks_dir(root: Path | str) -> tuple[Path, str | None]:
    """Where git runs hooks from (``core.hooksPath`` honoured), and that setting."""
    custom = git.config_get(root, "core.hooksPath")
    where = git.git_path(root, "hooks")
    return (where if where.is_absolute() else Path(root) / where), custom


def _write_executable(path: Path, text: str) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o755)  # noqa: S103 - a hook must be executable, like git's samples
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def install(root: Path | str, *, hooks_path_ok: bool = False) -> Path:
    """Install the gate as ``pre-commit`` (and ``pre-merge-commit``); return the
    pre-commit hook's path. Idempotent; foreign hooks are kept as ``.legacy``."""
    directory, custom = hooks_dir(root)
    if custom and not hooks_path_ok:
        raise UsageError(
            f"Cowardly refusing to install the hook with core.hooksPath set ({custom})",
            hint="install it there with 'scarwarden hooks install --hooks-path-ok', or "
            "unset the setting: git config --unset core.hooksPath",
        )
    plan: list[tuple[Path, Path | None]] = []
    for name in HOOK_TYPES + REF_HOOK_TYPES:
        path, legacy = directory / name, directory / f"{name}.legacy"
        if path.exists() and not path.is_file():  # kept as .legacy, git would fail to run it
            raise UsageError(
                f"{path} is not a file (a folder, FIFO or socket), where git runs a hook from",
                hint="move it away, then run 'scarwarden hooks install' again",
            )
        if (path.exists() or path.is_symlink()) and not is_ours(path):
            if legacy.exists() or legacy.is_symlink():
                raise UsageError(
                    f"{path} is not Scarwarden's and {legacy.name} exists already",
                    hint=f"merge the two by hand into {legacy.name}, delete {name}, "
                    "and run 'scarwarden hooks install' again",
                )
            plan.append((path, legacy))
        else:
            plan.append((path, None))
    directory.mkdir(parents=True, exist_ok=True)
    for path, keep_as in plan:
        if keep_as is not None:
            os.replace(path, keep_as)
        _write_executable(path, render_hook(sys.executable, path.name))
    return directory / HOOK_TYPES[0]


@dataclass
class Uninstalled:
    removed: list[Path] = field(default_factory=list)
    restored: list[Path] = field(default_factory=list)
    #: Hooks left alone because they are not Scarwarden's.
    foreign: list[Path] = field(default_factory=list)
    #: The playbook merge driver's registration, removed (described).
    merge_driver: list[str] = field(default_factory=list)


def uninstall(root: Path | str) -> Uninstalled:
    """Remove the gate's hooks and put back the hooks they replaced."""
    directory, _custom = hooks_dir(root)
    result = Uninstalled()
    for name in HOOK_TYPES + REF_HOOK_TYPES:
        path, legacy = directory / name, directory / f"{name}.legacy"
        if not (path.exists() or path.is_symlink()):
            if legacy.exists():
                os.replace(legacy, path)
                result.restored.append(path)
            continue
        if not is_ours(path):
            result.foreign.append(path)
            continue
        path.unlink()
        result.removed.append(path)
        if legacy.exists() or legacy.is_symlink():
            os.replace(legacy, path)
            result.restored.append(path)
    result.merge_driver = uninstall_merge_driver(root)
    return result
