"""The replay benchmark's method, as docs/replay.md states it, built from the code's own tables.

The derivation and the judge are described here next to the constants they use
(CLAUSES, KEY_ARGS, the tags, the word forms), so the page cannot drift from the code.
"""

from __future__ import annotations

from typing import Any

from replay_correction import CLAUSES, KEY_ARGS
from replay_data import ACTION_TAGS, KEY_TAGS
from replay_judge import ACTION_FORMS, KEY_FORMS, OUTPUT_FORMS, REFUSAL_REACH, REFUSAL_STEMS, REFUSAL_WORDS


def forms_md(forms: tuple[tuple[str, ...], ...]) -> str:
    return " or ".join("+".join(f"`{s}`" for s in alt) for alt in forms)


def word_forms_table() -> str:
    """The judge's word forms, from the code's own tables (so the page cannot drift)."""
    lines = [
        "| write | names it (one sentence holds all stems of one form) | arguments quoted | tags |",
        "|---|---|---|---|",
    ]
    for action, forms in ACTION_FORMS.items():
        lines.append(
            f"| `{action}` | {forms_md(forms)} | {', '.join(KEY_ARGS.get(action, ())) or '-'} |"
            f" {', '.join(ACTION_TAGS[action])} |"
        )
    lines += ["", "| argument | named by (anywhere in the text) | tag when it was wrong |", "|---|---|---|"]
    lines += [f"| `{k}` | {forms_md(f)} | {KEY_TAGS.get(k, '-')} |" for k, f in KEY_FORMS.items()]
    return "\n".join(lines)


def clauses_md() -> str:
    """The policy clauses (CLAUSES) as a table."""
    lines = ["| write, or write:argument that differed | policy clause named |", "|---|---|"]
    return "\n".join(lines + [f"| `{k}` | {v} |" for k, v in CLAUSES.items()])


