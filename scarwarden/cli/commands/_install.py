"""The right ``pip install`` line for an optional extra, for how Scarwarden was installed.

``pip install 'scarwarden[ui]'`` resolves from PyPI but not in a clone, where the extra
must name the checkout (``pip install -e '/path/to/scarwarden[ui]'``). pip records how
a distribution was installed in its ``direct_url.json`` (PEP 610): a local folder has
``url: file://...`` and ``dir_info`` (``editable: true`` for ``-e``); PyPI installs
have no such file.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

PYPI_NAME = "scarwarden"


def install_hint(extra: str, direct_url: str | None = None, *, read: bool = True) -> str:
    """``pip install ...`` for ``extra``; ``direct_url`` is the PEP 610 JSON (read from
    the installed distribution when not given and ``read`` is true)."""
    if direct_url is None and read:
        direct_url = _installed_direct_url()
    source = _local_source(direct_url)
    if source is None:
        return f"pip install '{PYPI_NAME}[{extra}]'"
    path, editable = source
    return f"pip install {'-e ' if editable else ''}'{path}[{extra}]'"


def _installed_direct_url() -> str | None:
    import importlib.metadata

    # distributions(), not distribution(): a stale *.egg-info in the current folder
    # (a clone's build leftovers) would otherwise shadow the installed one.
    for dist in importlib.metadata.distributions(name=PYPI_NAME):
        text = dist.read_text("direct_url.json")
        if text:
            return text
    return None


def _local_source(direct_url: str | None) -> tuple[str, bool] | None:
    """(folder, editable) when installed from a local folder, else None."""
    if not direct_url:
        return None
    try:
        data = json.loads(direct_url)
    except ValueError:
        return None
    url = data.get("url", "") if isinstance(data, dict) else ""
    parsed = urlparse(url)
    if parsed.scheme != "file" or "dir_info" not in data:
        return None
    folder = Path(unquote(parsed.path))
    try:
        shown = folder.relative_to(Path.cwd())
        path = "." if shown == Path(".") else f"./{shown.as_posix()}"
    except ValueError:
        path = folder.as_posix()
    return path, bool((data.get("dir_info") or {}).get("editable"))
