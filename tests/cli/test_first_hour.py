"""What a new user meets in the first hour (issue 18): the test run's closing line, the
install hints, the README's tour commands without a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from scarwarden.cli.commands._install import install_hint


def test_skipped_browser_tests_end_the_run_with_a_line_nobody_misses(tmp_path: Path) -> None:
    env = {**os.environ, "SCARWARDEN_TEST_CHROMIUM": str(tmp_path / "no-chromium")}
    env.pop("CI", None)
    # Its own --basetemp: a nested run in the shared /tmp/pytest-of-USER would first
    # delete the older runs' folders there (39 s of the suite's slowest test).
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "nested"), str(ROOT / "tests" / "audit" / "test_browser.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert "WEB UI UNTESTED:" in last and "browser tests skipped" in last
    assert "no browser at" in last and "apt-get install chromium" in last


def test_browser_tests_fail_in_ci_rather_than_skip(tmp_path: Path) -> None:
    env = {**os.environ, "SCARWARDEN_TEST_CHROMIUM": str(tmp_path / "no-chromium"), "CI": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "nested"), str(ROOT / "tests" / "audit" / "test_browser.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "CI must run the browser tests" in proc.stdout


@pytest.mark.parametrize(
    ("direct_url", "hint"),
    [
        (None, "pip install 'scarwarden[ui]'"),  # from PyPI: pip writes no direct_url.json
        (
            '{"url": "https://files.pythonhosted.org/x.whl", "archive_info": {}}',
            "pip install 'scarwarden[ui]'",
        ),
        (
            '{"url": "file:///src/scarwarden", "dir_info": {"editable": true}}',
            "pip install -e '/src/scarwarden[ui]'",
        ),
        ('{"url": "file:///src/my%20clone", "dir_info": {}}', "pip install '/src/my clone[ui]'"),
        ("not json", "pip install 'scarwarden[ui]'"),
    ],
)
def test_install_hint_fits_how_scarwarden_was_installed(direct_url: str | None, hint: str) -> None:
    assert install_hint("ui", direct_url, read=False) == hint


def test_install_hint_in_the_clone_names_the_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    url = json.dumps({"url": ROOT.as_uri(), "dir_info": {"editable": True}})
    assert install_hint("mcp", url) == "pip install -e '.[mcp]'"


def test_readme_tour_ask_runs_without_a_terminal(cli: object, demo_repo: object) -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index('scarwarden ask "Book travel')
    command = readme[start : readme.index("#", start)].replace("\\\n", " ")
    assert "--answer" in command
    import shlex

    args = shlex.split(command)[1:]
    result = cli(*args)  # type: ignore[operator]
    assert result.exit_code == 0, result.output
    episode_id = result.stdout.strip()
    assert episode_id.startswith("ep-"), result.output
    assert f"Recorded and committed the answer as {episode_id}" in result.stderr


@pytest.mark.parametrize(
    ("typed", "wrong", "suggested"),
    [
        (["recal", "x"], "recal", "Did you mean 'recall'?"),
        (["dist"], "dist", "(Did you mean one of: 'audit', 'distill'?)"),
        (["episode", "shwo", "ep-hkgnqdz88f"], "shwo", "Did you mean 'show'?"),
    ],
)
def test_a_typo_gets_the_closest_commands(cli: Any, typed: list[str], wrong: str, suggested: str) -> None:
    result = cli(*typed)
    assert result.exit_code == 2
    assert f"No such command '{wrong}'. {suggested}" in result.stderr


def test_nothing_close_gets_no_guess(cli: Any) -> None:
    result = cli("zzzz")
    assert result.exit_code == 2
    assert "No such command 'zzzz'." in result.stderr and "Did you mean" not in result.stderr


@pytest.mark.parametrize("group", ["episode", "rule", "hooks"])
def test_command_groups_show_examples(cli: Any, group: str) -> None:
    result = cli(group, "--help")
    assert result.exit_code == 0
    examples = result.stdout.split("Examples:\n", 1)[1].split("\n\n", 1)[0]
    assert examples.count(f"scarwarden {group} ") >= 2
