"""Channels (firmware/include/subutai/chan.h) on the simulated SoC, with every implementation:
the API's promises (chantest), random traffic between all tiles beside the NoC's other traffic
(chanstress), the port's latency (chanbench: cycle counts of the RTL are deterministic), the farm
against the host's checksum, bare metal and under Zephyr (skipped without ZEPHYR_BASE), and the
report of make bench-chan on a capture of known figures."""

import os

import pytest

from scripts import host_programs
from scripts.capture import parse_lines
from scripts.experiments.chan import GOAL_NOC_1HOP, farm_rows, farm_runs, latency_rows, report
from scripts.experiments.framework import label_record
from soc.firmware import CHANS


def some_slow(default):
    """Every implementation, those not in ``default`` marked slow (the suite's time)."""
    return [c if c in default else pytest.param(c, marks=pytest.mark.slow) for c in CHANS]


def image(model, app, chan, program_args=""):
    out = os.path.join(model.output_dir, "firmware", f"test_chan_{app}_{chan}")
    return model.build_firmware(app, out_dir=out, chan=chan, program_args=program_args)


@pytest.mark.parametrize("chan", CHANS)
def test_chantest_errors_full_and_empty_channels(sim, chan):
    model = sim.model(2, 1)
    result = model.run(image(model, "chantest", chan), max_cycles=5_000_000)
    records = parse_lines(result.output.splitlines())
    checks = [r for r in records if r.get("program") == "chantest" and "check" in r]
    assert result.exit_code == 0, result.output[-3000:]
    assert len(checks) >= 25 and all(r["impl"] == chan for r in checks)
    assert [r["check"] for r in checks if not r["ok"]] == []


# Every implementation on 2x2; all 16 tiles only with the port (noc): a memory implementation's
# run there simulates for minutes, and its random traffic is the 2x2 one's (tests/conftest.py
# marks the 4x4 run slow).
@pytest.mark.parametrize(
    "chan, mesh",
    [pytest.param(c, (2, 2), marks=[] if c == "noc" else [pytest.mark.slow], id=f"{c}-2x2") for c in CHANS]
    + [pytest.param("noc", (4, 4), id="noc-4x4")],
)
def test_chanstress_every_message_once_in_order(sim, chan, mesh):
    model = sim.model(*mesh)
    result = model.run(image(model, "chanstress", chan), max_cycles=200_000_000)
    record = next(r for r in parse_lines(result.output.splitlines()) if r.get("program") == "chanstress")
    n = mesh[0] * mesh[1]
    assert result.exit_code == 0 and record["ok"], result.output[-3000:]
    assert record["sent"] == record["received"] == 300 * n
    assert record["lost_or_extra"] == record["out_of_order"] == record["corrupt"] == 0
    assert record["port_errors"] == 0 and record["locks"] > 0 and record["ni_received"] > 0


def test_chanbench_noc_port_latency_and_ordering_of_implementations(sim):
    """The port's one-way latency (window accesses only) meets the goal at one hop; through the
    API, NoC messages beat pushed data, which beats the memory implementations."""
    model = sim.model(2, 2)
    lat = {}
    for chan in CHANS:
        result = model.run(image(model, "chanbench", chan), max_cycles=20_000_000)
        assert result.exit_code == 0, result.output[-2000:]
        rows = latency_rows(result.output.splitlines())
        lat[chan] = {(r[2], r[3]): r for r in rows}
    one_hop = lat["noc"][(1, 1)]
    assert one_hop[8] <= GOAL_NOC_1HOP
    assert lat["noc"][(2, 1)][8] - one_hop[8] == 2  # two cycles a hop each way
    order = [lat[c][(1, 1)][4] for c in ("noc", "push", "flags")]
    assert order == sorted(order)
    assert lat["noc"][(1, 1)][5] > lat["flags"][(1, 1)][5]  # throughput


@pytest.mark.parametrize("chan", some_slow(["noc"]))
def test_farm_checksum_equals_the_hosts(sim, chan):
    args = "-i test -m 12 -n 12"
    reference = host_programs.checksums(["farm"], args)["farm"]
    model = sim.model(2, 2)
    for threads in (1, 4):
        result = model.run(image(model, "farm", chan, f"{args} -t {threads}"), max_cycles=50_000_000)
        assert result.exit_code == 0, result.output[-2000:]
        assert f"farm: checksum {reference}" in result.output
        record = next(r for r in parse_lines(result.output.splitlines()) if "service_ns" in r)
        assert record["workers"] == (0 if threads == 1 else 2) and record["impl"] == chan


