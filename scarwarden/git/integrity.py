"""Reading history as it is: replace refs off, shallow clones and every ref named."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scarwarden.git.run import run

#: git honours this in every process it starts: ``git replace`` no longer applies.
NO_REPLACE = "GIT_NO_REPLACE_OBJECTS"


@contextmanager
def no_replace_objects() -> Iterator[None]:
    """Every git process started inside reads objects as stored, not as ``git replace``
    says (``GIT_NO_REPLACE_OBJECTS=1``): a replaced episode blob cannot pass verify."""
    before = os.environ.get(NO_REPLACE)
    os.environ[NO_REPLACE] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NO_REPLACE, None)
        else:
            os.environ[NO_REPLACE] = before


def shallow_depth(root: Path | str) -> int | None:
    """How many commits HEAD reaches in a shallow clone; ``None`` when it is not shallow."""
    if run(root, "rev-parse", "--is-shallow-repository").decode().strip() != "true":
        return None
    return int(run(root, "rev-list", "--count", "HEAD").decode().strip() or 0)


def branch_and_tag_tips(root: Path | str) -> list[str]:
    """Every branch and tag (``refs/heads``, ``refs/tags``), by full name."""
    out = run(root, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags").decode()
    return [line for line in out.splitlines() if line]


def replaced_objects(root: Path | str) -> list[str]:
    """The objects ``git replace`` stands in for (``refs/replace/<sha>``)."""
    out = run(root, "for-each-ref", "--format=%(refname:strip=2)", "refs/replace").decode()
    return [line for line in out.splitlines() if line]
