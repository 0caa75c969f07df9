"""Images in history and in Git LFS (issue 19): ``verify`` reads every media file a
commit added from the stored objects and proves it is the image its name says; a Git LFS
pointer stands for its image (its oid is the name's hash, its size within the cap)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from conftest import git, head
from helpers import bypass_env

from scarwarden.files import media
from scarwarden.gate.check import check_all, check_staged
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo

PIL = pytest.importorskip("PIL.Image")


def png(colour: str) -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", (24, 16), colour).save(out, "PNG")
    return out.getvalue()


def lfs(oid: str, size: int) -> bytes:
    """A Git LFS pointer as ``git lfs`` writes it (git-lfs itself is not needed)."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode()


def attach(repo: MemoryRepo, make_cli, tmp_path: Path, colour: str = "red") -> tuple[str, str]:
    """An episode attaching a PNG, committed through the CLI: (sha256, media path)."""
    image = tmp_path / f"{colour}.png"
    image.write_bytes(png(colour))
    out = make_cli(repo.root)(
        "episode", "add", "--task", "Banner", "--outcome", "Shipped", "--attach", str(image)
    )
    assert out.exit_code == 0, out.output
    sha = hashlib.sha256(image.read_bytes()).hexdigest()
    return sha, f"memory/media/{sha}.png"


def test_verify_reports_a_media_blob_swapped_in_the_commit_that_added_it(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    root = memory_repo.root
    _sha, rel = attach(memory_repo, make_cli, tmp_path)
    clean = verify(memory_repo)
    assert clean.ok and clean.media == 1 and "1 image proved by content" in clean.summary()
    # Rewrite the commit that added it with other bytes under the same name: no later
    # commit changes the file, so only its content can tell.
    (root / rel).write_bytes(png("blue"))
    git(root, "add", rel)
    git(root, "commit", "-q", "--amend", "--no-edit", "--no-verify", env=bypass_env())
    [problem] = verify(memory_repo).problems
    assert problem.code == "media-hash-mismatch" and problem.commit == head(root)
    assert f"its content's SHA-256 is {hashlib.sha256(png('blue')).hexdigest()}" in problem.message
    result = make_cli(root)("verify", "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["problems"][0]["code"] == "media-hash-mismatch"


def test_verify_reports_a_non_image_named_by_its_own_hash(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    text = b"<html>not an image</html>\n"
    rel = f"memory/media/{hashlib.sha256(text).hexdigest()}.png"
    (root / "memory/media").mkdir(parents=True)
    (root / rel).write_bytes(text)
    git(root, "add", rel)
    git(root, "commit", "-q", "--no-verify", "-m", "sneak it in", env=bypass_env())
    [problem] = verify(memory_repo).problems
    assert problem.code == "media-invalid" and "not an image" in problem.message and problem.file == rel


def test_verify_reads_the_stored_blob_not_a_replacement(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    root = memory_repo.root
    _sha, rel = attach(memory_repo, make_cli, tmp_path)
    stored = git(root, "rev-parse", f"HEAD:{rel}").stdout.strip()
    fake = tmp_path / "fake.png"
    fake.write_bytes(b"not a png")
    git(root, "replace", stored, git(root, "hash-object", "-w", str(fake)).stdout.strip())
    assert git(root, "cat-file", "-p", f"HEAD:{rel}").stdout == "not a png"  # what git shows now
    result = make_cli(root)("verify", "--json")
    # The image proved fine (the stored bytes were read), and the replacement is told.
    assert [p["code"] for p in json.loads(result.stdout)["problems"]] == ["object-replaced"]


def test_an_lfs_pointer_is_accepted_when_its_oid_is_the_name(memory_repo: MemoryRepo, make_cli) -> None:
    root = memory_repo.root
    assert make_cli(root)("hooks", "install").exit_code == 0
    data = png("green")
    sha = hashlib.sha256(data).hexdigest()
    rel = f"memory/media/{sha}.png"
    (root / "memory/media").mkdir(parents=True)
    (root / rel).write_bytes(lfs(sha, len(data)))
    ep = root / "memory/episodes/2026/11/ep-lfsmedia01.yaml"
    ep.parent.mkdir(parents=True)
    ep.write_text(
        "id: ep-lfsmedia01\nat: 2026-11-20T10:00:00Z\ntask: Banner\noutcome: Shipped\n"
        f"attachments: ['sha256:{sha}']\n"
    )
    git(root, "add", "memory")
    report = check_staged(memory_repo)
    assert report.ok and report.stats["media_in_lfs"] == 1
    assert "1 image in Git LFS (its oid and size checked, its bytes not in git)" in report.summary()
    committed = git(root, "commit", "-q", "-m", "an image in LFS", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert check_all(memory_repo).stats["media_in_lfs"] == 1
    proved = verify(memory_repo)
    assert proved.ok and (proved.media, proved.media_lfs) == (1, 1)
    assert "1 image proved by content (1 in Git LFS: oid and size only)" in proved.summary()


def test_an_lfs_pointer_to_other_content_or_over_the_cap_is_refused(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    sha = hashlib.sha256(png("green")).hexdigest()
    rel = f"memory/media/{sha}.png"
    (root / "memory/media").mkdir(parents=True)
    (root / rel).write_bytes(lfs("f" * 64, 300))
    git(root, "add", rel)
    [problem] = check_staged(memory_repo).problems
    assert problem.code == "media-hash-mismatch" and "Git LFS pointer to sha256:ffff" in problem.message
    (root / rel).write_bytes(lfs(sha, 50_000_000))
    git(root, "add", rel)
    [problem] = check_staged(memory_repo).problems
    assert problem.code == "media-invalid" and "50,000,000 bytes, over the media size cap" in problem.message


@pytest.mark.parametrize(
    "raw",
    [
        b"version https://git-lfs.github.com/spec/v1\noid sha256:"
        + b"a" * 64
        + b"\nsize 12",  # no final newline
        b"version https://git-lfs.github.com/spec/v1\nsize 12\noid sha256:"
        + b"a" * 64
        + b"\n",  # keys unsorted
        b"version https://example.com/v9\noid sha256:" + b"a" * 64 + b"\nsize 12\n",
        b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"A" * 64 + b"\nsize 12\n",
        b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"a" * 64 + b"\nsize -1\n",
        b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"a" * 64 + b"\nsize 12\n" + b"x" * 1024,
    ],
)
def test_what_is_not_an_lfs_pointer(raw: bytes) -> None:
    assert media.lfs_pointer(raw) is None


def test_an_lfs_pointer_with_extensions() -> None:
    raw = (
        b"version https://git-lfs.github.com/spec/v1\next-0-foo sha256:"
        + b"b" * 64
        + b"\noid sha256:"
        + b"a" * 64
        + b"\nsize 12345\n"
    )
    assert media.lfs_pointer(raw) == media.LfsPointer("a" * 64, 12345)
