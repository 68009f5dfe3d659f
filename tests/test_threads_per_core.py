"""More threads than cores on bare metal: the user-level threads of firmware/port/baremetal/ult.c.

pthreadtest's every check group passes with several threads per core (the one-thread-per-core run
is tests/test_pthread_soc.py), which needs a thread blocked in a hardware wait to give its core to
the others (a barrier of every thread on a core of several); switchbench measures a switch
(scripts/experiments/switch.py), and its report pairs the runtimes.
"""

import os

import pytest

from scripts.experiments.switch import measurements, report
from scripts.capture import CaptureError, parse_lines
from tests.test_pthread_soc import plain_output

# The goal's 64 threads on 8 tiles simulate for 10 minutes (both backends): with SUBUTAI_LONG=1.
LONG = os.environ.get("SUBUTAI_LONG", "") not in ("", "0")
# (mesh, threads per core): 8 threads on 2 tiles; 64 threads on 8 tiles.
CASES = [
    ((2, 1), 4),
    pytest.param(
        (4, 2), 8, marks=pytest.mark.skipif(not LONG, reason="set SUBUTAI_LONG=1 for 64 threads on 8 tiles")
    ),
]


@pytest.mark.parametrize("mesh,per_core", CASES, ids=["2x1-4", "4x2-8"])
def test_pthreadtest_several_threads_per_core(sim, mesh, per_core, pthreadtest_groups):
    x, y = mesh
    runs = {}
    for backend in ("subutai", "swonly"):
        r = sim.run(x, y, "pthreadtest", backend, program_args=str(per_core), max_cycles=600_000_000)
        assert r.exit_code == 0, f"{backend}:\n{r.output[-3000:]}{r.stderr[-1000:]}"
        lines = plain_output(r.output)
        for group in pthreadtest_groups:
            assert f"{group}: ok" in lines, f"{backend}: {group}\n{r.output[-3000:]}"
        assert "pthreadtest: 0 failures" in lines
        assert f"pthreadtest: {x * y} cores, {x * y * per_core} threads" in lines
        runs[backend] = lines
    assert runs["subutai"] == runs["swonly"]


def test_switchbench_both_backends(sim):
    cycles = {}
    for backend in ("subutai", "swonly"):
        r = sim.run(2, 1, "switchbench", backend, max_cycles=50_000_000)
        assert r.exit_code == 0, r.output[-2000:]
        assert "switchbench: done" in r.output
        for rec in parse_lines(r.output.splitlines()):
            if rec.get("program") == "switchbench":
                assert rec["backend"] == backend and rec["tiles"] == 2 and rec["cycles"] > 0
                cycles[backend, rec["what"], rec["threads"]] = rec["cycles"]
    assert set(cycles) == {
        (b, w, t) for b in ("subutai", "swonly") for w, t in (("yield", 2), ("yield", 8), ("handoff", 2))
    }
    # A turn through the engines' mutex and condition costs less than through the atomic unit's.
    assert cycles["subutai", "handoff", 2] < cycles["swonly", "handoff", 2]


def _line(os_name, backend, what, threads, cycles, variant=""):
    return (
        f'@subutai {{"os":"{os_name}","variant":"{variant}","program":"switchbench","backend":"{backend}",'
        f'"tiles":2,"what":"{what}","threads":{threads},"count":400,"cycles":{cycles}}}'
    )


def test_switch_report(tmp_path):
    lines = [
        _line(o, b, w, t, c)
        for o, c in (("baremetal", 300), ("zephyr", 700))
        for b in ("subutai", "swonly")
        for w, t in (("yield", 2), ("yield", 8), ("handoff", 2))
    ]
    # Without the invalidation, once and twice: the difference is the context switch alone.
    lines += [
        _line("baremetal", "subutai", w, t, c + extra, variant)
        for variant, extra in (("noinv", 0), ("twice", 45))
        for (w, t), c in ((("yield", 2), 130), (("yield", 8), 140), (("handoff", 2), 1000))
    ]
    table = report(measurements(lines), str(tmp_path))
    assert "bare metal" in table and "Zephyr" in table
    csv = (tmp_path / "switch.csv").read_text()
    assert "300" in csv and "700" in csv
    alone = [row for row in csv.splitlines() if "context switch alone" in row]
    assert len(alone) == 1 and alone[0].endswith(",45,45,45"), alone
    assert (tmp_path / "switch.png").stat().st_size > 0
    with pytest.raises(CaptureError, match="no measurement"):
        report(measurements(lines[:2]), str(tmp_path))
