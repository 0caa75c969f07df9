"""The rest of a newcomer's first hour (issue 28, point 5): git without an identity, the
package's project URLs and --help's pointer to the docs, the README's install line
without a terminal, and the demo's hint about the web UI's extra."""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, git


def test_git_without_an_identity_gets_the_two_commands_that_fix_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # useConfigOnly: git never guesses a name from the host, on any machine.
    (home / ".gitconfig").write_text("[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n")
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER")) and k != "EMAIL"
    }
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    proc = subprocess.run(
        [sys.executable, "-m", "scarwarden", "init", "--no-hooks"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: git does not know who is committing: user.name and user.email")
    assert 'git config --global user.name "Your Name"' in proc.stderr
    assert 'git config --global user.email "you@example.com"' in proc.stderr
    assert "*** Please tell me who you are" not in proc.stderr and "fatal:" not in proc.stderr
    assert git(repo, "status", "--porcelain").stdout == ""  # nothing half-written
    assert git(repo, "rev-parse", "-q", "--verify", "HEAD", check=False).returncode != 0


def test_the_package_names_its_home_and_help_points_there() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    urls = dict(
        line.split(" = ", 1) for line in cfg["metadata"]["project_urls"].strip().splitlines() if " = " in line
    )
    assert set(urls) >= {"Documentation", "Source", "Issues"}
    assert all(u.startswith("https://") for u in urls.values())
    from click.testing import CliRunner

    from scarwarden.cli.group import main_group

    help_text = CliRunner().invoke(main_group, ["--help"]).output
    assert urls["Documentation"] in " ".join(help_text.split())


def test_readme_install_lines_need_no_terminal() -> None:
    readme = (ROOT / "README.md").read_text()
    for line in re.findall(r"^apt-get install.*$", readme, flags=re.M):
        assert " -y " in line, line
    assert re.search(r"tests run .* about \d", " ".join(readme.split())), (
        "the README says how long the tests take"
    )


def test_the_demo_says_serve_needs_the_ui_extra_when_it_is_missing(demo_repo) -> None:
    code = (
        "import sys; sys.modules['flask'] = None\n"
        "from scarwarden.demo.sections import audit_section\n"
        "from scarwarden.repo import open_repo\n"
        "audit_section(open_repo(sys.argv[1]), print)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(demo_repo.root)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "serve needs the ui extra first: pip install 'scarwarden[ui]'" in proc.stdout
    from scarwarden.demo.sections import audit_section

    lines: list[str] = []
    audit_section(demo_repo, lines.append)  # Flask is installed here: no such line
    assert not any("ui extra" in line for line in lines)


def test_the_demo_names_a_key_variable_that_is_used_without_settings(demo_repo) -> None:
    """SCARWARDEN_API_KEY alone names no server and is sent nowhere: the demo's closing
    advice ('Set SCARWARDEN_API_KEY (or DASHSCOPE_API_KEY)') led to nothing."""
    from scarwarden.demo.sections import answers_section

    lines: list[str] = []
    answers_section(demo_repo, lines.append, environ={})
    text = " ".join(" ".join(lines).split())
    assert "Set SCARWARDEN_API_KEY" not in text
    assert "Set DASHSCOPE_API_KEY (or OPENAI_API_KEY" in text
    assert "SCARWARDEN_API_KEY once a provider or base URL is set" in text
