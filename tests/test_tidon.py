"""Barrier waiting policies under Zephyr (Kconfig SUBUTAI_BARRIER_WAIT) and Tidon, the
time-donating barrier of seed 002 (zephyr-app/lib/pthread/sched_zephyr.c).

- A laggard preempted on its waiting sibling's core (tests/programs/tidon_laggard: a waiter, a
  laggard and a spinner of no barrier on one core) runs within one timeslot of the waiter's
  arrival under Tidon, with either backend.
- Under every policy and both backends, a barrier releases every waiter exactly once per round
  (tests/programs/barrier_rounds) while other applications share the cores, and every program's
  checksum equals the host build's.
- The report's metrics (weighted speed-up, unfairness) from a capture of known figures.

Builds need a Zephyr tree (ZEPHYR_BASE); without one those tests are skipped with the reason.
"""

import os
import re

import pytest

from gateware.build import ROOT
from scripts import host_programs
from scripts.experiments.framework import label_record
from scripts.experiments.multi import kernel_policy, set_runs
from scripts.experiments.tidon import CSV_FIELDS, barrier_and_schedule, goals, metrics

TEST_ARGS = "-i test -s 1"
TS_US = 100
LAGGARD = os.path.join(ROOT, "tests", "programs", "tidon_laggard")
ROUNDS = os.path.join(ROOT, "tests", "programs", "barrier_rounds")
POLICIES = ("spin", "block", "spin-then-block", "tidon")


@pytest.fixture(scope="module")
def reference():
    return host_programs.checksums(["streamcluster", "bodytrack", "ep"], TEST_ARGS)


def run_set(sim, programs, backend, barrier, max_cycles=80_000_000):
    from soc.zephyr import build_multi

    model = sim.model(2, 2)
    conf = ["CONFIG_SUBUTAI_MULTI_DEADLINE_MS=500"]
    image = build_multi(model, programs, backend, "rr", TS_US, TEST_ARGS, conf, barrier=barrier)
    result = model.run(image, max_cycles=max_cycles)
    lines = [
        label_record(
            "multi_label", kind="corun", set="test", ep_threads=0, tiles=4, backend=backend, policy=barrier
        )
    ] + result.output.splitlines()
    return result, set_runs(lines)[0]


def largest_wait_ns(result):
    m = re.search(r"tidon_laggard: \d+ rounds, largest wait (\d+) ns", result.output)
    assert m, result.output[-3000:]
    return int(m.group(1))


@pytest.mark.slow
@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", "swonly"])
def test_a_preempted_laggard_runs_within_one_slice_of_the_arrival(sim, backend):
    result, run = run_set(sim, [LAGGARD], backend, "tidon")
    assert result.exit_code == 0, result.output[-3000:]
    assert run["barrier"]["barrier"] == "tidon"
    wait = largest_wait_ns(result)
    assert 0 < wait < TS_US * 1000, wait
    # The waiter found it on its core and gave it the core (one donation a round at least).
    assert run["barrier"]["donated_local"] >= 10


@pytest.mark.zephyr
@pytest.mark.parametrize(
    "barrier, backend",
    [
        # CI's Zephyr suite: Tidon with the engines; the other pairs in make zephyr-test.
        (p, b) if (p, b) == ("tidon", "subutai") else pytest.param(p, b, marks=pytest.mark.slow)
        for p in POLICIES
        for b in ("subutai", "swonly")
    ],
)
def test_every_round_releases_every_waiter_once_beside_other_applications(sim, reference, backend, barrier):
    programs = [ROUNDS, "streamcluster", "ep:2", "bodytrack"]
    result, run = run_set(sim, programs, backend, barrier)
    assert result.exit_code == 0, result.output[-3000:]
    assert run["set"]["finished"] == 4
    assert run.get("barrier", {}).get("barrier", "spin-then-block") == barrier
    assert "barrier_rounds: 4 threads, 300 rounds, 0 wrong, 0 early" in result.output
    if barrier == "tidon":
        # Seed 002's step: laggards moved to their waiters' cores (and home again).
        assert run["set"]["migration"] == "tidon" and run["set"]["moved"] > 0
    sums = {k: o["checksum"] for k, o in run["output"].items() if "checksum" in o}
    assert sums == {
        1: ("streamcluster", reference["streamcluster"]),
        2: ("ep", reference["ep"]),
        3: ("bodytrack", reference["bodytrack"]),
    }


