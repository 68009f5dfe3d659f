"""Several applications sharing the cores under Zephyr (zephyr-app/apps/multi, the scheduling
policies of zephyr-app/lib/pthread/sched_zephyr.c; TPDS'21 section VII).

A set of two applications on 2x2 tiles under every policy (the backends in turn: CI's Zephyr
suite), and a set of two instances each of two programs under every policy with both backends
(slow): every instance's checksum equals the host build's, and the schedule requests add up;
a deadlocked application (tests/programs/cs_spin: a thread spinning in its critical section for
ever) does not keep the other application of its set from finishing under CSA, because CSALimit
sends the spinner back to round robin, and does keep it from finishing without the limit. The
report's metrics are checked on a capture of known figures. Builds need a Zephyr tree
(ZEPHYR_BASE); without one those tests are skipped with the reason.
"""

import os
import re

import pytest

from gateware.build import ROOT
from scripts import host_programs
from scripts.capture import CaptureError, parse_lines
from scripts.experiments.framework import label_record
from scripts.experiments.multi import CSV_FIELDS, metrics, set_runs
from soc.zephyr import SCHED_POLICIES

TWO_SET = ["bodytrack", "streamcluster"]
SMALL_SET = TWO_SET * 2
TEST_ARGS = "-i test -s 1"
CS_SPIN = os.path.join(ROOT, "tests", "programs", "cs_spin")
MIGRATE_KEEPS = os.path.join(ROOT, "tests", "programs", "migrate_keeps")
RUNTIME_LOCK = os.path.join(ROOT, "tests", "programs", "runtime_lock")
#: Timeslot of the tests (us): short beside the test input's runs, so threads rotate many times.
TS_US = 100


@pytest.fixture(scope="module")
def reference():
    """Checksums of the host build for the test input."""
    return host_programs.checksums(["bodytrack", "streamcluster"], TEST_ARGS)


def run_set(sim, programs, backend, policy, ts_us=TS_US, extra_conf=(), max_cycles=60_000_000):
    from soc.zephyr import build_multi

    model = sim.model(2, 2)
    image = build_multi(model, programs, backend, policy, ts_us, TEST_ARGS, extra_conf)
    result = model.run(image, max_cycles=max_cycles)
    lines = [
        label_record("multi_label", set="test", tiles=4, backend=backend, policy=policy, ts_us=ts_us)
    ] + result.output.splitlines()
    return result, set_runs(lines)[0]


def checksums(run):
    return {k: o.get("checksum", (None, None)) for k, o in run["output"].items()}


def _sets():
    """Each policy with a set of two applications, the backends in turn; the set of four
    instances under each policy with both backends (slow)."""
    for k, policy in enumerate(SCHED_POLICIES):
        backend = ("subutai", "swonly")[k % 2]
        yield pytest.param(TWO_SET, backend, policy, id=f"two-{policy}-{backend}")
    for policy in SCHED_POLICIES:
        for backend in ("subutai", "swonly"):
            yield pytest.param(
                SMALL_SET, backend, policy, id=f"four-{policy}-{backend}", marks=pytest.mark.slow
            )


@pytest.mark.zephyr
@pytest.mark.parametrize("programs, backend, policy", list(_sets()))
def test_set_under_every_policy(sim, reference, programs, backend, policy):
    result, run = run_set(sim, programs, backend, policy)
    assert result.exit_code == 0, result.output[-3000:]
    record = run["set"]
    assert record["policy"] == policy and record["ts_us"] == TS_US and record["backend"] == backend
    assert record["finished"] == record["instances"] == len(programs)
    for k, (program, value) in checksums(run).items():
        assert program == programs[k] and value == reference[program], (k, program, value)
    assert len(checksums(run)) == len(programs)
    # Every request is in exactly one of Table VII's columns (the total is counted apart).
    counts = record["req_outside_cs"], record["req_cs_csa"], record["req_cs_rr"]
    assert sum(counts) == record["requests"] > 0
    if policy in ("oat", "rr", "rr-core"):
        assert record["req_cs_csa"] == 0
    if policy == "csa-nolimit":
        assert record["req_cs_rr"] == 0
    instances = run["instances"]
    starts = sorted(i["start"] for i in instances)
    if policy == "oat":
        # One at a time, in order: each starts once the one before has ended.
        for a, b in zip(instances, instances[1:]):
            assert b["start"] >= a["end"]
    else:
        # Together: every instance starts before any ends.
        assert starts[-1] < min(i["end"] for i in instances)
    assert record["makespan"] == max(i["end"] for i in instances)


