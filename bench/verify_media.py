"""What proving images costs ``verify`` (issue 19).

``verify`` reads every image a commit added from git's stored objects and checks it is
the image its name says (SHA-256, format, structure). This builds two histories of the
same shape in temporary repositories: N commits each adding one episode, with and
without a ~300 KB image attached (noise PNGs: incompressible, the worst case), and
times ``verify`` over each (median of 3). The ratio is the cost of the image checks.

    python bench/verify_media.py [N]
"""

from __future__ import annotations

import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image as PILImage

from scarwarden.files.media import check_image
from scarwarden.files.record import add_episodes
from scarwarden.files.scaffold import init
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo, open_repo


def _repo(root: Path) -> MemoryRepo:
    root.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "bench"],
        ["config", "user.email", "bench@example.invalid"],
        ["config", "commit.gpgsign", "false"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    init(open_repo(root, initialised=False))
    return open_repo(root)


def _history(repo: MemoryRepo, n: int, *, images: bool) -> int:
    """``n`` commits of one episode each (with an image); the image bytes committed."""
    total = 0
    for i in range(n):
        attached = []
        if images:
            out = io.BytesIO()
            PILImage.effect_noise((320, 320), 40 + i).convert("RGB").save(out, "PNG")
            attached = [check_image(out.getvalue(), source="bench", max_bytes=10**8)]
            total += len(attached[0].data)
        data = {"task": f"Banner {i}", "outcome": "Shipped", "at": f"2026-11-{1 + i % 28:02d}T10:00:00Z"}
        add_episodes(repo, [data], images=attached)
    return total


def _time_verify(repo: MemoryRepo) -> tuple[float, int]:
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        result = verify(repo)
        runs.append(time.perf_counter() - start)
        assert result.ok, result.problems
    return statistics.median(runs), result.media


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory(prefix="sw-verify-media-") as tmp:
        plain = _repo(Path(tmp) / "plain")
        _history(plain, n, images=False)
        pictured = _repo(Path(tmp) / "images")
        size = _history(pictured, n, images=True)
        subprocess.run(["git", "gc", "-q"], cwd=plain.root, check=True)
        subprocess.run(["git", "gc", "-q"], cwd=pictured.root, check=True)
        base, _ = _time_verify(plain)
        with_images, proved = _time_verify(pictured)
    print(f"{n} commits, one episode each; images: {proved} proved, {size / 1e6:.1f} MB in all")
    print(f"verify without images  {base * 1000:8.0f} ms")
    print(f"verify with images     {with_images * 1000:8.0f} ms  ({with_images / base:.2f}x)")
    extra = with_images - base
    print(f"image checks           {extra * 1000:8.0f} ms  ({size / 1e6 / extra:.0f} MB/s read and proved)")


if __name__ == "__main__":
    main()
