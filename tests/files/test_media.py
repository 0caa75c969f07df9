"""Images attached to episodes (issue 19): stored by hash, checked by content, guarded by the gate."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from conftest import git, head

from scarwarden.files import media
from scarwarden.gate.check import check_all, check_staged
from scarwarden.repo import MemoryRepo

PIL = pytest.importorskip("PIL.Image")


def png(colour: str = "red", size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def animated_gif() -> bytes:
    out = io.BytesIO()
    frames = [PIL.new("RGB", (20, 20), c) for c in ("red", "blue", "green")]
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    return out.getvalue()


def encoded(fmt: str) -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", (32, 32), "orange").save(out, fmt)
    return out.getvalue()


def test_formats_are_read_from_the_bytes_and_checked_whole() -> None:
    for fmt, ext in (("PNG", "png"), ("JPEG", "jpg"), ("WEBP", "webp"), ("GIF", "gif")):
        data = encoded(fmt)
        image = media.check_image(data, source="x", max_bytes=10**6)
        assert image.ext == ext and image.sha256 == hashlib.sha256(data).hexdigest()
        with pytest.raises(Exception, match="damaged"):
            media.check_image(data[: len(data) - 7], source="cut", max_bytes=10**6)
    assert media.check_image(animated_gif(), source="a.gif", max_bytes=10**6).frames == 3


def test_episode_add_attach_stores_one_copy_by_hash(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    root = memory_repo.root
    image = tmp_path / "banner.jpeg"  # a PNG under a JPEG name: the bytes decide
    image.write_bytes(png())
    sha = hashlib.sha256(image.read_bytes()).hexdigest()
    cli = make_cli(root)
    first = cli(
        "episode",
        "add",
        "--task",
        "Beta banner",
        "--correction",
        "The logo was cropped",
        "--attach",
        str(image),
        "--attach",
        str(image),
        "--json",
    )
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["attachments"] == [f"sha256:{sha}"]
    stored = root / "memory/media" / f"{sha}.png"
    assert stored.read_bytes() == image.read_bytes()
    shown = git(root, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert f"memory/media/{sha}.png" in shown and len(shown) == 2
    again = cli("episode", "add", "--task", "Beta banner v2", "--outcome", "Approved", "--attach", str(image))
    assert again.exit_code == 0
    assert git(root, "show", "--name-only", "--format=", "HEAD").stdout.split() == [
        p for p in git(root, "show", "--name-only", "--format=", "HEAD").stdout.split() if p.endswith(".yaml")
    ]
    assert sorted(p.name for p in (root / "memory/media").iterdir()) == [f"{sha}.png"]
    assert check_all(memory_repo).ok
    text = (root / "memory/episodes").rglob("*.yaml").__next__().read_text()
    assert f"sha256:{sha}" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"this is not an image at all\n", "not an image Scarwarden accepts"),
        (png()[:60], "a damaged PNG"),
        (
            b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
            "SVG is refused",
        ),
    ],
)
def test_bad_images_are_refused_and_nothing_is_written(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path, content: bytes, message: str
) -> None:
    root = memory_repo.root
    before = head(root)
    bad = tmp_path / "card.png"
    bad.write_bytes(content)
    result = make_cli(root)("episode", "add", "--task", "Card", "--outcome", "Shipped", "--attach", str(bad))
    assert result.exit_code == 1 and message in result.stderr and "Traceback" not in result.output
    assert head(root) == before and not (root / "memory/media").exists()
    assert git(root, "status", "--porcelain").stdout == ""


def test_a_50_mb_image_is_refused_by_the_cap_before_it_is_read(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    big = tmp_path / "huge.png"
    with big.open("wb") as f:
        f.write(png())
        f.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing them
    result = make_cli(memory_repo.root)(
        "episode", "add", "--task", "T", "--outcome", "O", "--attach", str(big)
    )
    assert result.exit_code == 1 and "over the media size cap of 5.2 MB" in result.stderr
    assert "media.max_bytes" in result.stderr


def test_an_animated_gif_is_stored_as_it_is(memory_repo: MemoryRepo, make_cli, tmp_path: Path) -> None:
    gif = tmp_path / "loop.gif"
    gif.write_bytes(animated_gif())
    result = make_cli(memory_repo.root)(
        "episode", "add", "--task", "T", "--outcome", "O", "--attach", str(gif)
    )
    assert result.exit_code == 0
    sha = hashlib.sha256(gif.read_bytes()).hexdigest()
    assert (memory_repo.root / f"memory/media/{sha}.gif").read_bytes() == gif.read_bytes()


def _attached(repo: MemoryRepo, make_cli, tmp_path: Path) -> tuple[str, Path]:
    image = tmp_path / "a.png"
    image.write_bytes(png())
    assert (
        make_cli(repo.root)(
            "episode", "add", "--task", "T", "--outcome", "O", "--attach", str(image)
        ).exit_code
        == 0
    )
    sha = hashlib.sha256(image.read_bytes()).hexdigest()
    return sha, repo.root / f"memory/media/{sha}.png"


def test_the_gate_refuses_edited_and_deleted_media(memory_repo: MemoryRepo, make_cli, tmp_path: Path) -> None:
    root = memory_repo.root
    assert make_cli(root)("hooks", "install").exit_code == 0
    _sha, stored = _attached(memory_repo, make_cli, tmp_path)
    rel = stored.relative_to(root).as_posix()
    before = head(root)
    stored.write_bytes(png("blue"))
    git(root, "add", rel)
    assert [p.code for p in check_staged(memory_repo).problems] == ["media-changed"]
    refused = git(root, "commit", "-q", "-m", "edit the image", check=False)
    assert refused.returncode != 0 and "attached images are append-only" in refused.stdout + refused.stderr
    assert head(root) == before
    git(root, "rm", "-q", "--cached", rel)
    stored.unlink()
    [problem] = check_staged(memory_repo).problems
    assert problem.code == "media-changed" and "was deleted" in problem.message
    refused = git(root, "commit", "-q", "-m", "drop the image", check=False)
    assert refused.returncode != 0 and head(root) == before


def test_the_gate_checks_hash_and_missing_attachments(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    root = memory_repo.root
    data = png("green")
    wrong = "0" * 64
    (root / "memory/media").mkdir(parents=True)
    (root / f"memory/media/{wrong}.png").write_bytes(data)
    ep = root / "memory/episodes/2026/11/ep-media0001.yaml"
    ep.parent.mkdir(parents=True)
    ep.write_text(
        "id: ep-media0001\nat: 2026-11-20T10:00:00Z\ntask: Banner\noutcome: Shipped\n"
        f"attachments: ['sha256:{wrong}']\n"
    )
    git(root, "add", "memory")
    codes = [p.code for p in check_staged(memory_repo).problems]
    assert codes == ["media-hash-mismatch"]
    git(root, "rm", "-q", "--cached", f"memory/media/{wrong}.png")
    [problem] = check_staged(memory_repo).problems
    assert problem.code == "attachment-missing" and problem.episode == "ep-media0001"
    assert problem.field == "attachments"


def test_attachments_field_is_validated(memory_repo: MemoryRepo, make_cli) -> None:
    result = make_cli(memory_repo.root)(
        "episode", "add", "--file", "-", input='{"task": "t", "outcome": "o", "attachments": ["banner.png"]}'
    )
    assert result.exit_code == 1 and "'banner.png' is not an attachment" in result.output


def test_check_all_finds_a_missing_attachment_and_a_bad_media_name(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    root = memory_repo.root
    sha, stored = _attached(memory_repo, make_cli, tmp_path)
    assert check_all(memory_repo).ok
    git(root, "rm", "-q", "--cached", stored.relative_to(root).as_posix())
    codes = [p.code for p in check_all(memory_repo).problems]
    assert codes == ["attachment-missing"]
    git(root, "add", stored.relative_to(root).as_posix())
    (root / "memory/media/notes.txt").write_text("hello\n")
    git(root, "add", "memory/media/notes.txt")
    [problem] = check_all(memory_repo).problems
    assert problem.code == "media-invalid" and "notes.txt" in problem.message


def test_verify_finds_a_media_file_deleted_past_the_hook(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    from helpers import bypass_env

    from scarwarden.gate.verify import verify

    root = memory_repo.root
    _sha, stored = _attached(memory_repo, make_cli, tmp_path)
    assert verify(memory_repo).ok
    git(root, "rm", "-q", stored.relative_to(root).as_posix())
    git(root, "commit", "-q", "--no-verify", "-m", "drop it", env=bypass_env())
    problems = verify(memory_repo).problems
    assert [p.code for p in problems] == ["media-changed"] and "was deleted" in problems[0].message
    assert problems[0].commit == head(root)