def slot_logs(output):
    """Each core's slot log (CONFIG_SUBUTAI_SCHED_SLOT_LOG): {core: (TS in cycles, [[cycle,
    application that ran, mask of the applications that could run], ...])}."""
    logs = {}
    for record in parse_lines(output.splitlines()):
        if record.get("event") == "slot_log":
            logs[record["core"]] = (record["ts_cycles"], record["log"])
    return logs


def rotation_check(logs, applications):
    """Per core, the slot ends where the slot's application (1 + s mod n for slot s, counted on
    the global counter) had a thread that could run: how many ran it and how many ran another,
    and each slot end's distance from its multiple of TS."""
    seen = {}
    for core, (ts, log) in logs.items():
        ran, other, phases = 0, 0, []
        for cycle, app, ready in log:
            if app in (0, 255):
                continue  # the launcher's, or nothing
            boundary = round(cycle / ts)
            phases.append(cycle - boundary * ts)
            slot_app = 1 + (boundary - 1) % applications
            if ready >> slot_app & 1:
                ran += app == slot_app
                other += app != slot_app
        seen[core] = (ran, other, min(phases), max(phases))
    return seen


@pytest.mark.zephyr
@pytest.mark.parametrize("policy", ["rr", "rr-core"])
def test_an_applications_threads_run_in_its_slots_on_every_core(sim, policy):
    """Two applications of four threads, one of each on every core of 2x2 (ep never blocks),
    with each core's slot log: under rr every timeslot ends on a multiple of TS on the global
    counter (within the interrupt's latency), and in every slot each core ran the slot's
    application where it had a thread of it that could run; under rr-core, each core's own
    rotation, the cores disagree (the difference the alignment makes)."""
    conf = ["CONFIG_SUBUTAI_SCHED_SLOT_LOG=1024"]
    result, run = run_set(sim, ["ep:4", "ep:4"], "subutai", policy, extra_conf=conf)
    assert result.exit_code == 0, result.output[-3000:]
    logs = slot_logs(result.output)
    assert sorted(logs) == [0, 1, 2, 3]
    seen = rotation_check(logs, 2)
    ts = logs[0][0]
    if policy == "rr":
        for core, (ran, other, early, late) in seen.items():
            assert ran >= 20 and other == 0, (core, seen[core])
            assert 0 <= early and late < ts // 2, (core, seen[core])
    else:
        assert sum(other for _, other, _, _ in seen.values()) > 0, seen


@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", pytest.param("swonly", marks=pytest.mark.slow)])
def test_a_moved_thread_keeps_its_key_data_and_pending_cancellation(sim, backend):
    """tests/programs/migrate_keeps under the migrating baseline (idle kernels take ready
    threads): workers set up on one crowded core move to idle ones and find their key's value
    and their stack as they left them; none moves while it waits for a mutex (queued in an
    engine or the software queue) or holds it, every unlock succeeds (an engine knows a holder
    by its core), and the cancellation requested before the move ends each of them after it."""
    conf = ["CONFIG_SUBUTAI_SCHED_STEAL=y"]
    result, run = run_set(sim, [MIGRATE_KEEPS], backend, "rr", extra_conf=conf)
    assert result.exit_code == 0, result.output[-3000:]
    m = re.search(
        r"migrate_keeps: 3 threads, (\d+) moved, (\d+) kept their key and data, (\d+) moved while waiting "
        r"for the mutex, (\d+) while holding it, (\d+) unlock errors, (\d+) cancelled",
        result.output,
    )
    assert m, result.output[-3000:]
    moved, kept, queued, holding, unlock_errors, cancelled = map(int, m.groups())
    assert moved >= 1 and kept == moved, m.group(0)
    assert (queued, holding, unlock_errors, cancelled) == (0, 0, 0, 3), m.group(0)
    assert run["set"]["migration"] == "steal" and run["set"]["moved"] >= moved
    # What the moves cost: each takes a message to another core and its interrupt (hundreds of
    # cycles), and both kernels' work on it (a suspend, a resume) is counted.
    s = run["set"]
    assert s["move_latency"] >= 100 * s["moved"] and s["move_work"] >= 100 * s["moved"], s


