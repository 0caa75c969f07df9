"""The wheel: package data (demo memory, templates, py.typed) ships, and works from it.

The wheel is built from a copy of the sources in a temporary folder, so the build never
writes into the checkout.
"""

from __future__ import annotations

import email
import filecmp
import importlib.util
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, git

PACKAGE = ROOT / "scarwarden"


def _package_files(base: Path) -> set[str]:
    return {
        p.relative_to(base).as_posix()
        for p in base.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("setup.cfg", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    shutil.copytree(PACKAGE, src / "scarwarden", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    # Without the 'wheel' package setuptools 65 cannot build in this environment, so
    # pip builds in an isolated one (fetching setuptools and wheel from the index).
    isolation = [] if importlib.util.find_spec("wheel") is None else ["--no-build-isolation"]
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation, "-w", str(out), str(src)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 and any(
        s in proc.stderr
        for s in ("NewConnectionError", "No matching distribution", "Could not find a version")
    ):
        pytest.skip("building the wheel needs setuptools/wheel from a package index")
    assert proc.returncode == 0, proc.stderr
    (built,) = out.glob("scarwarden-*.whl")
    return built


def test_demo_memory_in_the_package_is_the_projects_memory() -> None:
    project, packaged = ROOT / "memory", PACKAGE / "demo" / "memory"
    files = _package_files(project)
    assert files == _package_files(packaged)
    assert len([f for f in files if f.endswith(".yaml")]) >= 16
    match, mismatch, errors = filecmp.cmpfiles(project, packaged, sorted(files), shallow=False)
    assert (mismatch, errors) == ([], [])


def test_wheel_holds_every_package_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        shipped = {n.removeprefix("scarwarden/") for n in names if n.startswith("scarwarden/")}
        missing = sorted(_package_files(PACKAGE) - shipped)
        assert missing == [], f"package data not in the wheel (setup.cfg package_data): {missing}"
        assert "scarwarden/py.typed" in names
        assert "scarwarden/demo/memory/playbook.md" in names
        episodes = [n for n in names if n.startswith("scarwarden/demo/memory/episodes/")]
        assert len(episodes) == len(list((ROOT / "memory" / "episodes").rglob("*.yaml")))
        for name in episodes + ["scarwarden/demo/memory/playbook.md"]:
            rel = name.removeprefix("scarwarden/demo/memory/")
            assert zf.read(name) == (ROOT / "memory" / rel).read_bytes(), rel
        templates = PACKAGE / "web" / "templates"
        if templates.is_dir():
            assert {f"scarwarden/web/templates/{p.name}" for p in templates.iterdir() if p.is_file()} <= names
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
        metadata = email.message_from_bytes(zf.read(f"{dist_info}/METADATA"))
    assert "scarwarden = scarwarden.cli:main" in entry_points
    assert metadata["Requires-Python"] == ">=3.10"
    assert not any(n.startswith(("tests/", "bench/", "memory/")) for n in names)


def test_init_demo_works_from_the_unpacked_wheel(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(site)!r})
        import scarwarden
        assert scarwarden.__file__.startswith({str(site)!r}), scarwarden.__file__
        from scarwarden.cli import main
        main(["-C", {str(repo)!r}, "init", "--demo", "--no-hooks"])
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "memory" / "playbook.md").read_bytes() == (ROOT / "memory" / "playbook.md").read_bytes()
    assert len(list((repo / "memory" / "episodes").rglob("*.yaml"))) == len(
        list((ROOT / "memory" / "episodes").rglob("*.yaml"))
    )
