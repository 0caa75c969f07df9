"""``scarwarden answer``, ``review-draft`` and ``feedback``: answers that cite memory."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import click

from scarwarden.commands._common import echo_json, get_repo
from scarwarden.errors import ExitCode, NoModelConfigured, ScarwardenError, UsageError
from scarwarden.repo import MemoryRepo

#: Below this many columns the two sides of --compare are printed one after the other.
TWO_COLUMNS_MIN = 100

DEMO_TASKS = ("Draft a LinkedIn post announcing our beta", "Post our discount code on Twitter")


def _client(repo: MemoryRepo) -> Any:
    from scarwarden.llm import client_from_config

    return client_from_config(repo.config, os.environ)


def no_model_error(repo: MemoryRepo, *, memory: bool = True) -> NoModelConfigured:
    """The plain 'no model is configured' failure, saying how to configure one."""
    return NoModelConfigured(
        "no model is configured, so this is the rule-grounded brief, not an answer "
        "(an agent that is itself a model can act on it)" if memory else
        "no model is configured, so there is no answer without memory to show",
        hint="set SCARWARDEN_API_KEY (or DASHSCOPE_API_KEY) to use "
             f"{repo.config.model.answer_model} at {repo.config.model.base_url}; for another "
             "OpenAI-compatible server (OpenAI, vLLM, Ollama) also set SCARWARDEN_BASE_URL "
             "and SCARWARDEN_MODEL_ANSWER. See docs/answers.md.")


# -- layout -------------------------------------------------------------------------

def wrap_lines(text: str, width: int) -> list[str]:
    """``text`` wrapped to ``width``, keeping blank lines and each line's indentation."""
    out: list[str] = []
    for line in text.splitlines() or [""]:
        stripped = line.rstrip()
        if not stripped:
            out.append("")
            continue
        indent = stripped[: len(stripped) - len(stripped.lstrip())][: width // 2]
        out.extend(textwrap.wrap(stripped.strip(), width, initial_indent=indent,
                                 subsequent_indent=indent, break_on_hyphens=False) or [""])
    return out


def side_by_side(left_title: str, left: str, right_title: str, right: str, width: int) -> str:
    """Two texts in two columns of a ``width``-column terminal."""
    col = (width - 3) // 2
    lcol = [left_title[:col], "-" * col, *wrap_lines(left, col)]
    rcol = [right_title[:col], "-" * col, *wrap_lines(right, col)]
    rows = max(len(lcol), len(rcol))
    lcol += [""] * (rows - len(lcol))
    rcol += [""] * (rows - len(rcol))
    return "\n".join(f"{a.ljust(col)} | {b}".rstrip() for a, b in zip(lcol, rcol, strict=True))


def one_after_other(left_title: str, left: str, right_title: str, right: str) -> str:
    return "\n".join([f"== {left_title} ==", left, "", f"== {right_title} ==", right])


def column_width(width: int | None = None) -> int | None:
    """The width of one column of --compare, or ``None`` when the terminal is too narrow."""
    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    return (width - 3) // 2 if width >= TWO_COLUMNS_MIN else None


def compare_layout(left_title: str, left: str, right_title: str, right: str,
                   width: int | None = None) -> str:
    """Side by side on a terminal wide enough, one after the other otherwise."""
    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    if column_width(width) is not None:
        return side_by_side(left_title, left, right_title, right, width)
    return one_after_other(left_title, left, right_title, right)


def render_compare(result: Any, width: int | None = None) -> str:
    """Both sides of a --compare result, laid out for a ``width``-column terminal."""
    from scarwarden.answer import no_memory_brief

    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    col = column_width(width) or 88
    nm = result.no_memory
    right = nm.answer.strip() if nm is not None and nm.answer else \
        no_memory_brief(result.task, width=col)
    model = (result.memory.model if result.memory else None) or "no model"
    return compare_layout(f"WITH MEMORY ({model})", memory_side_text(result, width=col),
                          f"WITHOUT MEMORY ({model})", right, width)


def verification_text(verification: Any) -> str:
    lines = [f"Citations: {verification.summary}"]
    for c in verification.verified:
        lines.append(f"  ok       {c.raw}")
    for i in verification.invented:
        target = i.rule_id + (f" {i.episode_id}" if i.episode_id else "")
        lines.append(f"  INVENTED {target}: {i.reason}")
    for rule_id in verification.uncited:
        lines.append(f"  uncited  {rule_id} was recalled but not cited")
    return "\n".join(lines)


def qc_text(qc: Any) -> str:
    lines = [qc.summary[:1].upper() + qc.summary[1:]]
    for n, rnd in enumerate(qc.rounds):
        label = "draft" if n == 0 else f"retake {n}"
        verdict = "pass" if rnd.review.passed else "retake"
        lines.append(f"  {label}: {verdict}")
        for v in rnd.review.violations:
            lines.append(f"    {v.rule_id}: {v.reason}")
        for v in rnd.review.untrusted:
            lines.append(f"    (ignored) {v.rule_id} was not recalled for this task: {v.reason}")
    return "\n".join(lines)


def memory_side_text(result: Any, *, width: int = 88) -> str:
    """The memory side as text: the answer (or the brief), its verification, QC."""
    from scarwarden.answer import brief

    side = result.memory
    if side is None:
        return ""
    if side.answer is None:
        return brief(result.recall, width=width, header=False)
    parts = [side.answer.strip(), "", verification_text(side.verification)]
    if side.qc is not None:
        parts += ["", qc_text(side.qc)]
    return "\n".join(parts)


def _header(result: Any) -> str:
    if result.recall is None:
        return f"Task: {result.task}\nMemory: off (no rules sent)"
    ids = ", ".join(r.id for r in result.recall.rules) or "none"
    return f"Task: {result.task}\nVerdict: {result.verdict}  (recalled: {ids})"


# -- answer -------------------------------------------------------------------------

def _ask_human(repo: MemoryRepo, task: str, human_answer: str | None, prompt: bool) -> Any:
    """Take the human's answer (flag or terminal) and record it as an episode."""
    from scarwarden.asking import record_human_answer

    if human_answer == "-":
        human_answer = sys.stdin.read()
    if human_answer is not None and not human_answer.strip():
        raise UsageError("--answer is empty: nothing to record",
                         hint="give the human's answer as text, or leave --answer out to "
                              "be prompted on a terminal")
    if human_answer is None and prompt:
        if not sys.stdin.isatty():
            raise ScarwardenError(
                "memory has nothing for this task and there is no terminal to ask a human",
                hint=f'give the answer with --answer: scarwarden answer "{task}" --answer "..."',
                exit_code=ExitCode.CHECK_FAILED)
        human_answer = click.prompt("Your answer (it becomes a new episode)", err=True)
    if human_answer is None or not human_answer.strip():
        return None
    return record_human_answer(repo, task, human_answer)


@click.command()
@click.argument("task")
@click.option("--no-memory", is_flag=True,
              help="The amnesia toggle: same task, same model, no rules.")
@click.option("--compare", is_flag=True, help="Answer with and without memory, side by side.")
@click.option("--qc", is_flag=True, help="Let a reviewer check the answer against the rules; "
              "regenerate on a violation (up to answer.qc_max_retakes times).")
@click.option("--max-retakes", type=click.IntRange(min=0), help="Override answer.qc_max_retakes.")
@click.option("--strict", is_flag=True, help="Exit 1 when any citation is invented.")
@click.option("--record", is_flag=True, help="Save this run as an episode (lineage).")
@click.option("--agent", help="With --record: which agent acted.")
@click.option("--answer", "human_answer", metavar="TEXT",
              help="On ASK_HUMAN: the human's answer (recorded as an episode) instead of a "
                   "prompt; '-' reads it from stdin.")
@click.option("--limit", type=click.IntRange(min=1), help="Recall at most this many rules.")
@click.option("--json", "as_json", is_flag=True,
              help="Print {task, verdict, answer, rules, verification, model, usage, qc, ...}.")
@click.pass_context
def answer(ctx: click.Context, task: str, no_memory: bool, compare: bool, qc: bool,
           max_retakes: int | None, strict: bool, record: bool, agent: str | None,
           human_answer: str | None, limit: int | None, as_json: bool) -> None:
    """Answer TASK following the recalled rules, citing each one inline.

    Recall routes the task. On ACT / ACT_AND_FLAG the answer model gets the recalled
    rules and must cite every rule it applies as [PB-01, learnt in ep-..., ep-...];
    code then verifies every citation (a cited rule must have been recalled, each
    cited episode must be one of that rule's own). On ASK_HUMAN no model guesses:
    you are asked, and your answer becomes a new episode. With no model configured
    the rule-grounded brief is printed instead and the exit code is 4.

    \b
    Exit codes: 0 ok; 1 invented citation with --strict, reviewer still objecting
    after the last retake, or ASK_HUMAN with no terminal and no --answer; 2 bad
    usage; 3 model unreachable; 4 no model configured (the brief was printed);
    5 model error or invalid reviewer JSON.

    \b
    Examples:
      scarwarden answer "Draft a LinkedIn post announcing our beta"
      scarwarden answer "Post our discount code on Twitter" --strict --json
      scarwarden answer "Draft a LinkedIn post announcing our beta" --compare
      scarwarden answer "Write the release notes" --qc --record
      scarwarden answer "Plan the office party" --answer "Ask Sam first; budget 300 EUR"
    """
    from scarwarden.answer import ASK_HUMAN, answer_task, ask_question, record_answer

    if no_memory and compare:
        raise UsageError("--no-memory and --compare exclude each other",
                         hint="--compare already includes the answer without memory")
    if no_memory and qc:
        raise UsageError("--qc needs memory: without rules there is nothing to review against")
    repo = get_repo(ctx)
    result = answer_task(repo, task, memory=not no_memory, compare=compare, qc=qc,
                         client=_client(repo), max_retakes=max_retakes, limit=limit)
    if result.verdict == ASK_HUMAN and result.mode == "memory":
        _ask_flow(repo, result, human_answer, as_json)
        return
    if human_answer is not None and result.verdict != ASK_HUMAN:
        click.echo("note: --answer is only used when memory has nothing (ASK_HUMAN)", err=True)
    asked = None
    if result.verdict == ASK_HUMAN and human_answer:
        # --compare on ASK_HUMAN never prompts, but an answer given up front is recorded.
        asked = _ask_human(repo, task, human_answer, prompt=False)
    recorded = None
    if record:
        primary = result.primary
        if primary is not None and primary.answer:
            recorded = record_answer(repo, result, agent=agent)
        else:
            click.echo("note: --record: there is no model answer to record", err=True)
    if as_json:
        data = result.to_json()
        data["question"] = ask_question(task) if result.verdict == ASK_HUMAN else None
        data["human_answer"] = human_answer.strip() if asked is not None and human_answer \
            else None
        data["recorded_episode"] = recorded.id if recorded is not None else (
            asked.id if asked is not None else None)
        echo_json(data)
    else:
        _print_answer(result, asked, recorded)
    _finish(repo, result, strict=strict)


def _ask_flow(repo: MemoryRepo, result: Any, human_answer: str | None, as_json: bool) -> None:
    """ASK_HUMAN: show why memory cannot help, take the human's answer, record it."""
    from scarwarden.answer import ask_question, brief

    text = brief(result.recall)
    if not as_json:
        click.echo(text)
        click.echo("")
    elif human_answer is None:
        click.echo(text, err=True)  # the person at the prompt must see the question
    episode = _ask_human(repo, result.task, human_answer, prompt=True)
    if episode is None:
        raise ScarwardenError("no answer given; nothing was recorded",
                              hint="answer the question, or pass --answer TEXT")
    if as_json:
        data = result.to_json()
        data["question"] = ask_question(result.task)
        data["human_answer"] = episode.get("correction")
        data["recorded_episode"] = episode.id
        data["brief"] = text
        echo_json(data)
        return
    click.echo(f"Recorded the human's answer as episode {episode.id}; recall will find it "
               "once it is distilled into a rule (scarwarden distill).")


def _print_answer(result: Any, asked: Any, recorded: Any) -> None:
    click.echo(click.style(_header(result), dim=True))
    click.echo("")
    if result.mode == "compare":
        click.echo(render_compare(result))
    elif result.mode == "no-memory":
        side = result.no_memory
        click.echo(side.answer.strip() if side and side.answer else (result.brief or ""))
    else:
        click.echo(memory_side_text(result))
    if asked is not None:
        click.echo(f"\nRecorded the human's answer as episode {asked.id}")
    if recorded is not None:
        click.echo(f"\nRecorded as episode {recorded.id}")
        click.echo(f"  what happened next: scarwarden feedback {recorded.id} "
                   '--outcome "..." --correction "..."', err=True)


def _finish(repo: MemoryRepo, result: Any, *, strict: bool) -> None:
    """Exit codes after the output is printed (the boundary prints the message)."""
    if not result.model_configured:
        raise no_model_error(repo, memory=result.mode != "no-memory")
    side = result.memory
    if side is None:
        return
    if strict and side.verification is not None and not side.verification.ok:
        raise ScarwardenError(f"invented citations (--strict): {side.verification.summary}",
                              hint="the answer cites rules or episodes its memory does not hold; "
                                   "do not use it as is")
    if side.qc is not None and not side.qc.passed:
        raise ScarwardenError(side.qc.summary,
                              hint="raise --max-retakes, fix the task, or edit the answer by hand")


# -- review-draft -------------------------------------------------------------------

@click.command("review-draft")
@click.option("--task", required=True, help="The task the draft answers (recall runs on it).")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--rewrite", is_flag=True,
              help="On a violation, regenerate the answer with the feedback (the QC loop).")
