"""scarwarden.digests gives hashlib's digests, whichever module serves them."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from scarwarden import digests


@pytest.mark.parametrize("data", [b"", b"abc", "PB-01 caf\u00e9".encode(), bytes(range(256)) * 300])
def test_the_same_digests_as_hashlib(data: bytes) -> None:
    assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert digests.sha256(data).digest() == hashlib.sha256(data).digest()
    assert digests.sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()  # noqa: S324


def test_without_cpythons_own_modules_hashlib_serves() -> None:
    """A build without ``_sha2``/``_sha256``/``_sha1`` (blocked here) falls back to hashlib."""
    code = (
        "import sys\n"
        "for name in ('_sha2', '_sha256', '_sha1'):\n    sys.modules[name] = None\n"
        "from scarwarden import digests\n"
        "print(digests.sha256(b'abc').hexdigest(), digests.sha1(b'abc').hexdigest())\n"
        "print('hashlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == [hashlib.sha256(b"abc").hexdigest(), hashlib.sha1(b"abc").hexdigest(), "True"]  # noqa: S324


def test_a_receipt_hash_imports_no_hashlib() -> None:
    code = (
        "import sys\nfrom scarwarden import digests\ndigests.sha256(b'x').hexdigest()\n"
        "print('hashlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
