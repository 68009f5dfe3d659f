"""Capture parsing and the prodcons report, on synthetic UART output (no simulation)."""

import csv
import io
import json
import subprocess
import sys

import pytest

from scripts.capture import CaptureError, parse_lines, read_capture
from scripts.experiments.prodcons import PAPER_TABLE_XI, latency_rows, report
from gateware.build import ROOT

MISSING_MARK = "–"


def record(backend, tiles, primitive, case, median, **extra):
    return {
        "program": "prodcons",
        "backend": backend,
        "tiles": tiles,
        "primitive": primitive,
        "case": case,
        "count": 12,
        "min": median - 4,
        "median": median,
        "p90": median + 9,
        "max": median + 17,
        "mean": median + 1.2,
        **extra,
    }


def capture(records, noise=True):
    """UART text as the simulator prints it: records amid boot text, @exit and the [sim] line."""
    lines = ["LiteX boot", "cores released at cycle 1234"] if noise else []
    lines += ["@subutai " + json.dumps(r) for r in records]
    if noise:
        lines += ["@exit 0", "[sim] exit=0 cycles=999 seconds=1.0 speed=999"]
    return "\n".join(lines) + "\n"


def test_parse_lines_keeps_records_ignores_text_and_exit():
    lines = [
        "hello from tile 0",
        '@subutai {"program":"prodcons","event":"run","cycles":5}',
        "@exit 0",
        "[sim] exit=0 cycles=10 seconds=0.1 speed=100",
    ]
    assert parse_lines(lines) == [{"program": "prodcons", "event": "run", "cycles": 5}]


def test_parse_lines_finds_prefix_mid_line():
    assert parse_lines(['tile 3 sayt@subutai {"a": 1}\n']) == [{"a": 1}]


def test_parse_lines_malformed_json_names_line():
    with pytest.raises(CaptureError, match=r"line 3.*\{\"a\": 1,") as e:
        parse_lines(["text", '@subutai {"a": 0}', '@subutai {"a": 1,'])
    assert isinstance(e.value, ValueError)


def test_read_capture_from_file_and_stdin(tmp_path, monkeypatch):
    text = capture([record("swonly", 4, "mutex", "lock_free", 44)])
    path = tmp_path / "uart.log"
    path.write_text(text)
    assert read_capture(str(path)) == text.splitlines()
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert read_capture("-") == text.splitlines()


def test_read_capture_missing_file(tmp_path):
    with pytest.raises(CaptureError, match="nowhere.log"):
        read_capture(str(tmp_path / "nowhere.log"))


def test_missing_serial_port_names_it():
    with pytest.raises(CaptureError, match="/dev/no-such-uart"):
        read_capture("serial:/dev/no-such-uart", timeout=0.1)


def test_missing_pyserial_names_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "serial", None)
    with pytest.raises(CaptureError, match="pyserial"):
        read_capture("serial:/dev/ttyUSB0")


CASES = list(PAPER_TABLE_XI)


def both_backends():
    records = []
    for tiles in (2, 4):
        for i, (primitive, case) in enumerate(CASES):
            records.append(record("swonly", tiles, primitive, case, 1000 + 100 * i))
            records.append(record("subutai", tiles, primitive, case, 80))
        records.append(
            {"program": "prodcons", "backend": "subutai", "tiles": tiles, "event": "run", "cycles": 5000}
        )
    return records


def test_latency_rows_drop_events_and_other_programs():
    records = both_backends() + [{"program": "pingpong", "tiles": 4, "primitive": "mutex"}]
    assert len(latency_rows(records)) == 2 * 2 * len(CASES)