@click.option("--max-retakes", type=click.IntRange(min=0), help="Override answer.qc_max_retakes.")
@click.option("--strict", is_flag=True, help="Also exit 1 when any citation is invented.")
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON.")
@click.pass_context
def review_draft(ctx: click.Context, task: str, file: Any, rewrite: bool,
                 max_retakes: int | None, strict: bool, as_json: bool) -> None:
    """Check a draft written elsewhere (FILE, or '-' for stdin) against the recalled rules.

    A reviewer model judges the draft and answers strict JSON: pass, or retake with
    the violated rule IDs and reasons (only recalled rules are trusted). The draft's
    inline citations are verified by code too, even with no model configured.
    Exit 1 when the reviewer sends it back; 4 with no model configured.

    \b
    Examples:
      scarwarden review-draft --task "Post our discount code on Twitter" draft.txt
      my-agent | scarwarden review-draft --task "Draft the beta post" - --rewrite --json
    """
    from scarwarden.qc import review_task_draft

    repo = get_repo(ctx)
    result = review_task_draft(repo, task, file.read(), client=_client(repo), rewrite=rewrite,
                               max_retakes=max_retakes)
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(click.style(f"Task: {task}\nVerdict: {result.recall.verdict}  (recalled: "
                               f"{', '.join(r.id for r in result.recall.rules) or 'none'})",
                               dim=True))
        click.echo("")
        if result.qc is not None:
            click.echo(qc_text(result.qc))
            if rewrite and result.qc.retakes:
                click.echo("\nFinal text:\n" + result.final_text.strip())
        elif result.brief is None:
            click.echo("No rule was recalled for this task: nothing to review against.")
        click.echo("")
        click.echo(verification_text(result.verification))
    if result.brief is not None:
        if not as_json:
            click.echo("\n" + result.brief)
        raise no_model_error(repo)
    if result.qc is not None and not result.qc.passed:
        raise ScarwardenError(result.qc.summary, hint="fix the draft, or run with --rewrite")
    if strict and not result.verification.ok:
        raise ScarwardenError(f"invented citations (--strict): {result.verification.summary}")


