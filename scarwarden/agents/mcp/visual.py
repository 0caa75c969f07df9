"""The MCP ``audit_image`` tool (issue 19): ``audit-image`` for an agent.

The image is a path inside the repository (resolved, symlinks too, and refused when it
leads outside) or base64 data; either way it is checked by its bytes like every other
image (:func:`scarwarden.files.media.check_image`). The reply is ``audit-image --json``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from scarwarden.errors import UsageError
from scarwarden.files.media import Image, check_image, read_image
from scarwarden.repo import MemoryRepo

#: Largest image the tool takes (as ``audit-image`` without --record): 40 MiB.
MAX_BYTES = 40 * 1024 * 1024


def load_image(repo: MemoryRepo, path: str | None, data_base64: str | None) -> tuple[Image, str]:
    """The image a tool call names, and how to name it in the reply."""
    if (path is None) == (data_base64 is None):
        raise UsageError(
            "give exactly one of path (a file inside the repository) or data_base64",
            hint='e.g. {"task": "Beta banner", "path": "campaign/banner.png"}',
        )
    if path is not None:
        root = repo.root.resolve()
        target = (root / path).resolve()
        if target != root and root not in target.parents:
            raise UsageError(
                f"{path} is outside the repository",
                hint="give a path inside it, or send the image as data_base64",
            )
        return read_image(target, max_bytes=MAX_BYTES), target.relative_to(root).as_posix()
    assert data_base64 is not None
    text = data_base64.split(",", 1)[1] if data_base64.startswith("data:") else data_base64
    if len(text) > MAX_BYTES * 4 // 3 + 4:
        raise UsageError(f"data_base64 is over the {MAX_BYTES // (1024 * 1024)} MiB image limit")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise UsageError(
            "data_base64 is not valid base64", hint="send the image's bytes, base64-encoded"
        ) from None
    return check_image(raw, source="data_base64", max_bytes=MAX_BYTES), "<data_base64>"


def audit_image_reply(
    repo: MemoryRepo,
    environ: Mapping[str, str],
    task: str,
    path: str | None = None,
    data_base64: str | None = None,
) -> dict[str, Any]:
    """``audit-image --json`` for one tool call (no model: the rules, ``judged: false``)."""
    from scarwarden.answers.visual import audit_image
    from scarwarden.llm.client import client_from_config

    image, source = load_image(repo, path, data_base64)
    client = client_from_config(repo.config, environ)
    return audit_image(repo, image, task, client=client, source=source).to_json()