@pytest.mark.zephyr
def test_an_application_runs_again_while_the_first_runs_overlap(sim, reference):
    """Seed 002's co-runs ("ep:1*4"): an application whose run ended runs again, in its own
    copy, while another application's first run goes on; the set ends with the last first run,
    and every run that finished gives the host's checksum."""
    result, run = run_set(sim, ["streamcluster*4", "ep:1*4"], "subutai", "spin-then-block")
    assert result.exit_code == 0, result.output[-3000:]
    instances = run["instances"]
    assert [i["application"] for i in instances] == [0] * 4 + [1] * 4
    assert [i["first"] for i in instances] == [True, False, False, False] * 2
    firsts = [i for i in instances if i["first"]]
    assert all(i["finished"] for i in firsts)
    last_first = max(i["end"] for i in firsts)
    assert run["set"]["makespan"] == last_first
    repeated = 0
    for app in (0, 1):
        runs = [i for i in instances if i["application"] == app]
        started = [i for i in runs if i["started"]]
        # Started one after the other, each once the one before had ended, all within the
        # first runs; none after one that did not start.
        assert runs[: len(started)] == started
        for before, after in zip(started, started[1:]):
            assert before["finished"] and before["end"] <= after["start"] < last_first
        repeated += len(started) - 1
    assert repeated >= 1, "the shorter application never ran again"
    sums = {k: o["checksum"] for k, o in run["output"].items() if "checksum" in o}
    finished = [k for k, i in enumerate(instances) if i["finished"]]
    assert sorted(sums) == finished
    assert all(sums[k] == (instances[k]["program"], reference[instances[k]["program"]]) for k in finished)


def test_a_set_refuses_runs_that_are_not_a_count():
    from soc.zephyr import build_multi

    for entry in ("ep:2*0", "ep:2*x", "ep:2*2*2"):
        with pytest.raises(ValueError, match="runs as a count"):
            build_multi(None, [entry], "subutai", "rr", TS_US)


# Always: the report's metrics from a capture of known figures ------------------------------------


def _run(kind, workload, n, policy, ends, programs, threads):
    lines = [
        label_record(
            "multi_label", kind=kind, set=workload, ep_threads=n, tiles=8, backend="subutai", policy=policy
        )
    ]
    for k, (p, t, e) in enumerate(zip(programs, threads, ends)):
        lines.append(
            '@subutai {"event":"multi_instance","instance":%d,"program":"%s","threads":%d,"started":true,'
            '"finished":true,"start":0,"end":%d,"exit":0}' % (k, p, t, e)
        )
    lines.append(
        '@subutai {"event":"multi_set","policy":"rr","ts_us":500,"backend":"subutai","tiles":8,'
        '"instances":%d,"finished":%d,"makespan":%d}' % (len(programs), len(programs), max(ends))
    )
    lines.append(
        '@subutai {"event":"multi_barrier","barrier":"%s","donated_local":1,"donated_remote":3,'
        '"laggard_messages":4}' % policy
    )
    lines += [f"[{k}] {p}: checksum 0x00000001" for k, p in enumerate(programs)]
    return lines


def test_metrics_of_a_known_capture():
    lines = (
        _run("alone", "streamcluster", 0, "spin-then-block", [100], ["streamcluster"], [8])
        + _run("alone", "ep", 2, "spin-then-block", [300], ["ep"], [2])
        + _run("corun", "streamcluster", 2, "tidon", [200, 400], ["streamcluster", "ep"], [8, 2])
    )
    rows = metrics(set_runs(lines), {"streamcluster": "0x00000001", "ep": "0x00000001"})
    f = {name: i for i, name in enumerate(CSV_FIELDS)}
    (row,) = rows
    # Speed-ups 100/200 and 300/400: weighted 1.25, unfairness 0.75 / 0.5.
    assert float(row[f["weighted_speedup"]]) == pytest.approx(1.25)
    assert float(row[f["unfairness"]]) == pytest.approx(1.5)
    assert row[f["balanced"]] == "no" and row[f["checksums_ok"]] == "yes"
    assert (row[f["donated_local"]], row[f["laggard_messages"]]) == (1, 4)
    # A wrong checksum is reported, not passed.
    rows = metrics(set_runs(lines), {"streamcluster": "0x00000002", "ep": "0x00000001"})
    assert rows[0][f["checksums_ok"]] == "no"


def test_the_migrating_baseline_is_one_of_the_other_policies():
    """``block+steal`` builds the block barrier under rr-steal (idle kernels take ready threads),
    and Tidon's goal line measures it against the best other policy, that one included."""
    assert barrier_and_schedule("block+steal") == ("block", "rr-steal")
    assert barrier_and_schedule("tidon") == ("tidon", "rr")
    assert kernel_policy("rr-steal") == ("rr", ["CONFIG_SUBUTAI_SCHED_STEAL=y"])
    lines = (
        _run("alone", "streamcluster", 0, "spin-then-block", [100], ["streamcluster"], [8])
        + _run("alone", "ep", 2, "spin-then-block", [300], ["ep"], [2])
        + _run("corun", "streamcluster", 2, "tidon", [200, 400], ["streamcluster", "ep"], [8, 2])
        + _run("corun", "streamcluster", 2, "block+steal", [125, 300], ["streamcluster", "ep"], [8, 2])
    )
    rows = metrics(set_runs(lines), {"streamcluster": "0x00000001", "ep": "0x00000001"})
    (line,), _ = goals(rows)
    # Tidon 0.5 + 0.75 = 1.25 against block+steal's 0.8 + 1.0 = 1.8.
    assert "best other (block+steal) 1.800" in line and "**0.69×**" in line, line