# -- feedback -----------------------------------------------------------------------

@click.command()
@click.argument("episode_id")
@click.option("--outcome", help="What happened after the agent acted.")
@click.option("--correction", help="What a human corrected: the lesson.")
@click.option("--corrected-by", help="Who corrected it.")
@click.option("--json", "as_json", is_flag=True, help="Print the new episode as JSON.")
@click.pass_context
def feedback(ctx: click.Context, episode_id: str, outcome: str | None, correction: str | None,
             corrected_by: str | None, as_json: bool) -> None:
    """Record what happened after a recorded answer, as a new episode that refs it.

    The first episode is never edited (the ledger is append-only); the new one keeps
    its task, tags and rules_applied, so distillation learns from the outcome.

    \b
    Examples:
      scarwarden feedback ep-7k2m9q4x1z --outcome "Engagement doubled"
      scarwarden feedback ep-7k2m9q4x1z --correction "Shorter hook" --corrected-by editor
    """
    from scarwarden.answer import record_feedback

    repo = get_repo(ctx)
    ep = record_feedback(repo, episode_id, outcome=outcome, correction=correction,
                         corrected_by=corrected_by)
    if as_json:
        echo_json(ep.to_json())
        return
    click.echo(ep.id)
    click.echo(f"Committed {ep.id} (refs {episode_id})", err=True)


