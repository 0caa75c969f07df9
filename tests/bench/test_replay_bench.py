"""The replay benchmark (bench/replay.py): the correction derivation, the judge, a real slice.

The derivation and the judge are checked on recorded runs of tau-airline; the slice runs
the real script (6 tasks x 2 trials) against a real memory repository through the CLI.
The dataset lives beside the checkout (../shared/datasets/tau-airline), as in CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
#: Beside the checkout, as in CI; REPLAY_DATA points elsewhere (a worktree).
DATA = Path(os.environ.get("REPLAY_DATA") or ROOT.parent / "shared" / "datasets" / "tau-airline")
sys.path.insert(0, str(BENCH))

import replay_data as rd  # noqa: E402
import replay_judge as rj  # noqa: E402
from replay_memory import policy_rules  # noqa: E402

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"dataset not found at {DATA}")
SYSTEMS = ("scarwarden", "scarwarden_rules", "raw", "failures", "policy", "none")


@pytest.fixture(scope="module")
def runs() -> dict[tuple[int, int], rd.Run]:
    return {(r.task_id, r.trial): r for r in rd.load_runs(DATA)}


@pytest.fixture(scope="module")
def policy() -> list[str]:
    return policy_rules((DATA / "policy.md").read_text("utf-8"))


def test_the_dataset_is_the_one_the_issue_describes(runs: dict[tuple[int, int], rd.Run]) -> None:
    failures = [r for r in runs.values() if r.failed]
    assert len(runs) == 200 and len(failures) == 116
    repeats = [r for r in failures if any(runs[(r.task_id, t)].failed for t in range(r.trial))]
    assert len(repeats) == 76


def test_wrong_argument_names_the_tool_the_argument_and_both_values(
    runs: dict[tuple[int, int], rd.Run],
) -> None:
    # Task 0, trial 0: a gold member's economy booking charged one bag it should not have.
    run = runs[(0, 0)]
    (item,) = run.items
    assert item.key == ("wrong", "book_reservation", ("nonfree_baggages", "payment_methods"))
    assert item.values["nonfree_baggages"] == ("0",)
    assert item.text.startswith(
        "Fix book_reservation for user mia_li_3668 (policy, Book flight, checked bag allowance"
        " / Book flight, payment): set nonfree_baggages to 0 instead of 1;"
    )
    assert rd.correction_text(run).endswith("Context: gold member.")


def test_a_forbidden_cancellation_is_a_refusal(runs: dict[tuple[int, int], rd.Run]) -> None:
    # Task 41, trial 0: a basic economy booking without insurance, cancelled anyway.
    run = runs[(41, 0)]
    assert run.gt_writes == []
    (item,) = run.items
    assert item.key == ("refuse", "cancel_reservation", ())
    assert item.values["id"] == ("3rk2t9",)
    assert "Do not call cancel_reservation on reservation 3RK2T9" in item.text
    assert "basic_economy cabin, without travel insurance" in run.facts
    assert "refuse" in rd.tags_of(run) and "cancel" in rd.tags_of(run)


def test_the_wrong_reservation_is_a_missing_and_an_extra_write(runs: dict[tuple[int, int], rd.Run]) -> None:
    # Task 31, trial 1: cancelled the other May 17 flight instead of the one asked for.
    kinds = [(i.kind, i.action) for i in runs[(31, 1)].items]
    assert kinds == [("missing", "cancel_reservation"), ("extra", "cancel_reservation")]


def test_failed_calls_do_not_count_and_successes_have_no_correction(
    runs: dict[tuple[int, int], rd.Run],
) -> None:
    run = runs[(11, 0)]  # one booking answered with an error, then one that succeeded
    assert not run.failed and run.items == [] and run.failed_attempts == 1
    assert [c.name for c in run.agent_writes] == ["book_reservation"]
    episode = rd.episode_of(run, "2024-05-15T20:00:00Z")
    assert "correction" not in episode and episode["source"] == "outcome"


def test_the_judge_reads_direction_values_and_arguments(
    runs: dict[tuple[int, int], rd.Run], policy: list[str]
) -> None:
    wrong = runs[(0, 0)].items[0]
    refuse = runs[(41, 0)].items[0]
    own = rj.analyse(rd.correction_text(runs[(0, 0)]))
    assert rj.specific(wrong, own) and rj.general(wrong, own)
    payment = runs[(32, 0)].items[0]  # paid by gift card and card where one certificate was right
    assert payment.key == ("wrong", "book_reservation", ("payment_methods",))
    clause = rj.analyse(next(p for p in policy if p.startswith("Book flight: Payment")))
    assert rj.general(payment, clause) and not rj.specific(payment, clause)  # the clause, not the value
    assert rj.specific(payment, rj.analyse(rd.correction_text(runs[(32, 1)])))  # the same lesson again
    refusal = rj.analyse(rd.correction_text(runs[(41, 0)]))
    assert rj.specific(refuse, refusal)
    missing_cancel = runs[(1, 0)].items[0]
    assert missing_cancel.key == ("missing", "cancel_reservation", ())
    assert not rj.general(missing_cancel, refusal)  # "do not cancel" is not "cancel"
    assert not rj.general(refuse, own) and not rj.specific(refuse, rj.analyse(""))


def test_a_refusal_needs_its_negation_to_govern_the_action(runs: dict[tuple[int, int], rd.Run]) -> None:
    refuse = runs[(41, 0)].items[0]  # do not call cancel_reservation on 3RK2T9
    assert rj.specific(refuse, rj.analyse("Do not call cancel_reservation on reservation 3RK2T9."))
    assert rj.specific(refuse, rj.analyse("Reservation 3RK2T9 should not have been cancelled."))
    # a "not" elsewhere in the sentence is not a refusal of the action
    loose = "Cancel reservation 3RK2T9 right away, the user does not want to wait."
    assert not rj.general(refuse, rj.analyse(loose))
    missing = runs[(1, 0)].items[0]  # cancel_reservation left out
    assert rj.general(missing, rj.analyse("Cancel reservation Z7GOZK; the user does not want it."))
    assert not rj.general(missing, rj.analyse("Never cancel reservation Z7GOZK."))


def test_values_count_only_in_the_sentence_naming_the_action(runs: dict[tuple[int, int], rd.Run]) -> None:
    missing = runs[(1, 0)].items[0]  # cancel_reservation on Z7GOZK
    assert rj.specific(missing, rj.analyse("Call cancel_reservation on reservation Z7GOZK: left out."))
    split = "Call cancel_reservation on the reservation. The user mentioned Z7GOZK."
    assert not rj.specific(missing, rj.analyse(split)) and rj.general(missing, rj.analyse(split))


def test_baselines_rank_with_tags_and_transfer_reads_lesson_text_only() -> None:
    import replay_memory as rm

    raw, failures = rm.RawEpisodes(), rm.FailuresOnly()
    ok = {"task": "book a trip", "action": "Write calls: none", "outcome": "Reward 1", "tags": ["book"]}
    bad = {
        "task": "cancel my reservation, or if the agent says it cannot be cancelled, book",
        "action": "Write calls: cancel_reservation on ABC123",
        "outcome": "Reward 0",
        "correction": "Call send_certificate for user u1.",
        "tags": ["certificate"],
    }
    for ep in (ok, bad):
        raw.add(ep)
        failures.add(ep)
    assert failures.texts == ["Call send_certificate for user u1."]
    got = raw.top("certificate", 3)  # found through its tag alone
    assert (
        got.read
        and "Write calls" in got.read[0]
        and got.lessons == ["Reward 0\nCall send_certificate for user u1."]
    )
    assert failures.top("certificate", 3).read == ["Call send_certificate for user u1."]


def test_what_recall_gives_is_judged_rules_or_candidates_and_rules_only_apart() -> None:
    """Issue 26: on ASK_HUMAN the agent shows the candidates (judged in the Scarwarden
    column, tokens counted); the rules-only column judges ``rules`` alone."""
    import replay_memory as rm

    rule = {"id": "PB-01", "title": "Cancel", "text": "Refuse to cancel basic economy.", "evidence": []}
    episode = {
        "kind": "episode",
        "id": "ep-1",
        "task": "User Mia wants to cancel reservation ABC123",
        "evidence": [{"episode_id": "ep-1", "text": "Do not cancel: basic economy."}],
    }
    asked = {"verdict": "ASK_HUMAN", "rules": [], "candidates": [{**rule, "kind": "rule"}, episode]}
    given = rm.given_texts(asked, 3, candidates=True)
    assert given.read == [
        rm.rule_text(rule),
        "User Mia wants to cancel reservation ABC123\nDo not cancel: basic economy.",
    ]
    assert given.lessons[1] == "Do not cancel: basic economy."  # no user instruction judged for transfer
    assert rm.given_texts(asked, 3, candidates=False).read == []
    acted = {"verdict": "ACT", "rules": [rule] * 3, "candidates": [episode]}
    assert rm.given_texts(acted, 3, candidates=True).read == [rm.rule_text(rule)] * 3  # top 3 in all


def test_stream_ids_are_deterministic_per_stream() -> None:
    import replay_stream as rs

    assert rs.stream_id(None, 3) == rs.stream_id(None, 3) != rs.stream_id(1, 3)
    assert len({rs.stream_id(None, i) for i in range(200)}) == 200


def test_small_values_count_only_beside_their_argument() -> None:
    bags = rj.KEY_FORMS["nonfree_baggages"]
    assert rj.holds_value(("0",), rj.analyse("set nonfree_baggages to 0"), bags)
    assert not rj.holds_value(("0",), rj.analyse("0 passengers flew; then came a storm and more"), bags)
    assert rj.holds_value(("hat110",), rj.analyse("flights HAT110 2024-05-24"), ())


def test_stream_order_is_trial_by_trial_and_seed_shuffles_tasks(runs: dict[tuple[int, int], rd.Run]) -> None:
    stream = rd.stream_order(list(runs.values()))
    assert [(r.task_id, r.trial) for r in stream[:2]] == [(0, 0), (1, 0)]
    assert (stream[50].task_id, stream[50].trial) == (0, 1)
    shuffled = rd.stream_order(list(runs.values()), seed=1)
    assert [r.trial for r in shuffled[:50]] == [0] * 50
    assert [r.task_id for r in shuffled[:50]] != list(range(50))
    assert [r.task_id for r in shuffled[:50]] == [r.task_id for r in shuffled[50:100]]


@pytest.fixture(scope="module")
def slice_figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("replay")
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "replay.py"),
            "--tasks",
            "6",
            "--trials",
            "2",
            "--no-chart",
            "--json",
            "--quiet",
            "--data",
            str(DATA),
            "--distill-every",
            "4",
            "--checkpoint-every",
            "4",
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (workdir / "docs").exists()  # a slice writes no docs
    return dict(json.loads(proc.stdout))


@pytest.mark.slow  # its module fixture replays a slice: ~15 s
def test_a_slice_measures_every_system(slice_figures: dict[str, Any]) -> None:
    figs = slice_figures
    assert figs["meta"]["runs"] == 12 and figs["meta"]["tasks"] == 6
    assert [p["runs_seen"] for p in figs["curve"]] == [0, 4, 8, 12]
    final = figs["final"]
    for name in SYSTEMS:
        s = final["systems"][name]
        for key in ("repeat", "repeat_general", "repeat_all", "transfer_pooled"):
            assert s[key]["n"] > 0 and 0.0 <= s[key]["rate"] <= 1.0, (name, key)
        assert s["tokens_per_recall"] >= 0
    assert final["systems"]["none"]["repeat"]["rate"] == 0.0
    assert final["systems"]["none"]["transfer_pooled"]["rate"] == 0.0
    assert final["systems"]["none"]["tokens_per_recall"] == 0.0
    # the same instruction in every trial: raw episodes always find the task's own failure
    assert final["systems"]["raw"]["repeat"]["rate"] == 1.0
    assert final["rules"] >= 1 and 0 < final["playbook_tokens"] < final["ledger_tokens"]
    shares = final["router"]["shares"]
    assert abs(sum(shares.values()) - 1.0) < 1e-3


def test_a_slice_records_events_and_distills(slice_figures: dict[str, Any]) -> None:
    ev = slice_figures["events"]
    assert ev["runs"] == 12 and ev["failures"] == 10
    assert ev["repeat_failures"] == 3
    assert ev["fix_at_repeat"]["raw"]["rate"] == 1.0 and ev["fix_at_repeat"]["none"]["rate"] == 0.0
    # runs 1-4 come before the first distillation: an empty playbook can only ask
    assert ev["router_blocks"][0]["shares"]["ASK_HUMAN"] >= 4 / 6 - 1e-3
    assert [d["runs_seen"] for d in slice_figures["distills"]] == [4, 8, 12]


def test_the_chart_and_the_page_render(slice_figures: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import replay_report

    replay_report.write_docs(slice_figures, tmp_path, chart=True)
    page = (tmp_path / "replay.md").read_text("utf-8")
    assert "## Results" in page and "### How a correction is derived" in page
    assert (tmp_path / "replay" / "replay.png").stat().st_size > 10_000
    assert (tmp_path / "replay" / "replay.svg").read_text("utf-8").startswith("<?xml")


def test_the_case_weight_reaches_the_cli_processes_and_only_them(tmp_path: Path) -> None:
    """``--case-weight`` (the fit of version 6's weight on tasks 0-24) sets the constant in
    the processes started with the bench's environment; the product keeps its own, and
    the command line that regenerates the figures names the weight."""
    import replay

    from scarwarden.recall import formulas

    probe = [sys.executable, "-c", "from scarwarden.recall import formulas; print(formulas.CASE_WEIGHT)"]
    env = replay.with_case_weight(dict(os.environ), 2.0, tmp_path)
    assert subprocess.run(probe, env=env, capture_output=True, text=True, check=True).stdout.strip() == "2.0"
    plain = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
    assert plain == str(formulas.CASE_WEIGHT) == "0.5"
    args = replay.parse_args(["--tasks", "25", "--case-weight", "0"])
    assert replay.command_line(args) == "python bench/replay.py --tasks 25 --case-weight 0.0"
