"""The ask-human prompt on a real terminal: an answer it cannot record is asked for
again, not thrown away with the command."""

from __future__ import annotations

import re
import sys

from conftest import git
from terminal import run_on_terminal

from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo

BERLIN = "Book travel for the Berlin conference"


def test_a_blank_or_arrow_key_answer_is_asked_again(demo_repo: MemoryRepo) -> None:
    """A blank answer ended the command in the API's words ("'answer' is empty ... give
    'answer' in plain words", exit 2); an arrow key pressed to fix a typo (the prompt
    does not edit the line: ESC [ D is typed in) ended it with the ledger's refusal of an
    escape character, exit 1: either way the human's answer was lost. The prompt now
    says what is wrong and asks again."""
    typed = b"   \nUse the portal\x1b[D\x1b[D\nUse the travel portal\n"
    code, text, answered = run_on_terminal(
        [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), "ask", BERLIN],
        b"What should the agent do?",
        typed,
    )
    assert answered, text
    assert code == 0, text
    assert "Error: the answer is empty: type the human's answer" in text
    assert "Error: the answer holds an escape character (U+001B)" in text
    assert "arrow keys" in text
    assert text.count("What should the agent do?") == 3
    ep_id = re.search(r"(ep-[0-9a-z]{10})", text.split("What should the agent do?")[-1])
    assert ep_id is not None, text
    with open_index(demo_repo) as index:
        episode = index.get_episode(ep_id.group(1))
    assert episode is not None and episode.data["correction"] == "Use the travel portal"
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_the_no_terminal_hint_runs_as_written_for_any_task(cli, demo_repo: MemoryRepo) -> None:
    """Without a terminal, the hint quoted the task in double quotes as it was: a task
    holding a double quote or a '$' (Book "the" trip for $HOME) gave a command that the
    shell cut apart or expanded, recording another task. Run as printed (the answer
    filled in), it now records the task itself."""
    import shlex
    import subprocess

    task = 'Book "the" trip for $HOME, `date` and Bob\'s team!'
    result = cli("ask", task)
    assert result.exit_code == 1
    hint = result.stderr.split("pass the human's answer: ", 1)[1].strip()
    assert hint.startswith("scarwarden ask ") and hint.endswith('--answer "..."')
    command = hint.replace('"..."', "'Use the portal'", 1).replace(
        "scarwarden", f"{shlex.quote(sys.executable)} -m scarwarden -C {shlex.quote(str(demo_repo.root))}", 1
    )
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with open_index(demo_repo) as index:
        episode = index.get_episode(done.stdout.strip())
    assert episode is not None and episode.task == task
    # A plain task keeps its plain double quotes.
    assert 'scarwarden ask "Book travel for the Berlin conference" --answer' in cli("ask", BERLIN).stderr


def test_an_answer_the_ledger_would_refuse_is_asked_again(demo_repo: MemoryRepo) -> None:
    """Typed at the prompt, an answer holding personal data ``privacy:`` refuses (or a
    credential) ended the command, refused, and what the human typed was gone; the
    prompt now says why and asks again, and the answer typed then is recorded."""
    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: refuse\n", encoding="utf-8")
    git(demo_repo.root, "add", "scarwarden.yaml")
    git(demo_repo.root, "commit", "-q", "--no-gpg-sign", "-m", "privacy settings")
    for command in ("ask", "answer"):
        code, text, answered = run_on_terminal(
            [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), command, BERLIN],
            b"Memory has nothing" if command == "ask" else b"Your answer",
            b"Ask jane@acme.io first\nAsk Jane in finance first\n",
        )
        assert answered and code == 0, text
        assert "Error: the answer holds personal data: an email address (privacy.email: refuse)" in text
        assert "a placeholder such as [email]" in text
        ep_id = re.findall(r"(ep-[0-9a-z]{10})", text)[-1]
        with open_index(demo_repo) as index:
            episode = index.get_episode(ep_id)
        assert episode is not None and episode.data["correction"] == "Ask Jane in finance first", text
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