@pytest.mark.zephyr
def test_idle_kernels_asking_a_core_that_can_give_nothing_back_off(sim, reference):
    """The migrating baseline with a short first wait after a "none" (2,000 cycles): three idle
    kernels ask the launcher's core, whose runnable threads cannot move at first (the launcher,
    a main that has not joined its application yet). At a fixed pace their questions kept its NI
    interrupt busy for good and nothing else ran there: no output within 20 M cycles. Each
    "none" in a row now doubles the asker's wait: the set ends, and the misses stay few."""
    conf = ["CONFIG_SUBUTAI_SCHED_STEAL=y", "CONFIG_SUBUTAI_SCHED_STEAL_BACKOFF_CYCLES=2000"]
    result, run = run_set(
        sim, ["streamcluster*4", "ep:1*4"], "subutai", "rr", ts_us=500, extra_conf=conf, max_cycles=20_000_000
    )
    assert result.exit_code == 0, result.output[-3000:]
    firsts = [i for i in run["instances"] if i.get("first", True)]
    assert len(firsts) == 2 and all(i["finished"] and i["exit"] == 0 for i in firsts), run["instances"]
    s = run["set"]
    assert s["migration"] == "steal" and s["moved"] >= 1, s
    # Three askers over the whole set: a fixed 2,000-cycle wait would answer thousands.
    assert s["steal_misses"] <= 100, s
    sums = [c for p, c in checksums(run).values() if p == "streamcluster"]
    assert sums and all(c == reference["streamcluster"] for c in sums), checksums(run)


