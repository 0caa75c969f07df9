"""The narrated sections of ``scarwarden demo``, one function per capability.

Each section takes the demo repository and an ``echo`` (one line at a time), calls the
library the way the commands do, and tells what happened; none of them imports the CLI.
The order of the loop is :data:`scarwarden.demo.tour.SECTIONS`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping

from scarwarden.files.display import style
from scarwarden.repo import MemoryRepo

Echo = Callable[[str], None]

#: The verdict's colour, as ``scarwarden recall`` shows it.
VERDICT_COLOUR = {"ACT": "green", "ACT_AND_FLAG": "yellow", "ASK_HUMAN": "red"}

#: Two tasks memory knows: a rule to follow, and a rule that forbids what is asked.
DEMO_TASKS = ("Draft a LinkedIn post announcing our beta", "Post our discount code on Twitter")
#: The visual audit's task, for the card the demo memory attaches (issue 19).
DEMO_IMAGE_TASK = "Preview card for the spring webinar"


def recall_section(repo: MemoryRepo, echo: Echo) -> None:
    """Recall on the demo memory: two tasks it knows, one it does not."""
    from scarwarden.recall.engine import recall_task

    echo("Recall matches a task against the rules' tags and words (no model, no vectors)")
    echo("and a router says how sure it is.")
    for task in (*DEMO_TASKS, "Book travel for the Berlin conference"):
        result = recall_task(repo, task, limit=2)
        echo("")
        echo(f'$ scarwarden recall "{task}"')
        verdict = style(result.verdict, fg=VERDICT_COLOUR[result.verdict], bold=True)
        echo(f"  {verdict}: {result.meaning}")
        if not result.rules:
            nothing = result.stats is None or result.stats.best is None
            echo(
                "  no rule shares a tag or a word with it: the answer a human gives"
                if nothing
                else "  no rule covers enough of it: the answer a human gives"
            )
            echo(f'  becomes an episode (scarwarden ask "{task}" --answer "...")')
        for rule in result.rules[:1]:
            echo(f"  {rule.id}: {rule.title}  (score {rule.score:g}, confidence {rule.confidence:g})")
            echo(f"    why: {rule.why()}")
            echo(f"    cite as {rule.citation()}")
    echo("")
    echo("Each recall went to the recall log: scarwarden log")


def answers_section(repo: MemoryRepo, echo: Echo, environ: Mapping[str, str] | None = None) -> None:
    """Answers with and without memory for the two demo tasks; offline unless a key is
    set in ``environ`` (default: the process environment)."""
    from scarwarden.answers.answer import answer_or_brief
    from scarwarden.audit.answer_text import recall_header, render_compare, terminal_width
    from scarwarden.llm.client import client_from_config

    client = client_from_config(repo.config, environ)
    width = min(terminal_width(), 140)
    leads = (
        "The same task and the same model, with memory and without. With memory, the "
        "model is told what the team learnt and must cite it:",
        "Asked for something a rule forbids, the memory side refuses and cites the rule "
        "(and so the experiences) that taught it to refuse:",
    )
    for n, task in enumerate(DEMO_TASKS):
        result, failure = answer_or_brief(repo, task, client=client, compare=True)
        if failure is not None:  # a configured but failing model: go on offline
            echo(f"(the model failed: {failure}; showing the offline brief instead)")
            client = None
        echo("")
        for line in textwrap.wrap(leads[n], width):
            echo(line)
        echo("")
        echo(style(recall_header(result.task, result.recall), bold=True))
        echo("")
        echo(render_compare(result, width))
    echo("")
    closing = (
        "Every citation in a model's answer is checked by code: a rule that was not "
        "recalled, or an episode that did not teach that rule, is flagged, and "
        "--strict fails on it. "
    )
    if client is None:
        closing += (
            "No model is configured, so the memory side shows the rule-grounded "
            f"brief an agent acts on. Set {repo.config.key_names()} "
            f'and run: scarwarden answer "{DEMO_TASKS[1]}" --compare'
        )
    for line in textwrap.wrap(closing, width):
        echo(line)


def visual_section(repo: MemoryRepo, echo: Echo) -> None:
    """The offline half of ``audit-image`` (issue 19): the rules that apply to an image,
    each citing the episodes behind it, and the sentence that no image was judged. The
    demo never sends an image to a model, key or not: what it shows is deterministic."""
    from scarwarden.answers.visual import NOT_JUDGED, audit_image
    from scarwarden.files.media import media_rel, read_image

    folder = media_rel(repo.memory_rel)
    cards = sorted((repo.root / folder).glob("*.png"))
    if not cards:
        return
    image = read_image(cards[0], max_bytes=repo.config.media.max_bytes)
    shown = f"{folder}/{image.name}"
    audit = audit_image(repo, image, DEMO_IMAGE_TASK, client=None, source=shown)
    echo("Images are checked against the rules the team learnt about images: every rule")
    echo("marked '- Applies to: images' and the rules the task recalls, each with its scars.")
    echo("")
    echo(f'$ scarwarden audit-image {shown} --task "{DEMO_IMAGE_TASK}"')
    echo(f"  Image: the demo's preview card (sha256:{image.sha256[:12]}, {image.ext.upper()})")
    echo(f"  {len(audit.rules)} rule(s) apply:")
    for rule in audit.rules:
        echo(f"    {rule.citation} {rule.title} ({rule.why})")
    echo(f"  {style(NOT_JUDGED, fg='yellow')}")
    echo("")
    echo("With a vision model (model.vision_model), each rule gets pass, violates or unclear")
    echo("with the evidence seen; code checks every rule a verdict cites was sent, and")
    echo("--strict fails CI on a violation. Without one it never pretends to have looked.")


def gate_section(repo: MemoryRepo, echo: Echo) -> None:
    """The gate on a real ``git commit``: an honest rule passes, an invented citation
    is rejected with the reason, and nothing is committed."""
    from scarwarden.files.record import add_episodes
    from scarwarden.gate.hooks import install

    install(repo.root)
    echo("The provenance gate runs as a git pre-commit hook (scarwarden hooks install).")
    [episode] = add_episodes(
        repo,
        [
            {
                "task": "Announce the webinar on the newsletter",
                "action": "Gave the start time as 10:00 with no timezone",
                "outcome": "Readers in three countries asked which 10:00",
                "correction": "Always give webinar times in UTC and the main local timezone",
                "tags": ["webinar", "timezone", "newsletter"],
                "source": "correction",
            }
        ],
        source="demo",
    )
    echo(f"  1. git commit of episode {episode.id}: accepted")
    honest = _commit_rule(
        repo,
        "Give webinar times with a timezone",
        "State webinar times in UTC and the audience's main timezone.",
        ["webinar", "timezone"],
        episode.id,
    )
    echo(f"  2. git commit of rule {honest} citing {episode.id}: accepted")
    _show_rejected_rule(repo, echo, invented="ep-n0such0ep1")
    echo(
        "No provenance, no rule: the commit did not happen; 'scarwarden verify' proves "
        "the whole history the same way."
    )


def _commit_rule(repo: MemoryRepo, title: str, text: str, tags: list[str], episode_id: str) -> str:
    """Add a rule citing ``episode_id`` and commit it through the hook; its ID."""
    from scarwarden import git
    from scarwarden.files import playbook as pb
    from scarwarden.files.playbook_edit import load_playbook, save_playbook

    book = load_playbook(repo)
    rule = pb.make_rule(book.next_id(), title, text, tags, [episode_id])
    save_playbook(repo, book.with_rule(rule))
    git.add(repo.root, [repo.playbook_rel])
    git.commit(repo.root, f"rule: add {rule.id}\n", only=[repo.playbook_rel])
    return rule.id


def _show_rejected_rule(repo: MemoryRepo, echo: Echo, *, invented: str) -> None:
    """Try to commit a rule citing the ``invented`` episode, show the hook's refusal,
    then put the playbook back as it was."""
    from scarwarden import git
    from scarwarden.errors import GitError
    from scarwarden.files import playbook as pb
    from scarwarden.files.playbook_edit import load_playbook, save_playbook

    book = load_playbook(repo)
    bogus = pb.make_rule(
        book.next_id(),
        "Always post on Fridays",
        "Post every announcement on a Friday afternoon.",
        ["post"],
        [invented],
    )
    original = repo.playbook_path.read_bytes()
    save_playbook(repo, book.with_rule(bogus))
    git.add(repo.root, [repo.playbook_rel])
    try:
        git.commit(repo.root, f"rule: add {bogus.id}\n", only=[repo.playbook_rel])
        echo("  (unexpected: the gate let an invented citation through)")
    except GitError as exc:
        echo(f"  3. git commit of rule {bogus.id} citing {invented}: REJECTED by the hook:")
        for line in exc.message.splitlines():
            if line.lstrip().startswith(("- ", "hint:", "scarwarden check:")):
                echo(f"       {line.strip()}")
    finally:
        repo.playbook_path.write_bytes(original)
        git.add(repo.root, [repo.playbook_rel])


def distill_section(repo: MemoryRepo, echo: Echo) -> None:
    """The offline distiller on the demo clone, and the commit it makes."""
    from scarwarden import git
    from scarwarden.distill import distill as run_distill

    result = run_distill(repo, offline=True)
    if result.commit is None:
        echo("Nothing new to distill: every episode is cited by a rule already.")
        return
    echo(
        f"{len(result.new)} episodes were not distilled yet (no rule cites them, no distill "
        "commit lists them)."
    )
    echo(
        "'scarwarden distill --offline' (deterministic, no model) turns them into playbook "
        "changes, as one commit:"
    )
    echo("")
    echo(style("$ git show --stat HEAD", dim=True))
    for line in git.show_stat(repo.root, "HEAD").rstrip().splitlines():
        echo("  " + line if line else "")
    echo("")
    if any(c.kind == "update" for c in result.changes):
        echo(
            "An update keeps the rule's ID and reviewed wording, adds the new citations and "
            "each new lesson as a sentence of its own ('- Sentences from:' names its episodes), "
            "instead of a near-duplicate rule."
        )
    added = [c for c in result.changes if c.kind == "add"]
    if added:
        echo(
            f"Every citation was checked in code against the ledger; "
            f"'scarwarden rule show {added[0].rule_id}' audits the new rule."
        )
    again = run_distill(repo, offline=True)
    if again.commit is None:
        echo(
            "Run again: nothing new, so no commit. With a key set, 'scarwarden distill' asks "
            "the model instead, and the same gate drops any citation it invents."
        )


def exports_section(repo: MemoryRepo, echo: Echo) -> None:
    """Export the playbook into AGENTS.md and show the head of the section."""
    from scarwarden.agents import exports

    files = exports.plan(repo, ["agents-md"])
    exports.write_exports(files)
    text = files[0].path.read_text(encoding="utf-8")
    echo("$ scarwarden export agents-md")
    echo(f"wrote  {files[0].rel}  (a marked section; the rest of the file is left alone)")
    for line in text.splitlines()[:14]:
        # Wrap the long header paragraphs for a terminal; the file keeps them whole.
        for part in textwrap.wrap(line, 92, break_on_hyphens=False) or [""]:
            echo(f"  | {part}")
    echo("  | ...")
    again = exports.plan(repo, ["agents-md"])
    echo(f"$ scarwarden export --check   ->  {again[0].rel}: {again[0].status}")


def _ui_installed() -> bool:
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("flask", "waitress"))


def audit_section(repo: MemoryRepo, echo: Echo) -> None:
    """How to open the UI on the demo memory, and one semantic diff of a tiny change."""
    echo("Every rule links to the scars that taught it. To browse this demo memory:")
    echo("  scarwarden demo --keep /tmp/sw && scarwarden -C /tmp/sw/demo-memory serve")
    echo("  (or in a fresh git repository: scarwarden init --demo && scarwarden serve)")
    if not _ui_installed():  # issue 28: 'pip install .' alone has no web server
        echo(
            "  serve needs the ui extra first: pip install 'scarwarden[ui]' (in a clone: pip install '.[ui]')"
        )
    echo("then open http://127.0.0.1:5054/ and click PB-01. For a pull request:")
    echo("  scarwarden review --base main      # the report, with the evidence quoted")
    echo("  scarwarden audit --html site/      # the same pages as static files")
    _show_hand_edit_diff(repo, echo)


def _show_hand_edit_diff(repo: MemoryRepo, echo: Echo) -> None:
    """Edit PB-14 in the working tree, show ``scarwarden diff``, put it back."""
    from dataclasses import replace

    from scarwarden.audit.diff.compare import semantic_diff
    from scarwarden.audit.diff.render import render_text
    from scarwarden.files.playbook_edit import load_playbook, save_playbook

    book = load_playbook(repo)
    rule = book.get("PB-14")
    if rule is None or rule.retired:
        return
    original = repo.playbook_path.read_bytes()
    edited = replace(
        rule,
        text=rule.text.replace("on all social channels", "on every social channel"),
        tags=rule.tags + tuple(t for t in ("social",) if t not in rule.tags),
        episode_ids=rule.episode_ids + tuple(e for e in ("ep-t3gn9ngxyq",) if e not in rule.episode_ids),
    )
    save_playbook(repo, book.with_rule(edited))
    try:
        echo("")
        echo("A reviewer's hand edit to PB-14, as `scarwarden diff` shows it (HEAD vs the working tree):")
        echo("")
        for line in render_text(semantic_diff(repo)).rstrip("\n").splitlines():
            echo(("  " + line).rstrip())
    finally:
        repo.playbook_path.write_bytes(original)
