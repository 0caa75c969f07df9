from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from scarwarden.cli.group import main_group


def test_demo_shows_playbook_and_audit_with_no_setup(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # not a git repository: the demo needs none
    result = CliRunner().invoke(main_group, ["demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "PB-01" in out and "Lead LinkedIn posts with the reader's pain" in out
    # the audit of PB-01 quotes its first cited episode word for word
    assert "task: Draft a LinkedIn post announcing the Loop Inbox beta" in out
    assert "correction: Open with the pain the reader already feels" in out
    # each capability joins the demo
    assert "ASK_HUMAN" in out and "ACT" in out
    assert "distill:" in out
    # the offline half of the visual audit (issue 19): the visual rule with its scars,
    # and the honest sentence that no image was judged
    visual = out[out.index("Images against the visual rules") : out.index("The provenance gate")]
    assert "[PB-8wy7w60p, learnt in ep-7mq2k9xv4c, ep-3fz8w1hn6d] Keep logos whole and faces clear" in visual
    assert "No image was judged: no vision model is configured" in visual


def test_demo_keep_leaves_a_working_memory_repo(tmp_path) -> None:
    result = CliRunner().invoke(main_group, ["demo", "--keep", str(tmp_path / "k")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    kept = tmp_path / "k" / "demo-memory"
    assert (kept / "memory" / "playbook.md").is_file()
    listing = subprocess.run(
        [sys.executable, "-m", "scarwarden", "--repo", str(kept), "rule", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"PB-01"' in listing.stdout
