"""SHA-256 and SHA-1 digests without importing :mod:`hashlib` where CPython has its own.

``import hashlib`` loads OpenSSL's bindings (``_hashlib``) and every algorithm's
constructor: ~11M instructions, about 5% of a cold ``scarwarden recall``, which hashes
one receipt (issue 30: a cold recall within 6x ``python -c pass``). CPython builds its
own SHA modules, small and with the same digests: ``_sha256`` and ``_sha1`` up to 3.11,
``_sha2`` and ``_sha1`` from 3.12. A build without them (``--without-builtin-hashlib-
hashes``) gets hashlib's; tests/test_digests.py checks every path gives hashlib's digest.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _constructor(modules: tuple[str, ...], name: str) -> Callable[[bytes], Any]:
    """``name`` from the first of ``modules`` that imports, else from hashlib."""
    for module in modules:
        try:
            return getattr(__import__(module), name)
        except (ImportError, AttributeError):
            continue
    import hashlib

    return getattr(hashlib, name)


_sha256: Callable[[bytes], Any] | None = None
_sha1: Callable[[bytes], Any] | None = None


def sha256(data: bytes) -> Any:
    """``hashlib.sha256(data)``: an object with ``hexdigest()`` and ``digest()``."""
    global _sha256
    if _sha256 is None:
        _sha256 = _constructor(("_sha2", "_sha256"), "sha256")
    return _sha256(data)


def sha1(data: bytes) -> Any:
    """``hashlib.sha1(data)`` (git's object IDs; not for security)."""
    global _sha1
    if _sha1 is None:
        _sha1 = _constructor(("_sha1",), "sha1")
    return _sha1(data)