@pytest.mark.zephyr
@pytest.mark.parametrize("chan", ["noc", pytest.param("flags", marks=pytest.mark.slow)])
def test_farm_under_zephyr_more_threads_than_cores(sim, chan):
    """Seven threads on four kernels: waiters share cores, so a receive or a send to a full
    channel must sleep (noc: the port's interrupt) or yield (flags), not hold the core."""
    from soc.zephyr import build_app, chan_conf

    args = "-i test -m 12 -n 12"
    reference = host_programs.checksums(["farm"], args)["farm"]
    model = sim.model(2, 2)
    zimage = build_app(model, "program", program="farm", program_args=f"{args} -t 7", conf=chan_conf(chan))
    result = model.run(zimage, max_cycles=100_000_000)
    assert result.exit_code == 0, result.output[-2000:]
    assert f"farm: checksum {reference}" in result.output
    record = next(r for r in parse_lines(result.output.splitlines()) if "service_ns" in r)
    assert record["workers"] == 5 and record["impl"] == chan


def capture():
    """A capture of known figures: two latency runs and a farm of two sizes."""
    bench = (
        '@subutai {"program":"chanbench","impl":"%s","tiles":16,"peer":%d,"hops":%d,"words":1,'
        '"rounds":32,"rtt_min":%d,"rtt_median":%d,"rtt_max":%d,"latency_cycles":0,'
        '"stream_messages":128,"stream_cycles":%d,"send_cycles":0,"recv_cycles":0,"port_rtt_min":%d}'
    )
    farm = (
        '@subutai {"program":"farm","impl":"%s","m":32,"type":"int","workers":%d,"tasks":%d,'
        '"stream_ns":1,"service_ns":%d}'
    )
    return [
        label_record("chan_label", run="chanbench", impl="noc", tiles=16),
        bench % ("noc", 1, 1, 140, 142, 150, 8000, 38),
        bench % ("noc", 15, 6, 160, 162, 170, 8000, 58),
        label_record("chan_label", run="chanbench", impl="flags", tiles=16),
        bench % ("flags", 1, 1, 600, 620, 700, 40000, 0),
        label_record(
            "chan_label", run="farm", impl="noc", m=32, type="int", workers=0, tasks=4, reference="0x00000001"
        ),
        farm % ("noc", 0, 4, 680000),
        "farm: checksum 0x00000001",
        label_record(
            "chan_label",
            run="farm",
            impl="noc",
            m=32,
            type="int",
            workers=4,
            tasks=16,
            reference="0x00000002",
        ),
        farm % ("noc", 4, 16, 170000),
        "farm: checksum 0x00000002",
        label_record(
            "chan_label",
            run="farm",
            impl="queue",
            m=32,
            type="int",
            workers=4,
            tasks=16,
            reference="0x00000002",
        ),
        farm % ("queue", 4, 16, 200000),
        "farm: checksum 0x00000003",
    ]


def test_report_figures_goals_and_checksum_problems(tmp_path):
    lines = capture()
    lat = latency_rows(lines)
    assert [(r[0], r[2], r[4], r[5], r[8]) for r in lat] == [
        ("noc", 1, 71.0, 16.0, 19.0),
        ("noc", 6, 81.0, 16.0, 29.0),
        ("flags", 1, 310.0, 3.2, ""),
    ]
    rows, seq = farm_rows(farm_runs(lines))
    assert seq == {(32, "int"): 68000.0}
    assert [(r[0], r[3], r[4], r[5]) for r in rows] == [("noc", 4, 4.0, True), ("queue", 4, 3.4, False)]
    text, problems = report(lines, str(tmp_path), "chan")
    assert len(problems) == 1 and "queue" in problems[0] and "0x00000003" in problems[0]
    assert "71 cycles** through the API (goal ≤ 40: not met)" in text
    assert "19 cycles (met)" in text and "29 cycles (met)" in text
    assert "over queue 1.18× (goal ≥ 1.65: not met)" in text
    for name in ("chan.csv", "chan.md", "chan.png", "chan_farm.csv", "chan_farm.md"):
        assert (tmp_path / name).exists()
