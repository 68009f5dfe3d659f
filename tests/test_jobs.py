"""Simulations side by side (scripts/jobs.py, the --jobs of the benchmark scripts): results in
task order, and after a failure nothing more starts."""

import threading
import time

import pytest

from scripts.jobs import run_all


def _waiting_task(name, started, release):
    """A task that says it started, then runs until ``release`` (at most 5 s)."""

    def task():
        started.append(name)
        release.wait(5)
        return name

    return task


def test_results_come_in_task_order_whatever_order_tasks_end_in():
    def task(i):
        return lambda: (time.sleep(0.05 * (4 - i)), i)[1]

    assert run_all([task(i) for i in range(5)], jobs=3) == list(range(5))
    assert run_all([task(i) for i in range(5)], jobs=1) == list(range(5))


def test_after_a_failure_no_task_starts():
    started, release = [], threading.Event()

    def fails():
        started.append("fails")
        raise ValueError("run failed")

    def failing_then_release():
        try:
            fails()
        finally:
            # The running tasks end a while after the failure: by then the queue is cancelled.
            threading.Timer(0.5, release.set).start()

    # Two workers: "a" runs while the failure happens; the failing task's worker may take "b"
    # before the pool is cancelled, "c" to "e" must never start.
    tasks = [_waiting_task("a", started, release), failing_then_release] + [
        _waiting_task(n, started, release) for n in "bcde"
    ]
    with pytest.raises(ValueError, match="run failed"):
        run_all(tasks, jobs=2)
    assert "a" in started and "fails" in started
    assert not set("cde") & set(started), started


def test_interrupted_while_waiting_no_queued_task_starts():
    """SIGTERM (stop_runs_on_sigterm: SystemExit in the main thread, here from SIGALRM) while the
    main thread waits on the pool: the queued tasks are cancelled, not run one after the other
    before the script may exit."""
    import signal

    started, release = [], threading.Event()

    def interrupt(signum, frame):
        threading.Timer(0.3, release.set).start()
        raise SystemExit(128 + signal.SIGTERM)

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(SystemExit):
            run_all([_waiting_task(n, started, release) for n in "abcdef"], jobs=2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert sorted(started) == ["a", "b"], started
