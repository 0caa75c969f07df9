"""scarwarden/logs.py: the deferred set-ups (the CLI's stderr handler) and threads."""

from __future__ import annotations

import threading

from scarwarden import logs


def test_a_second_thread_waits_for_the_set_up_in_progress() -> None:
    """A thread whose first message comes while another thread runs the set-up waits for
    it, so its message reaches the handler being installed."""
    started, release = threading.Event(), threading.Event()
    order: list[str] = []

    def setup(_logger: object) -> None:
        started.set()
        release.wait(10)
        order.append("set up")

    logs._pending.append(setup)
    first = threading.Thread(target=logs._logger)
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: (logs._logger(), order.append("second")))
    second.start()
    second.join(0.3)
    assert order == []  # still waiting for the set-up
    release.set()
    first.join(10)
    second.join(10)
    assert order == ["set up", "second"]
    assert logs._pending == []


def test_a_failing_set_up_runs_once() -> None:
    calls: list[int] = []

    def setup(_logger: object) -> None:
        calls.append(1)
        raise RuntimeError("handler could not be installed")

    logs._pending.append(setup)
    try:
        logs._logger()
    except RuntimeError:
        pass
    logs._logger()
    assert calls == [1]
    assert logs._pending == []
