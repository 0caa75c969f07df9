"""How a refusal names an episode it never wrote: by what was refused (the source, or
its place in a batch), never by the ID minted for it or the file it would have had,
which a user searches for and does not find."""

from __future__ import annotations

from collections.abc import Sequence

from scarwarden.errors import Problem, ValidationError
from scarwarden.records import replace


def name(source: str, number: int, count: int) -> str:
    """Item ``number`` (from 1) of a batch of ``count`` read from ``source``: ``source``
    alone in a batch of one, else ``SOURCE (item N)``."""
    return source if count == 1 else f"{source} (item {number})"


def renamed(exc: ValidationError, source: str, paths: Sequence[str], ids: Sequence[str]) -> ValidationError:
    """``exc`` (the gate's refusal of a batch it judged written) with each problem
    located in a planned file (``paths``, the batch's episodes' in order; ``ids``, theirs)
    named by what was refused (:func:`name`); its line, of a file never written, is
    dropped."""
    located = enumerate(zip(paths, ids, strict=True), 1)
    names = {path: (ep_id, name(source, n, len(paths))) for n, (path, ep_id) in located}
    exc.problems = [_named(p, *names[p.file]) if p.file in names else p for p in exc.problems]
    return exc


def _named(problem: Problem, ep_id: str, named: str) -> Problem:
    def said(text: str | None) -> str | None:
        if text is None:
            return None
        # "ep-...'s receipt ..." (the gate's proofs), "episode ep-... attaches" (media)
        text = text.replace(f"{ep_id}'s ", "its ").replace(f"episode {ep_id}", "the episode")
        return text.replace(ep_id, "the episode")

    return replace(
        problem, file=named, line=None, message=said(problem.message) or "", hint=said(problem.hint)
    )
