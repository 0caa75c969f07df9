"""The reference docs are generated from --help; they must not drift from the code."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

from scarwarden.cli.group import COMMANDS

ROOT = Path(__file__).resolve().parents[2]


def test_commands_md_is_generated_from_current_help() -> None:
    gen = runpy.run_path(str(ROOT / "docs" / "gen_commands.py"))
    current = (ROOT / "docs" / "commands.md").read_text()
    assert current == gen["generate"](), "run: python docs/gen_commands.py"


def test_every_command_has_an_example_in_its_help() -> None:
    text = (ROOT / "docs" / "commands.md").read_text()
    for name in COMMANDS:
        section = text.split(f"## scarwarden {name}\n", 1)[1].split("\n## ", 1)[0]
        assert "Example" in section, f"scarwarden {name} --help has no example"


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)\)", readme):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README links to missing {target}"