@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", pytest.param("swonly", marks=pytest.mark.slow)])
def test_a_holder_of_the_runtime_lock_keeps_its_core_past_its_timeslot(sim, backend):
    """Two applications whose threads take the runtime's lock in a loop (tests/programs/
    runtime_lock), one a core, rotated by rr: a holder preempted at its slot's end would leave
    the other application's threads spinning on the lock for their whole slot. Each thread's
    rounds end at most about one slot of the other application apart."""
    ts_us = 1000
    result, run = run_set(sim, [f"{RUNTIME_LOCK}:4"] * 2, backend, "rr", ts_us=ts_us)
    assert result.exit_code == 0, result.output[-3000:]
    gaps = [
        int(g)
        for g in re.findall(r"runtime_lock: 4 threads, \d+ rounds, largest gap (\d+) ns", result.output)
    ]
    assert len(gaps) == 2, result.output[-3000:]
    # The other application's slot, and the round around it: well under two slots.
    assert all(ts_us * 1000 // 2 < g < ts_us * 1000 * 3 // 2 for g in gaps), gaps


@pytest.mark.slow
@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", "swonly"])
def test_csa_limit_returns_a_spinning_holder_to_round_robin(sim, reference, backend):
    """cs_spin's main thread holds its mutex for ever on core 1, beside a thread of streamcluster:
    CSA keeps it on the core for CSALimit = (2 - 1) x 2 x TS, then round robin lets streamcluster
    run, so it finishes; the launcher's deadline ends the run with cs_spin unfinished (exit 3)."""
    conf = ["CONFIG_SUBUTAI_MULTI_DEADLINE_MS=40"]
    result, run = run_set(sim, ["streamcluster", CS_SPIN], backend, "csa", extra_conf=conf)
    assert result.exit_code == 3, result.output[-3000:]
    stream, spin = run["instances"]
    assert stream["finished"] and stream["exit"] == 0
    assert checksums(run)[0] == ("streamcluster", reference["streamcluster"])
    assert not spin["finished"]
    record = run["set"]
    assert record["finished"] == 1
    # The spinner passed its limit: its later timeslots ended under round robin.
    assert record["req_cs_rr"] > 0
    assert record["req_cs_csa"] > 0


@pytest.mark.slow
@pytest.mark.zephyr
def test_without_the_limit_a_deadlocked_application_stops_the_others(sim):
    conf = ["CONFIG_SUBUTAI_MULTI_DEADLINE_MS=40"]
    result, run = run_set(sim, ["streamcluster", CS_SPIN], "subutai", "csa-nolimit", extra_conf=conf)
    assert result.exit_code == 3, result.output[-3000:]
    assert [i["finished"] for i in run["instances"]] == [False, False]
    assert run["set"]["req_cs_rr"] == 0


@pytest.mark.slow
@pytest.mark.zephyr
def test_round_robin_also_lets_the_others_finish(sim, reference):
    conf = ["CONFIG_SUBUTAI_MULTI_DEADLINE_MS=40"]
    result, run = run_set(sim, ["streamcluster", CS_SPIN], "subutai", "rr", extra_conf=conf)
    assert result.exit_code == 3, result.output[-3000:]
    assert [i["finished"] for i in run["instances"]] == [True, False]
    assert checksums(run)[0] == ("streamcluster", reference["streamcluster"])
    # Up to the deadline (40 ms, 4 M cycles of 100 MHz) the spinner kept its core busy; once
    # streamcluster had ended, at least one core had nothing to run and slept (the cs_spin
    # waiter and the launcher, each alone on its core, spin for their wake-ups): its cycles are
    # not counted busy.
    deadline_cycles, record = 40 * 100_000, run["set"]
    assert (
        deadline_cycles < record["busy"] < 4 * deadline_cycles - (deadline_cycles - record["makespan"]) // 2
    )


# Always: the report's metrics from a capture of known figures ------------------------------------


def _capture(policy, ends, starts=None, set_name="mix", makespan=None, checksum="0x00000001"):
    programs = ["bodytrack", "x264"]
    starts = starts or [0, 0]
    lines = [label_record("multi_label", set=set_name, tiles=8, backend="subutai", policy=policy, ts_us=500)]
    for k, (p, s, e) in enumerate(zip(programs, starts, ends)):
        lines.append(
            '@subutai {"event":"multi_instance","instance":%d,"program":"%s","threads":8,"started":true,'
            '"finished":true,"start":%d,"end":%d,"exit":0}' % (k, p, s, e)
        )
    lines.append(
        '@subutai {"event":"multi_set","policy":"%s","ts_us":500,"backend":"subutai","tiles":8,"instances":2,'
        '"finished":2,"makespan":%d,"req_outside_cs":10,"req_cs_csa":2,"req_cs_rr":1,"requests":13,'
        '"busy":%d}' % (policy, makespan or max(ends), 6 * (makespan or max(ends)))
    )
    for k, p in enumerate(programs):
        lines.append(f"[{k}] {p}: checksum {checksum}")
    return lines


def test_metrics_of_a_known_capture():
    # Alone (oat): bodytrack 100, x264 200 (one after the other).
    lines = _capture("oat", [100, 300], starts=[0, 100]) + _capture("rr", [150, 400])
    rows, app_rows = metrics(set_runs(lines), {"bodytrack": "0x00000001", "x264": "0x00000001"})
    f = {name: i for i, name in enumerate(CSV_FIELDS)}
    oat, rr = rows
    assert oat[f["makespan"]] == 300 and rr[f["makespan"]] == 400
    # rr: slowdowns 150/100 = 1.5 and 400/200 = 2: unfairness 2/1.5, weighted speed-up 1/1.5 + 1/2.
    assert float(rr[f["unfairness"]]) == pytest.approx(2 / 1.5, abs=1e-3)
    assert float(rr[f["weighted_speedup"]]) == pytest.approx(1 / 1.5 + 0.5, abs=1e-3)
    assert float(rr[f["speedup_over_oat"]]) == pytest.approx(0.75, abs=1e-3)
    assert rr[f["checksums_ok"]] == "yes" and rr[f["ts_ms"]] == "0.5"
    assert (rr[f["req_outside_cs"]], rr[f["req_cs_csa"]], rr[f["req_cs_rr"]]) == (10, 2, 1)
    # The cores were busy 6 of 8 tiles' cycles over the makespan.
    assert rr[f["busy_cycles"]] == 2400 and float(rr[f["busy"]]) == pytest.approx(0.75)
    assert len(app_rows) == 4
    # A wrong checksum is reported, not passed.
    rows, _ = metrics(set_runs(lines), {"bodytrack": "0x00000002", "x264": "0x00000001"})
    assert rows[1][f["checksums_ok"]] == "no"


def test_a_run_without_its_set_record_is_an_error():
    lines = _capture("oat", [100, 300])[:-3]
    with pytest.raises(CaptureError, match="did not end"):
        set_runs(lines)
    with pytest.raises(CaptureError, match="no oat run"):
        metrics(set_runs(_capture("rr", [100, 300])), {})
    assert parse_lines(lines[:1])[0]["event"] == "multi_label"
