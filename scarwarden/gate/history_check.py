"""``scarwarden verify`` as an auditor needs it: objects as stored (replace refs off), a
shallow history reported as unverifiable rather than honest, every branch and tag."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from scarwarden.errors import ExitCode, ScarwardenError
from scarwarden.gate.policy import problem
from scarwarden.gate.verify import WalkResult, verify, walk
from scarwarden.git.integrity import branch_and_tag_tips, no_replace_objects, replaced_objects, shallow_depth
from scarwarden.repo import MemoryRepo, open_repo


class UnverifiableHistory(ScarwardenError):
    exit_code = ExitCode.UNVERIFIABLE


def verify_history(
    root: Path | str | MemoryRepo,
    rev_range: str | None = None,
    *,
    all_refs: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> WalkResult:
    """Walk the history (``rev_range``, HEAD's, or every branch and tag) with replace
    refs disabled; raise :class:`UnverifiableHistory` on a shallow clone.
    ``progress(done, total)``: the walk's steps, or with ``all_refs`` the refs walked."""
    repo = root if isinstance(root, MemoryRepo) else open_repo(root, initialised=False)
    with no_replace_objects():
        depth = shallow_depth(repo.root)
        if depth is not None:
            raise UnverifiableHistory(
                f"the history is shallow: {depth} commit{'s' if depth != 1 else ''} visible from "
                "HEAD; verify cannot prove what it cannot see",
                hint="fetch the whole history (git fetch --unshallow; in CI, actions/checkout "
                "with fetch-depth: 0) and verify again",
            )
        if all_refs:
            result = _merged(_walk_each(repo, branch_and_tag_tips(repo.root), progress))
        else:
            result = verify(repo, rev_range, progress=progress)
        for sha in replaced_objects(repo.root):
            result.problems.append(
                problem(
                    "object-replaced",
                    f"git replace stands in for object {sha[:10]}: git shows other content than the "
                    "history holds (verify read the stored objects)",
                    hint=f"remove it unless you know why it is there: git replace -d {sha}",
                )
            )
        return result


def _walk_each(
    repo: MemoryRepo, refs: list[str], progress: Callable[[int, int], None] | None
) -> list[WalkResult]:
    """Each ref walked on its own; the bar counts refs (each walk would restart it)."""
    results = []
    for done, ref in enumerate(refs, start=1):
        results.append(walk(repo, ref))
        if progress is not None:
            progress(done, len(refs))
    return results


def _merged(results: list[WalkResult]) -> WalkResult:
    """One result for several walks; a problem in history two refs share is told once."""
    total = WalkResult("every branch and tag")
    seen: set[tuple[object, ...]] = set()
    for result in results:
        for f in fields(WalkResult):
            value = getattr(result, f.name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(total, f.name, getattr(total, f.name) + value)
            elif isinstance(value, list):
                for item in value:
                    key = (f.name, getattr(item, "commit", None), str(item))
                    if key not in seen:
                        seen.add(key)
                        getattr(total, f.name).append(item)
    return total
