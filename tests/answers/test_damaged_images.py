"""Images that pass the format check but cannot be decoded, or declare a size no one
can decode safely (a decompression bomb), are refused naming the file: at attach time,
by the gate, and by ``audit-image`` before anything is sent to the vision model.
Before, ``episode add --attach`` stored them, and ``audit-image`` crashed in Pillow
(DecompressionBombError, "broken data stream", UnidentifiedImageError)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest
from conftest import git, head
from fakellm import FakeLLM
from test_audit_image import visual  # noqa: F401 - the fixture

from scarwarden.errors import ExitCode
from scarwarden.files import media
from scarwarden.files.media_structure import dimensions
from scarwarden.gate.check import check_staged
from scarwarden.repo import MemoryRepo

PIL = pytest.importorskip("PIL.Image")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_declaring(width: int, height: int, idat: bytes | None = None) -> bytes:
    """A PNG whose chunks are whole, its IHDR saying ``width`` x ``height``."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\0" * 10) if idat is None else idat
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


REFUSED = {
    "bomb.png": (
        png_declaring(0xFFFFFFFF, 0xFFFFFFFF),
        "an oversized PNG: 4,294,967,295 x 4,294,967,295 pixels",
    ),
    "big.png": (
        png_declaring(20000, 20000),
        "an oversized PNG: 20,000 x 20,000 pixels is over the limit of 89,478,485",
    ),
    "zero.png": (png_declaring(0, 0), "a damaged PNG: it says it is 0 x 0 pixels"),
    "eoi.jpg": (b"\xff\xd8\xff\xd9", "a damaged JPG: it holds no image frame"),
    "riff.webp": (b"RIFF\x04\0\0\0WEBP", "a damaged WEBP: it holds no image chunk (VP8, VP8L or VP8X)"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_attach_refuses_what_no_one_can_decode(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path, name: str
) -> None:
    data, message = REFUSED[name]
    image = tmp_path / name
    image.write_bytes(data)
    root = memory_repo.root
    before = head(root)
    result = make_cli(root)(
        "episode", "add", "--task", "Card", "--outcome", "Shipped", "--attach", str(image)
    )
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert result.stderr.splitlines()[0].startswith(f"error: {image}: {message}"), result.stderr
    assert head(root) == before and not (root / "memory/media").exists()
    assert git(root, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        *(pytest.param(name, data, message, id=name) for name, (data, message) in sorted(REFUSED.items())),
        pytest.param(
            "garbage.png",  # whole chunks, but IDAT is no zlib stream: only decoding finds it
            png_declaring(10, 10, b"garbage, not a zlib stream"),
            "a damaged or oversized image: it cannot be decoded (OSError: broken data stream",
            id="garbage.png",
        ),
    ],
)
def test_audit_image_refuses_them_before_calling_the_model(
    visual,  # noqa: F811 - the fixture imported above
    llm: FakeLLM,
    tmp_path: Path,
    name: str,
    data: bytes,
    message: str,
) -> None:
    _repo, cli, _image, _ep = visual
    image = tmp_path / name
    image.write_bytes(data)
    env = {"SCARWARDEN_API_KEY": "sk-test", "SCARWARDEN_BASE_URL": llm.url}
    result = cli("audit-image", str(image), "--task", "Beta launch banner", env=env)
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert result.stderr.startswith(f"error: {image}: {message}"), result.stderr
    assert "internal error" not in result.stderr
    assert llm.requests == []


def encoded(fmt: str, size: tuple[int, int], **options: object) -> bytes:
    out = io.BytesIO()
    PIL.new("RGBA" if options.get("lossless") else "RGB", size, "orange").save(out, fmt, **options)
    return out.getvalue()


@pytest.mark.parametrize(
    ("fmt", "options"),
    [("PNG", {}), ("JPEG", {}), ("GIF", {}), ("WEBP", {}), ("WEBP", {"lossless": True})],
)
def test_the_size_is_read_from_each_format_header(fmt: str, options: dict[str, object]) -> None:
    data = encoded(fmt, (123, 45), **options)
    image = media.check_image(data, source="x", max_bytes=10**6)
    assert dimensions(image.ext, data) == (123, 45)
    with pytest.raises(Exception, match="an oversized"):
        media.check_image(data, source="x", max_bytes=10**6, max_pixels=123 * 45 - 1)


def test_the_gate_refuses_an_oversized_image_committed_by_hand(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    data = png_declaring(20000, 20000)
    target = root / "memory/media" / f"{media.digest(data)}.png"
    target.parent.mkdir(parents=True)
    target.write_bytes(data)
    git(root, "add", str(target))
    report = check_staged(memory_repo)
    assert not report.ok
    assert any(p.code == "media-invalid" and "an oversized PNG" in p.message for p in report.problems)
