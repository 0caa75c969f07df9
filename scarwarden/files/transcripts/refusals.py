"""The problems of a refused import, the first few named and the rest counted.

A file may hold a million conversations, each refused for the same reason (a key in
every tool call): each problem held and printed was 40,000 lines of error and 73 MB for
20,000 of them. The first :data:`MAX_NAMED` say what is wrong and where; the count says
how much more there is.
"""

from __future__ import annotations

from collections.abc import Iterable

from scarwarden.errors import Problem, ValidationError

MAX_NAMED = 20


class Refusals:
    """Problems added as they are found: the first :data:`MAX_NAMED` kept, the rest counted."""

    def __init__(self) -> None:
        self.named: list[Problem] = []
        self.more = 0

    def add(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            if len(self.named) < MAX_NAMED:
                self.named.append(problem)
            else:
                self.more += 1

    def __bool__(self) -> bool:
        return bool(self.named)

    def listed(self, source: str) -> list[Problem]:
        """The problems named, then how many more (in ``source``)."""
        more = [Problem(f"and {self.more:,} more problem(s)", file=source)] if self.more else []
        return self.named + more


def refuse(source: str, leaks: Refusals, invalid: Refusals, refused: Refusals) -> None:
    """A secret first, then invalid input, then personal data ``privacy:`` refuses."""
    if leaks:
        raise ValidationError(
            f"{source}: refused, it holds a secret; nothing was written", problems=leaks.listed(source)
        )
    if invalid:
        raise ValidationError(
            f"{source}: invalid episode input; nothing was written", problems=invalid.listed(source)
        )
    if refused:
        what = "a secret" if any("holds a secret" in p.message for p in refused.named) else "personal data"
        raise ValidationError(
            f"{source}: refused, it holds {what}; nothing was written", problems=refused.listed(source)
        )