# -- demo ---------------------------------------------------------------------------

def demo_section(repo: MemoryRepo, echo: Callable[[str], None]) -> None:
    """Answers with and without memory for the two demo tasks; offline unless a key is set."""
    from scarwarden.answer import answer_task

    client = _client(repo)
    width = min(shutil.get_terminal_size((80, 24)).columns, 140)
    leads = ("The same task and the same model, with memory and without. With memory, the "
             "model is told what the team learnt and must cite it:",
             "Asked for something a rule forbids, the memory side refuses and cites the rule "
             "(and so the experiences) that taught it to refuse:")
    for n, task in enumerate(DEMO_TASKS):
        try:
            result = answer_task(repo, task, compare=True, client=client)
        except ScarwardenError as exc:  # a configured but failing model: go on offline
            echo(f"(the model failed: {exc.message}; showing the offline brief instead)")
            client = None
            result = answer_task(repo, task, compare=True, client=None)
        echo("")
        for line in textwrap.wrap(leads[n], width):
            echo(line)
        echo("")
        echo(click.style(_header(result), bold=True))
        echo("")
        echo(render_compare(result, width))
    echo("")
    closing = ("Every citation in a model's answer is checked by code: a rule that was not "
               "recalled, or an episode that did not teach that rule, is flagged, and "
               "--strict fails on it. ")
    if client is None:
        closing += ("No model is configured, so the memory side shows the rule-grounded "
                    "brief an agent acts on. Set SCARWARDEN_API_KEY (or DASHSCOPE_API_KEY) "
                    f'and run: scarwarden answer "{DEMO_TASKS[1]}" --compare')
    for line in textwrap.wrap(closing, width):
        echo(line)