METHOD = """\
## Method

### The stream

`gpt-4o-airline.json` holds 200 recorded runs of a GPT-4o customer-service agent on 50
airline tasks, 4 trials each (116 failures). They are replayed as a stream: trial 0 of
every task in task order, then trial 1, and so on ({order}). Each run becomes one
episode, recorded with `scarwarden episode add --file -` (one commit each, through the
provenance gate installed by `scarwarden init --hooks` in a fresh `git init` repository):

- `task`: the user's instruction, verbatim;
- `action`: the agent's successful write calls (the tools that change the database:
  `book_reservation`, `cancel_reservation`, `update_reservation_flights`,
  `update_reservation_baggages`, `update_reservation_passengers`, `send_certificate`)
  with their policy-relevant arguments, the number of write attempts answered with an
  error, and whether it transferred the user to a human;
- `outcome`: the reward, and for a failure a count of what went wrong by kind;
- `correction` (failures only): derived from the ground truth, below;
- `tags`: the writes the run is about (ground truth and agent), the arguments it got
  wrong, `refuse` for a request that had to be refused and `figures` for a figure left
  unsaid (table below);
- `source` `correction` or `outcome`, `agent`, `corrected_by`, and `x-task-id`,
  `x-trial`, `x-reward`.

Every {distill_every} runs, `scarwarden distill {distill_flag} --json` distils the new
episodes ({distiller} distiller). Nothing is written to the memory by hand.

### How a correction is derived

The ground truth is the task's list of tool calls (`info.task.actions`); only its write
calls count. The agent's write calls are read from the trajectory: a call counts when
the tool's reply does not start with `Error` (a refused call changed nothing). Numbers
are compared as numbers (`250.0` = `250`).

1. Walk the ground-truth writes in order. Each one is paired with the agent's unused
   write of the same tool, and for a write on a reservation, of the same
   `reservation_id` (cancelling the wrong reservation is a missing cancellation plus an
   extra one, not a wrong argument), choosing the call with the fewest differing
   arguments (the first on a tie).
   - paired, arguments equal: nothing to correct;
   - paired, arguments differ: **wrong** - "Fix `<tool>` on reservation R (policy,
     `<clause>`): set `<arg>` to `<right value>` instead of `<agent's value>`; ..." for
     every differing argument;
   - no pair left: **missing** - "Call `<tool>` on reservation R (`<key arguments>`)
     (policy, `<clause>`): the run left this write out."
2. Agent writes left unpaired are **extra** - "Do not call `<tool>` on reservation R
   (...) (policy, `<clause>`): the ground truth makes no such write." - or, when the
   ground truth makes no write at all, **refuse** - "Do not call `<tool>` on reservation
   R (...) (policy, `<clause>` / deny requests against the policy): refuse the request;
   this task ends with no write."
3. When the task expects figures in the answer (`outputs`) and the agent's messages
   never state one of them (commas ignored, as tau-bench checks), **output** - "Tell
   the user `<figures>`: the figure they asked for was missing from the answer."
4. Then the run's own facts, when its read calls showed them: the user's membership
   (`get_user_details`) and, for each reservation an item is about, its cabin,
   insurance and booking time (`get_reservation_details`): "Context: gold member;
   reservation R economy cabin, without travel insurance, booked 2024-05-02T06:02."

A write with no reservation (a booking, a certificate) says "for user U" instead of "on
reservation R". Key arguments are quoted with flights by number only. The policy clause
is the one for the argument that differed, else the one for the write (table); it sits
inside the sentence that names the write, so the sentence keeps the item's direction
(do it, or do not) for the judge. The correction is the items' sentences in
order, then the facts. For example (task {example_task}, trial {example_trial}):

> {example}

The first item is the failure's **lesson** (the first thing that went wrong, in
ground-truth order); the measures judge it, and "every lesson" judges all items. Failed
runs with no difference in writes or outputs (the failure lies elsewhere, e.g. a
conversation cut short; {unexplained} in this stream) are recorded with no correction
and are not judged. Key arguments and tags are in the table under "How a lesson is
judged"; `tests/test_replay_bench.py` checks the derivation on recorded runs.

{clauses}

### How a lesson is judged

Code, deterministic, no model. A recalled text is split into sentences (a full stop, `!`
or `?` followed by a space or the end, and newlines; `:` and `;` join clauses of one
sentence) and words (Scarwarden's token pattern, lower case, stopwords kept, Snowball
English stems).

- A sentence **names a write** when it holds every stem of one of the write's forms
  (table). It **refuses** the write when one of {refusal_words}, or a word whose stem
  is one of {refusal_stems}, stands at most {reach} words before a word of that form:
  the negation must govern the action ("Do not call `cancel_reservation`"), a "not"
  elsewhere in the sentence does not make it a refusal.
- A sentence **names an argument** when it holds every stem of one of the argument's forms.
- A sentence **holds a value** when the value's words appear in it in order
  (`certificate_7504069` matches "certificate_7504069" and "certificate 7504069").
  Values and arguments are looked for in the sentence that names the write, not
  anywhere in the text.

Two judges:

- **specific** (the lesson that would have fixed *that* failure): a sentence names the
  write in the lesson's direction (refused for an extra or refuse item, not refused
  otherwise) and, in that same sentence,
  - wrong: names an argument that differed *and* holds its right value (the
    ground truth's values missing from the agent's; if none, the agent's wrong extra
    values);
  - missing, extra, refuse: holds what the write is about (its reservation,
    else its flight numbers for a booking, else its amount for a certificate);
  - output: the text holds one of the figures.
- **general** (a lesson of the same kind, for tasks never seen): a sentence names the
  write in the lesson's direction and, in that same sentence,
  - wrong: names an argument that differed;
  - missing: names one of the write's key arguments (or `reservation_id`);
  - extra, refuse: nothing more (the refusal is the lesson);
  - output: the text holds one of {output_forms}.

{word_forms}

The word forms come from the tool and argument names and the policy's own wording. The
judge's rules were fixed before the first full replay was measured. After it, the input
given to Scarwarden changed (one tag per write instead of two, a tag for output items,
"for user U" on writes without a reservation), and two measure definitions were
corrected for every system alike: transfer had also counted tasks already seen but not
yet failed, and its pooled figure had included the sweep at 0 runs, where only the policy
can hold anything. The judge itself did not change. The correction
and the judge were designed by reading recorded failures, with the unit tests on runs of
both halves, so the figures are also given for tasks 0-24 and 25-49 separately: a judge
fitted to some tasks would show as a gap between the halves for every system alike.

**What was fitted on what** (issue 26, recall version 5). Two constants were fitted,
each on one half only, then frozen before the full runs: `RETURN_SHARE` (0.5: a rule
scoring under half the best-ranked rule's is not returned) on this replay's first 25
tasks (`python bench/replay.py --tasks 25`, default order, final sweep: no lesson lost
from 0.3 to 0.8; 0.5 the middle of that plateau), and `LONG_RULE` (2.75) on the first 25
of tau-airline's 50 airline instructions against the banking rules (the off-domain
guard of `bench/recall_quality.py`). Tasks 25-49, and the whole of the `--seed 1` order
as an order, were not looked at when fitting: the by-half tables below show tasks 0-24
(fitted on) and 25-49 (not) apart. The evidence rule (leave out sentences the rule
already says) and judging candidates on `ASK_HUMAN` are design decisions, not fitted.
So is the distiller's object rule (issue 26): the same lesson about another object
(another reservation, another user) is a rule of its own, not a sentence appended to a
rule about someone else (docs/distill.md); nothing in it is a threshold.

Recall version 6 (issue 26) adds the same-case term (`CASE_WEIGHT` 0.5 x share squared
x the task's mass, docs/recall.md) and scores every first-pass candidate exactly. Both
come from a bench-only prototype that was designed looking at tasks 25-49. The weight
was then fitted on tasks 0-24 alone, by a rule written down before any run
(`python bench/replay.py --tasks 25 --case-weight W` for W = 0, 0.25, 0.5, 1, 2; the
objective: the Scarwarden arm's hits at the repeat, for every lesson of the last
failure, for the own fix at the repeat failures and in transfer; a tie goes to the
smaller weight). That half is flat: 91 hits at every weight from 0 to 1, 90 at 2, so
the rule chose 0, no term. The product keeps 0.5, which is on that plateau, for a reason
from outside this replay: on the learning loop's reworded tasks (`bench/recall_learning.py`,
not looked at when the term was designed) 0.5 knows 28 of 30 and 0 knows 26. At the
fitted weight 0 (`--case-weight 0`, both orders, docs/recall.md) the repeat is 38 of 40 in
both orders, one under the failures-only baseline, and transfer equals raw episodes' in
both. So, on this replay, the term buys the two repeat lessons of tasks 25-49 (looked at,
not held out, for it) and costs two transfer rows in the `--seed 1` order.

Issue 26 made the judge stricter for every system alike, before any recall change was
measured with it: a refusal needs its negation to govern the action (before, a "not"
anywhere in the sentence made one), values and arguments count only in the sentence
naming the action (before, anywhere in the text), and sentences no longer end at `:`
or `;` (a correction's "Fix `<tool>` ...: set `<argument>` to V" is one sentence).

### The measures

Two kinds of measurement, both taken before the next run is ingested, with recall as an
agent calls it (`scarwarden recall --json --limit {top} --no-log -`, the task on stdin;
the baselines rank the same task text):

- a **sweep** every {checkpoint_every} runs (and before the first): every task of the
  stream is recalled and judged. The curves are made of sweeps.
- an **event** before every run: the task about to be run is recalled and judged; when
  that run is a failure of a task that failed before, its own lesson (the fix it needed)
  is judged too.

**What is judged of Scarwarden** (issue 26): what recall gives the agent. On `ACT` and
`ACT_AND_FLAG` that is `rules`, each with its evidence; on `ASK_HUMAN` it is the
`candidates` the agent must show the human when it asks ("nearest, unconfirmed: ask
before using": the nearest rules with their evidence, or, when no rule is near, the
nearest failed episodes' task and quoted correction), top {top} in all. The column
"Scarwarden" judges that, and its tokens count everything returned (rules, evidence,
candidates). Before issue 26's candidates, an `ASK_HUMAN` answer returned nothing: the
issue found most misses were such empty answers, and candidates are the designed fix, so
they are judged as what the agent shows. The column "Scarwarden, `rules` only" judges
`rules` alone: what an agent may act on **without asking**. ACT precision is judged on
`rules` only (an `ACT` answer has no candidates). The judge, the stripping of
instructions and action logs, and the baselines are the same for every column.

1. **Lesson at the repeat**: over the tasks with a failure already ingested, does the
   top {top} hold the lesson of the task's latest failure (specific; general as a second
   figure)? This is an **exact lookup**: the repeat's instruction is word for word the
   earlier run's, so any lexical memory that keeps the lesson finds it; transfer (2) is
   the harder measure. At the repeat failures themselves (the events), does it hold the fix of the
   failure about to happen?
2. **Transfer**: over the tasks not yet seen at all, does the top {top} hold a lesson of
   the same kind as the first lesson the task will teach (general judge), **in its
   lesson text**: every system's recalled texts are judged with the users' instructions
   and the agent's action logs stripped (a raw episode is judged on its outcome and
   correction; a rule on its title, text and evidence; a policy rule as it is). Before
   issue 26 raw episodes passed 39 of 73 transfer rows on the user's instruction alone
   (an instruction saying "if the agent says it cannot be cancelled" reads as a refusal). Only the first
   pass has unseen tasks, so transfer is pooled over the sweeps at {unseen_span}
   (the sweep at 0, before anything is ingested, is
   left out: there only the policy can hold anything). "Transfer at first sight" is the
   recall just before each task's first run. Tasks that never fail have no lesson and are
   not judged for transfer.
3. **Reading cost**: the tokens of what recall returns (rule title + text + the
   evidence recall gives with it; episode task, action, outcome, correction; a
   correction alone; policy rule), counted as characters / 4 rounded up for
   every system; per recall, and per lesson found (tokens read over the repeat tasks
   divided by lessons found). And the playbook's size against the ledger's.
4. **The router** (Scarwarden only): the share of each verdict; **ACT precision**, the
   share of `ACT` recalls whose top {top} holds the lesson (specific for a task that
   failed before, general for another; tasks that never fail are not judged); and the
   share of `ASK_HUMAN` on tasks whose kind (the set of ground-truth write tools, or
   `no-write`) has not failed yet.

### The baselines, in the same run, judged by the same code

- **no memory**: nothing recalled (the agent had the policy in its prompt and no
  experience); it is 0 on every lesson measure by construction.
- **raw episodes**: the very episodes given to Scarwarden, no playbook, ranked by BM25
  over Scarwarden's own tokens (a copy of its text pipeline: Unicode words, Snowball
  stopwords, Snowball stems; BM25 with Lucene's idf, K1 = 1.5, B = 0.75, the term part
  of Scarwarden's score), top {top}: memory without distillation.
- **failed episodes, corrections only**: the failed episodes alone, ranked by the same
  BM25 over their task, correction and tags, and read as their correction only, top
  {top}: the strongest simple baseline (the lesson and nothing else).
- **Tags go to every arm**: Scarwarden's episodes carry tags (below), so both episode
  baselines rank with them too (a tag's words are added to the document BM25 ranks,
  not to the text read). The policy has no episodes.
- **Deterministic IDs**: each run's episode ID is derived from the stream (its seed and
  position), so a run of the same stream is the same run (rule IDs follow their
  content), and ties rank alike.
- **policy rules**: `policy.md` split into {policy_rules} rules (each top-level bullet with
  its sub-bullets, or paragraph, prefixed with its section heading), same BM25, top
  {top}: memory without experience.
"""


