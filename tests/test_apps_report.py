"""The benchmark programs' report (scripts/experiments/apps.py) on captures written here."""

import csv
import json

import pytest


from scripts.experiments.apps import app_runs, checksum_problems, events, input_args, report, sync_time
from scripts.capture import CaptureError

OPS = [
    ("thread", "create"),
    ("thread", "join"),
    ("mutex", "lock"),
    ("mutex", "trylock"),
    ("mutex", "unlock"),
    ("cond", "wait"),
    ("cond", "signal"),
    ("cond", "broadcast"),
    ("barrier", "wait"),
]


def harness_output(
    program, backend, tiles, roi, checksum="0x0000abcd", counts=None, exit_code=0, args="-i test -s 1"
):
    """What the benchmark harness prints for one run (firmware/lib/bench/harness.c)."""
    counts = counts or {}
    head = {"program": program, "backend": backend, "tiles": tiles, "threads": tiles}
    lines = [
        f"{program}: 3 frames",
        f"{program}: checksum {checksum}",
        "@subutai "
        + json.dumps(
            dict(
                head,
                event="run",
                args=f"-t {tiles} {args}",
                exit=exit_code,
                unit="cycles",
                time=roi + 1000,
                roi=roi,
            )
        ),
    ]
    for primitive, op in OPS:
        n = counts.get((primitive, op), 0)
        lines.append(
            "@subutai "
            + json.dumps(
                dict(head, event="sync", primitive=primitive, op=op, count=n, time=10 * n, max=10 if n else 0)
            )
        )
    lines.append("@subutai " + json.dumps(dict(head, event="objects", mutex=1, cond=1, barrier=1)))
    return lines


def capture():
    lines = ["boot", "@subutai " + json.dumps({"program": "prodcons", "event": "run", "cycles": 5})]
    for tiles, sw, hw in ((1, 1000, 1100), (2, 600, 400), (4, 500, 250)):
        counts = {("barrier", "wait"): 4 * tiles, ("mutex", "lock"): tiles, ("mutex", "unlock"): tiles}
        lines += harness_output("streamcluster", "swonly", tiles, sw, counts=counts)
        lines += harness_output("streamcluster", "subutai", tiles, hw, counts=counts)
    return lines


def test_runs_are_parsed_with_their_checksums_and_records():
    runs = app_runs(capture())
    assert len(runs) == 6  # prodcons' run record is not a program run
    r = runs[3]
    assert (r["program"], r["backend"], r["tiles"], r["roi"]) == ("streamcluster", "subutai", 2, 400)
    assert r["checksum"] == "0x0000abcd" and r["input"] == "-i test -s 1"
    assert events(r, "barrier") == 8 and events(r, "mutex") == 4 and events(r, "cond") == 0
    assert sync_time(r) == 10 * 12
    assert r["objects"] == {"mutex": 1, "cond": 1, "barrier": 1}


def test_input_args_drop_the_thread_count():
    assert input_args("-t 8 -i simsmall -s 3") == "-i simsmall -s 3"
    assert input_args("-i test -t 2") == "-i test"


def test_records_without_their_run_are_errors():
    lines = harness_output("x264", "swonly", 2, 100)
    with pytest.raises(CaptureError, match="without its run record"):
        app_runs(lines[3:])  # the run record lost
    other = harness_output("x264", "subutai", 4, 100)
    with pytest.raises(CaptureError, match="without its run record"):
        app_runs(lines[:3] + other[3:])  # records of another run
    bad = lines[:2] + [lines[2].replace('"roi": 100', '"roi": "100"')]
    with pytest.raises(CaptureError, match="roi is not an integer"):
        app_runs(bad)


