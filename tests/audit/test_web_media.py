"""Images on episode pages, served and exported (issue 19)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from scarwarden.repo import MemoryRepo

flask = pytest.importorskip("flask")
PIL = pytest.importorskip("PIL.Image")

from scarwarden.audit.web.app import create_app  # noqa: E402
from scarwarden.audit.web.static_site import export_html  # noqa: E402


def test_episode_page_shows_its_image_and_the_export_copies_it(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    root = memory_repo.root
    buf = io.BytesIO()
    PIL.new("RGB", (24, 16), "purple").save(buf, "PNG")
    image = tmp_path / "card.png"
    image.write_bytes(buf.getvalue())
    sha = hashlib.sha256(buf.getvalue()).hexdigest()
    out = make_cli(root)(
        "episode", "add", "--task", "Card", "--correction", "The logo was cropped", "--attach", str(image)
    )
    ep_id = out.stdout.strip()
    client = create_app(root, csrf_token="t" * 32, allowed_hosts={"localhost"}).test_client()
    page = client.get(f"/episodes/{ep_id}", headers={"Host": "localhost"})
    assert page.status_code == 200
    assert f'<img src="/media/{sha}.png"' in page.get_data(as_text=True)
    assert f'<a href="/images/{sha}.png">' in page.get_data(as_text=True)
    image_page = client.get(f"/images/{sha}.png", headers={"Host": "localhost"}).get_data(as_text=True)
    assert f'href="/episodes/{ep_id}"' in image_page and "Visual rules (0)" in image_page
    assert client.get("/images/nothing.png", headers={"Host": "localhost"}).status_code == 404
    served = client.get(f"/media/{sha}.png", headers={"Host": "localhost"})
    assert served.status_code == 200 and served.mimetype == "image/png" and served.data == buf.getvalue()
    assert client.get("/media/..%2Fplaybook.md", headers={"Host": "localhost"}).status_code == 404
    assert client.get(f"/media/{sha}.gif", headers={"Host": "localhost"}).status_code == 404
    (root / f"memory/media/{sha}.png").write_bytes(buf.getvalue() + b"tampered")
    assert client.get(f"/media/{sha}.png", headers={"Host": "localhost"}).status_code == 404
    # Git LFS not fetched here: the working folder holds the pointer, and the page says so.
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(buf.getvalue())}\n"
    (root / f"memory/media/{sha}.png").write_text(pointer)
    unfetched = client.get(f"/media/{sha}.png", headers={"Host": "localhost"})
    assert unfetched.status_code == 404 and "git lfs pull" in unfetched.get_data(as_text=True)
    export_html(memory_repo, tmp_path / "unfetched")  # nor does the export copy a pointer
    assert not (tmp_path / "unfetched" / f"media/{sha}.png").exists()
    (root / f"memory/media/{sha}.png").write_bytes(buf.getvalue())
    site = tmp_path / "site"
    export_html(memory_repo, site)
    assert (site / f"media/{sha}.png").read_bytes() == buf.getvalue()
    assert f'src="../media/{sha}.png"' in (site / f"episodes/{ep_id}.html").read_text()
    exported = (site / f"images/{sha}.png.html").read_text()
    assert f'src="../media/{sha}.png"' in exported and f"../episodes/{ep_id}.html" in exported


def test_exporting_again_after_a_redaction_removes_the_redacted_image(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    """The export removed an earlier export's stale rule and episode pages, never its
    images: re-exported into the published folder after `redact`, the redacted
    episode's photo stayed in media/ and its image page still quoted the old task."""
    cli = make_cli(memory_repo.root)
    images = {}
    for colour in ("purple", "orange"):
        buf = io.BytesIO()
        PIL.new("RGB", (24, 16), colour).save(buf, "PNG")
        (tmp_path / f"{colour}.png").write_bytes(buf.getvalue())
        images[colour] = hashlib.sha256(buf.getvalue()).hexdigest()
    kept = cli(
        "episode", "add", "--task", "Team card", "--outcome", "ok", "--attach", str(tmp_path / "purple.png")
    )
    leaked = cli(
        "episode",
        "add",
        "--task",
        "Customer Zanzibar photo",
        "--outcome",
        "ok",
        "--attach",
        str(tmp_path / "orange.png"),
    )
    site = tmp_path / "site"
    (site / "media").mkdir(parents=True)
    (site / "media" / "logo.png").write_bytes(b"the user's own file")
    export_html(memory_repo, site)
    orange = f"{images['orange']}.png"
    assert (site / "media" / orange).is_file() and (site / "images" / f"{orange}.html").is_file()
    assert cli("redact", leaked.stdout.strip(), "--reason", "a customer's photo").exit_code == 0
    result = export_html(memory_repo, site)
    assert not (site / "media" / orange).exists() and not (site / "images" / f"{orange}.html").exists()
    assert not [p for p in site.rglob("*") if p.is_file() and b"Zanzibar" in p.read_bytes()]
    purple = f"{images['purple']}.png"
    assert (site / "media" / purple).is_file() and (site / "images" / f"{purple}.html").is_file()
    assert (site / "media" / "logo.png").read_bytes() == b"the user's own file"
    assert result.removed == 1 and kept.exit_code == 0