LIMITS = """\
## What this shows, and what it does not

- It measures **memory, not the agent**. Nobody re-answers the tasks offline: a lesson
  in the top {top} is necessary for memory to help, not proof that the agent would have
  followed it. `--answer` (with a model) re-answers the repeat failures with memory on
  and off and has a model judge the answers; it needs a key, and its figures appear
  above only for a run made with it.
- The judge is **lexical**. It checks that the recalled text names the write, the
  argument and the value (or the refusal), not that it means it: a raw episode whose
  *instruction* says "if the agent says it cannot be cancelled" could read as a refusal
  to cancel, which is why transfer is judged on lesson text only, and a refusal needs
  its negation to govern the action. The policy still names every write and argument
  in general terms, which the general judge rewards.
- Corrections are derived from the ground truth by code, so they are exact and terse,
  unlike a human's; the specific judge asks for task values (flights, amounts,
  reservations), which a distiller that generalises (a model) may drop although its
  rule would still help. The general judge is the measure for that.
- The same instruction appears in all four trials of a task, so finding the earlier
  episode of the task is easy for any lexical retriever; the measures ask for the
  lesson inside what is found, in the top {top}, after distillation.
- One dataset, one agent, 50 tasks: differences of a few tasks are noise. The second
  task order (`--seed`) shows how much the order moves the figures.
"""


