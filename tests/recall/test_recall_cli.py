"""`scarwarden recall` at the command line, the demo section, and its import budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from scarwarden.demo.sections import recall_section as demo_section
from scarwarden.repo import MemoryRepo


def test_readable_output_gives_verdict_meaning_rules_and_why(cli) -> None:
    result = cli("recall", "Post our discount code on Twitter")
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("ACT  Strong match: follow the recalled rules and cite them.")
    assert (
        "1. PB-02: Never share discount codes on public social media  (score 27.5663, confidence 0.3829)"
    ) in out
    # version 6: ep-wmjgdnc59j's task says code and twitter, half the task's mass
    assert "same case as ep-wmjgdnc59j (50%) +1.1769" in out
    # twitter: two of the ledger's 34 tasks say it (ledger weight 1 - 1/44 = 0.9773)
    assert "why: tag discount +3, tag code +3, tag twitter +2.9319, word code +" in out
    # version 4: only the closest cited episode's words count (ep-wmjgdnc59j, not also ep-dqq3bkemex)
    assert "word twitter via ep-wmjgdnc59j task +1.1567" in out and "ep-dqq3bkemex task" not in out
    assert "evidence (ep-wmjgdnc59j): Discount codes go only to the private email list" in out
    assert "cite: [PB-02, learnt in ep-wmjgdnc59j, ep-56m702j8dv, ep-dqq3bkemex]" in out
    assert "(last commit that changed memory/playbook.md)" in out


def test_words_without_quotes_and_task_from_stdin(cli) -> None:
    quoted = cli("recall", "--json", "--no-log", "Post our discount code on Twitter").stdout
    words = cli("recall", "--json", "--no-log", "Post", "our", "discount", "code", "on", "Twitter").stdout
    piped = cli("recall", "--json", "--no-log", "-", input="Post our discount code on Twitter\n").stdout
    assert quoted == words == piped


def test_explain_shows_the_arithmetic(cli) -> None:
    out = cli("recall", "--explain", "Draft a LinkedIn post announcing our beta").stdout
    assert "task stems: announc, beta, draft, linkedin, post" in out
    assert "in no rule: draft" in out
    assert "N = 15 active rules, avglen = " in out and "K1 = 1.5, B = 0.75, tag hit = 3" in out
    assert "idf(t)  = ln(1 + (N - df + 0.5) / (df + 0.5))" in out
    assert "tag:linkedin" in out and "(all of linkedin in the task)" in out
    # idf(1) = ln(1 + (15 - 1 + 0.5) / 1.5) with the demo's 15 rules (14 + the visual one)
    assert "term:beta" in out and "= idf 2.3671 (df 1) x qtf 1 x tf 1 x 2.5 / (1 + 1.5 x" in out
    assert (
        "router: ACT: the best rule's evidence 4.3636 >= 2 and it has confidence 0.4308 >= "
        "act_threshold 0.1825" in out
    )


def test_json_explain_is_data(cli) -> None:
    data = json.loads(cli("recall", "--json", "--explain", "--limit", "1", "Close the billing ticket").stdout)
    assert list(data) == ["task", "verdict", "playbook_commit", "rules", "candidates", "receipt", "explain"]
    explain = data["explain"]
    assert explain["rule_count"] == 15
    assert explain["formula"]["k1"] == 1.5
    rule = explain["rules"][0]
    assert rule["id"] == "PB-03" == data["rules"][0]["id"]
    assert [t["tag"] for t in rule["tags"]] == ["billing", "ticket"]
    for term in rule["terms"]:
        assert data["rules"][0]["contributions"]["term:" + term["stem"]] == term["contribution"]
    # Two tag hits, but "ticket" is a generic one (three rules, and past tasks say it).
    assert explain["router"]["reason"].startswith("ACT_AND_FLAG: not ACT because its evidence 1.5983 < 2")


def test_pairs_are_explained_and_rank_only(cli) -> None:
    """Recall version 3: "discount code" side by side in the task and in PB-02's text
    adds a pair contribution, explained like a term; the confidence ignores it."""
    task = "Post our discount code on Twitter"
    out = cli("recall", "--explain", task).stdout
    assert "pair(a b)  = idf (df: rules saying a then b) x weight" in out
    assert (
        "pair:discount code         3.0859  = idf 2.3671 (df 1) x weight 1 x tf 2 x 2.5 / (2 + 1.5 x "
        "(0.25 + 0.75 x 36/27.7333)): discount then code side by side (ranking only)"
    ) in out
    data = json.loads(cli("recall", "--json", "--explain", task).stdout)
    rule = data["rules"][0]
    assert rule["matched_pairs"] == [
        {"pair": "discount code", "weight": 1.0, "df": 1, "tf": 2, "contribution": 3.0859}
    ]
    assert rule["contributions"]["pair:discount code"] == 3.0859
    assert [p["pair"] for p in data["explain"]["rules"][0]["pairs"]] == ["discount code"]
    # The same confidence the words alone give (0.3829 before pairs existed too).
    assert rule["confidence"] == 0.3829
    # Words apart are no pair: "code ... discount" says both stems, not side by side.
    apart = json.loads(cli("recall", "--json", "Code for the Twitter discount").stdout)
    assert all(not r["matched_pairs"] for r in apart["rules"])


def test_bad_input_exit_codes(cli) -> None:
    empty = cli("recall", "  ")
    assert empty.exit_code == 2 and "the task is empty" in empty.stderr
    # The hint fits every door that checks a task: ask's names no other command.
    asked = cli("ask", "")
    assert asked.exit_code == 2 and "the task is empty" in asked.stderr
    assert 'describe the task in words, e.g. "' in asked.stderr and "scarwarden recall" not in asked.stderr
    missing = cli("recall")
    assert missing.exit_code == 2
    huge = cli("recall", "-", input="word " * 200_000)
    assert huge.exit_code == 2 and "the limit is 20,000" in huge.stderr
    zero = cli("recall", "--limit", "0", "x")
    assert zero.exit_code == 2
    punct = cli("recall", "--json", "?!?! ... 🎉")
    assert punct.exit_code == 0 and json.loads(punct.stdout)["verdict"] == "ASK_HUMAN"


def test_ask_human_output(cli) -> None:
    out = cli("recall", "Book travel for the Berlin conference").stdout
    assert out.startswith("ASK_HUMAN  Nothing relevant is remembered: do not guess.")
    assert "No rule in memory matches this task." in out


#: What a recall on a current index must not import: heavy libraries, and the parts of
#: Scarwarden only a change or a rebuild needs (each was on this path once: ~12% of a
#: cold recall's instructions, bench/recall.py "cold"). A failure names the module:
#: import it inside the function that needs it (docs/architecture.md, "Start-up").
NOT_ON_THE_RECALL_PATH = (
    "git",
    "requests",
    "flask",
    "mcp",
    "numpy",
    "yaml",
    "logging",
    "tempfile",
    "dataclasses",  # and inspect with it: scarwarden.records instead (issue 30)
    "typing",  # ~11.5M instructions: annotations' names under a local TYPE_CHECKING
    "scarwarden.index.build",
    "scarwarden.index.load",
    "scarwarden.index.rules",
    "scarwarden.index.ledger_words",
    "scarwarden.files.playbook",
    "scarwarden.files.playbook_parse",
    "scarwarden.files.episodes",
)


def test_recall_on_a_current_index_imports_only_what_it_needs(demo_repo: MemoryRepo) -> None:
    run = "from scarwarden.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
    argv = ["-C", str(demo_repo.root), "recall", "Draft a LinkedIn post"]
    an_hour_ago = time.time() - 3600  # a playbook saved this second is read again (racy)
    os.utime(demo_repo.playbook_path, (an_hour_ago, an_hour_ago))
    subprocess.run([sys.executable, "-c", run.format(argv=argv)], capture_output=True, check=True)  # builds
    probe = (
        "import sys\n"
        + run.format(argv=argv)
        + f"print('LOADED', sorted(m for m in {NOT_ON_THE_RECALL_PATH!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "PB-01: Lead LinkedIn posts" in proc.stdout
    assert "LOADED []" in proc.stdout, proc.stdout
    assert demo_repo.index_path.exists()


def test_demo_section(demo_repo: MemoryRepo) -> None:
    lines: list[str] = []
    demo_section(demo_repo, lines.append)
    text = "\n".join(lines)
    assert '$ scarwarden recall "Draft a LinkedIn post announcing our beta"' in text
    assert "PB-01: Lead LinkedIn posts with the reader's pain" in text
    assert "PB-02: Never share discount codes on public social media" in text
    assert text.count("ACT") >= 2 and "ASK_HUMAN" in text
    assert "why: tag linkedin +" in text


def test_an_empty_log_says_what_fills_it(cli) -> None:
    shown = cli("log")
    assert shown.exit_code == 0
    assert 'the recall log is empty: each scarwarden recall "..." adds' in shown.stderr
    cli("recall", "Draft a LinkedIn post announcing our beta")
    assert "the recall log is empty" not in cli("log").stderr
    assert cli("log", "--verdict", "ASK_HUMAN", "--since", "2999-01-01").stderr.strip() == "no recall matches"