def test_report_writes_csv_markdown_png(tmp_path):
    text = report(parse_lines(capture(both_backends()).splitlines()), results_dir=tmp_path)
    with open(tmp_path / "prodcons.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 * len(CASES)
    assert list(rows[0]) == [
        "program",
        "backend",
        "tiles",
        "primitive",
        "case",
        "count",
        "min",
        "median",
        "p90",
        "max",
        "mean",
    ]
    first = next(r for r in rows if (r["backend"], r["tiles"], r["case"]) == ("swonly", "4", "lock_queued"))
    assert (first["median"], first["count"]) == ("1100", "12")

    md = (tmp_path / "prodcons.md").read_text()
    assert "## 2 tiles" in md and "## 4 tiles" in md
    assert "13.8×" in md  # 1100 / 80, lock_queued
    assert "70.1×" in md  # paper: 64178 / 916
    assert "Lock queued" in md and "64178" in md
    assert MISSING_MARK not in md.split("## 2 tiles")[1].split("Whole run")[0]
    assert "only the ratios" in md

    assert (tmp_path / "prodcons.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "paper ratio" in text and "12.5×" in text and "12.1×" in text  # 1000/80; paper 1537/127


def test_report_spread_across_layouts(tmp_path):
    """Records of several layouts: the tables are the unshifted layout's, with each median's
    spread across layouts; every layout's figures go to prodcons_layouts.csv."""
    records = []
    for pad, shift in ((0, 0), (64, 30), (128, 3)):
        for p, c in CASES:
            records.append(
                record("swonly", 4, p, c, 1000 + (shift if c == "lock_queued" else 0), layout_pad=pad)
            )
            records.append(record("subutai", 4, p, c, 100, layout_pad=pad))
    text = report(records, results_dir=tmp_path)
    with open(tmp_path / "prodcons.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(CASES) and {r["median"] for r in rows} == {"1000", "100"}
    with open(tmp_path / "prodcons_layouts.csv") as f:
        assert len(list(csv.DictReader(f))) == 3 * 2 * len(CASES)
    md = (tmp_path / "prodcons.md").read_text()
    assert (
        "| mutex | `lock_queued` Lock queued | 1000 | 100 | 10.0× | 996 / 1009 | 96 / 109 | 3.0 % | 0.0 % |"
        in md
    )
    assert f"{2 * len(CASES)} of {2 * len(CASES)} medians are within the goal" in md
    assert "3.0 %" in text


def test_report_names_medians_beyond_the_spread_goal(tmp_path):
    records = [
        record("subutai", 2, "cond", "broadcast", median, layout_pad=pad)
        for pad, median in ((0, 100), (64, 110))
    ]
    report(records, results_dir=tmp_path)
    md = (tmp_path / "prodcons.md").read_text()
    assert (
        "0 of 1 medians are within the goal across the layouts: not 2 tiles cond `broadcast` subutai (10.0 %)"
    ) in md


def test_report_spread_across_links(tmp_path):
    """Records of perturbed links (layout_variant) beside layouts: the tables are the default
    link's and unshifted layout's; the links' spread is a column and a summary of its own, and
    a layout's figures do not count in it."""
    records = []
    for pad, variant, median in ((0, 0, 200), (64, 0, 202), (0, 1, 240), (0, 2, 200), (64, 1, 999)):
        records.append(
            record("subutai", 8, "mutex", "lock_free", median, layout_pad=pad, layout_variant=variant)
        )
    text = report(records, results_dir=tmp_path)
    md = (tmp_path / "prodcons.md").read_text()
    assert "| 200 |" in md and "999" not in md.split("Spread:")[0].split("## 8 tiles")[1].split("Whole")[0]
    assert "Subutai spread | SW-only link spread | Subutai link spread |" in md
    assert "| 1.0 % | – | 20.0 % |" in md
    assert "across the links: not 8 tiles mutex `lock_free` subutai (20.0 %)" in md
    assert "1 of 1 medians are within the goal across the layouts" in md
    with open(tmp_path / "prodcons_layouts.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["layout_pad"], r["layout_variant"], r["median"]) for r in rows] == [
        ("0", "0", "200"),
        ("0", "1", "240"),
        ("0", "2", "200"),
        ("64", "0", "202"),
        ("64", "1", "999"),
    ]
    assert "20.0 %" in text


def test_report_needs_the_unshifted_layout(tmp_path):
    with pytest.raises(CaptureError, match="layout_pad 0"):
        report([record("swonly", 2, "mutex", "unlock", 50, layout_pad=64)], results_dir=tmp_path)


def test_report_with_one_backend_shows_missing(tmp_path):
    records = [record("swonly", 4, p, c, 500) for p, c in CASES]
    text = report(records, results_dir=tmp_path)
    md = (tmp_path / "prodcons.md").read_text()
    assert "| mutex | `lock_free` Lock empty | 500 | – | – |" in md
    assert MISSING_MARK in text
    assert (tmp_path / "prodcons.png").exists()


def test_report_without_prodcons_records(tmp_path):
    with pytest.raises(CaptureError, match="no prodcons"):
        report([{"program": "prodcons", "event": "run", "cycles": 1}], results_dir=tmp_path)


def test_cli_without_records_exits_2(tmp_path):
    path = tmp_path / "uart.log"
    path.write_text("boot\n@exit 0\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.experiments",
            "report",
            "prodcons",
            str(path),
            "--results",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert "no prodcons" in r.stderr and "Traceback" not in r.stderr