def method_sections(meta: dict[str, Any], last_unseen: int) -> list[str]:
    """The method, the limits and how to regenerate, filled in with this run's settings."""
    fmt = {
        "order": "`--seed N` shuffles the task order",
        "distill_every": meta["distill_every"],
        "distill_flag": "--offline" if meta["distiller"] == "offline" else "",
        "distiller": meta["distiller"],
        "clauses": clauses_md(),
        "top": meta["top"],
        "unexplained": meta.get("unexplained", "n/a"),
        "example": (meta.get("example") or {}).get("text", ""),
        "example_task": (meta.get("example") or {}).get("task"),
        "example_trial": (meta.get("example") or {}).get("trial"),
        "refusal_words": ", ".join(f"`{w}`" for w in sorted(REFUSAL_WORDS)),
        "refusal_stems": ", ".join(f"`{w}`" for w in sorted(REFUSAL_STEMS)),
        "reach": REFUSAL_REACH,
        "output_forms": forms_md(OUTPUT_FORMS),
        "word_forms": word_forms_table(),
        "checkpoint_every": meta["checkpoint_every"],
        "unseen_span": (
            f"{meta['checkpoint_every']}-{last_unseen} runs"
            if last_unseen >= meta["checkpoint_every"]
            else "no point of this run"
        ),
        "last_unseen": last_unseen,
        "policy_rules": meta.get("policy_rules", "n/a"),
    }
    return [METHOD.format(**fmt), LIMITS.format(**fmt), regenerate()]


def regenerate() -> str:
    return """## Regenerate

```bash
pip install -e '.[bench]'               # matplotlib, for the chart
python bench/replay.py                  # offline; rewrites this page (see the wall time below)
python bench/replay.py --seed 1         # the second task order (its own chart and section)
python bench/replay.py --tasks 6 --trials 2 --no-chart --json   # a quick slice, no docs written
python bench/replay.py --render         # re-render this page from docs/replay/*.json
SCARWARDEN_API_KEY=... python bench/replay.py --model --answer  # model distiller, re-answers
```

The dataset is read from `../shared/datasets/tau-airline` beside the checkout (`--data`
to point elsewhere). Progress goes to stderr, one line per checkpoint; `--json` prints
every figure on stdout. Each run writes `docs/replay/<name>.json` (`replay` or
`replay-seed<N>`) and its chart, then renders this page from every stored JSON.

Wall time: about 3 minutes (177-188 s, 1,491 Scarwarden CLI calls, most of them the
1,050 recalls of the sweeps) when the two cores are free (load average ~3); the runs
above were made while the cores were shared with other test suites (load averages
10-18), which stretched them to 9-13 minutes. `--checkpoint-every 20` halves the sweeps.
"""
