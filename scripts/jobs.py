"""Independent simulations side by side (--jobs of the benchmark scripts).

Every simulation is its own process, so a small pool of threads that each start one and wait on it
keeps that many cores busy; results come back in the order of the tasks, whatever order the runs
finish in, so the captures and tables do not depend on --jobs. The standard library's
concurrent.futures does the pooling.
"""

import argparse
import os
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait


def default_jobs():
    """One simulation per core of this machine."""
    return os.cpu_count() or 1


def add_jobs_argument(parser):
    """The --jobs option, validated (a positive count)."""

    def count(text):
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{text!r}: a positive number of simulations")
        return value

    parser.add_argument(
        "--jobs",
        "-j",
        type=count,
        default=default_jobs(),
        help="simulations run at once (default: the number of cores, %(default)s)",
    )


def run_all(tasks, jobs):
    """Call every task (a function of no arguments), at most ``jobs`` at a time; return their
    results in task order. The first exception (or SystemExit) cancels what has not started and
    is raised once the running tasks end."""
    if jobs <= 1:
        return [task() for task in tasks]
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(task) for task in tasks]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f in done and f.exception() is not None]
        if failed:
            raise failed[0].exception()
        return [f.result() for f in futures]
    finally:
        # On an exception (a task's, or SIGTERM's SystemExit in this thread) nothing that has not
        # started starts; the running tasks are waited for.
        pool.shutdown(wait=True, cancel_futures=True)