def test_checksum_problems():
    runs = app_runs(capture())
    assert checksum_problems(runs) == []
    ref = {("streamcluster", "-i test -s 1"): "0x0000abcd"}
    assert checksum_problems(runs, ref) == []
    wrong = app_runs(capture() + harness_output("streamcluster", "subutai", 8, 10, checksum="0x00000001"))
    (problem,) = checksum_problems(wrong)
    assert "subutai, 8 tiles" in problem and "0x00000001" in problem and "0x0000abcd" in problem
    (problem, *rest) = checksum_problems(runs, {("streamcluster", "-i test -s 1"): "0x12345678"})
    assert "the host reference" in problem and len(rest) == 5
    failed = app_runs(harness_output("radix", "swonly", 1, 10, exit_code=1))
    assert checksum_problems(failed) == ["radix (swonly, 1 tiles, -t 1 -i test -s 1): exit code 1"]
    lost = app_runs([l for l in harness_output("radix", "swonly", 1, 10) if "checksum" not in l])
    assert checksum_problems(lost) == ["radix (swonly, 1 tiles, -t 1 -i test -s 1): no checksum line"]


def test_report_writes_speedup_scaling_and_events(tmp_path):
    text = report(app_runs(capture()), str(tmp_path))
    for ext in ("csv", "md", "png"):
        assert (tmp_path / f"apps.{ext}").stat().st_size > 0
    md = (tmp_path / "apps.md").read_text()
    # 4 tiles: speed-up 500/250, SW-only scaling 1000/500, Subutai scaling 1100/250.
    assert "| streamcluster | 4 | 500 | 250 | 2.00× | – | 2.00× | 4.40× |" in md
    assert "Against the paper" not in md  # no run at the paper's 32 or 64 cores
    assert "| streamcluster | Barrier | 1 | 4 | 8 | 16 |" in md
    assert "2.00×" in text
    with open(tmp_path / "apps.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and rows[0]["barrier_events"] == "4" and rows[0]["sync_time"] == "60"


def test_report_without_runs_is_an_error(tmp_path):
    with pytest.raises(CaptureError, match="no benchmark program runs"):
        report([], str(tmp_path))


def test_report_sets_the_papers_figures_beside_ours(tmp_path):
    """At 32 and 64 tiles the paper's Fig. 12 speed-ups stand beside ours, with the mean of its
    three programs (once all three ran at that size)."""
    lines = []
    for program, sw, hw in (("streamcluster", 300, 100), ("bodytrack", 200, 100), ("x264", 100, 100)):
        for backend, roi in (("swonly", sw), ("subutai", hw)):
            lines += harness_output(program, backend, 64, roi)
    lines += harness_output("streamcluster", "swonly", 32, 100) + harness_output(
        "streamcluster", "subutai", 32, 50
    )
    report(app_runs(lines), str(tmp_path))
    md = (tmp_path / "apps.md").read_text()
    assert "| streamcluster | 64 | 300 | 100 | 3.00× | 2.20× |" in md
    assert "| 64 | 3.00× (2.20×) | 2.00× (1.77×) | 1.00× (1.05×) | 2.00× (1.67×) |" in md
    # At 32 tiles only streamcluster ran: no mean.
    assert "| 32 | 2.00× (2.71×) | – (1.78×) | – (1.11×) | – (1.87×) |" in md


def test_report_keeps_the_last_run_of_a_configuration(tmp_path):
    """A capture extended by a rerun (apps --append): one row per configuration, the
    later run's figures, in the order the configurations first came."""
    lines = capture() + harness_output("streamcluster", "subutai", 4, 200)
    report(app_runs(lines), str(tmp_path))
    with open(tmp_path / "apps.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6
    (rerun,) = [r for r in rows if r["backend"] == "subutai" and r["tiles"] == "4"]
    assert (
        rerun["roi"] == "200"
        and rows.index(rerun)
        == [i for i, r in enumerate(app_runs(capture())) if r["backend"] == "subutai" and r["tiles"] == 4][0]
    )
    assert "| streamcluster | 4 | 500 | 200 | 2.50× |" in (tmp_path / "apps.md").read_text()
