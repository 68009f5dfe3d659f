"""`make simspeed`'s and `make simprofile`'s command lines (scripts/experiments/simspeed.py, scripts/simprofile.py): a
wrong argument is refused with a clear message before any model is built."""

import csv
import json
import subprocess
import sys

import pytest

from gateware.build import ROOT


def run_script(script, *args):
    return subprocess.run(
        [
            sys.executable,
            *(["-m", "scripts.experiments", script] if script == "simspeed" else [f"scripts/{script}.py"]),
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "script, args, message",
    [
        ("simspeed", ["--repeat", "0"], "--repeat must be 1 or more"),
        ("simspeed", ["--cycles", "0"], "--cycles must be positive"),
        ("simspeed", ["--configs", "default,fast"], "unknown configuration 'fast'"),
        ("simspeed", ["--threads", "1"], "--threads: 2 or more"),
        ("simspeed", ["--tiles", "65"], "--tiles 65"),
        ("simprofile", ["--tiles", "1"], "the tile module needs 2 tiles or more"),
        ("simprofile", ["--tiles", "65"], "--tiles:"),
        ("simprofile", ["--cycles", "0"], "--cycles must be positive"),
        ("simprofile", ["--frequency", "-1"], "--frequency must be positive"),
    ],
)
def test_wrong_arguments_are_refused(script, args, message):
    p = run_script(script, *args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr
    assert "[build]" not in p.stdout


def test_simprofile_attributes_statements_to_parts():
    """`make simprofile` names the part of a tile a profiled statement belongs to from the
    Verilog line Verilator's --prof-cfuncs puts in the function's name."""
    from scripts.simprofile import CORE, OTHER, SOC, TILE_EVAL, attribute

    verilog = {
        "subutai_tile": [
            "reg    [1:0] outputport2_grant_vc0_1 = 2'd0;",  # line 1: a declaration
            "always @(posedge sys_clk) begin",  # line 2: the block's first statement is line 3's
            "    tile_subutaiport_engine_state <= 3'd1;",
            "\t\tstorage_1[tile_networkinterface_tx_fifo_wrport_adr] <= tile_networkinterface_din;",
            "    comb_rhs_self43 <= 1'd0;",
        ]
    }
    samples = [
        ("Vsubutai_tile_subutai_tile___nba_sequent__TOP__subutai_tile__7__PROF__subutai_tile__l1", 10.0),
        ("Vsubutai_tile_subutai_tile___nba_sequent__TOP__subutai_tile__8__PROF__subutai_tile__l2", 5.0),
        ("Vsubutai_tile_subutai_tile___nba_sequent__TOP__subutai_tile__9__PROF__subutai_tile__l4", 4.0),
        ("Vsubutai_tile_subutai_tile___ico_sequent__TOP__subutai_tile__1__PROF__subutai_tile__l5", 3.0),
        ("Vsubutai_tile_VexRiscv___ico_sequent__TOP__subutai_tile__VexRiscv__0__PROF__VexRiscv_x__l9", 2.0),
        ("Vsim_VexRiscv___nba_sequent__TOP__sim__VexRiscv__3__PROF__VexRiscv_x__l9", 1.0),
        ("Vsubutai_tile___024root___eval_nba__0", 7.0),
        ("Vsim___024root___eval_nba__21", 6.0),
        ("Vsim_sim___nba_sequent__TOP__sim__2__PROF__sim__l40", 1.5),
    ]
    parts = attribute(samples, verilog, "subutai_tile")
    assert parts == {
        "router": 10.0,
        "Subutai port and engine": 5.0,
        "network interface": 4.0,
        OTHER: 3.0,
        CORE: 3.0,
        TILE_EVAL: 7.0,
        SOC: 7.5,
    }


def test_report_keeps_every_runs_figures_beside_the_cut_models(tmp_path):
    """A report with cut models keeps each run's code size and models the cut with a core for each
    partition: tiles / (slowest evaluation + the exchange its 2-partition cut measured)."""
    from scripts.experiments import load
    from scripts.experiments.framework import parse_arguments

    experiment = load("simspeed")
    args = parse_arguments(
        experiment, ["--tiles", "1", "64", "--configs", "default,partitions", "--partitions", "2", "16:1"]
    )
    records = [
        {"program": "simspeed", "tiles": 1, "config": "default", "runs": [1.0e6], "text": 300_000},
        {"program": "simspeed", "tiles": 64, "config": "default", "runs": [5_000.0], "text": 2_500_000},
        # 100 us a cycle, of which 90 the slowest partition's evaluation: 10 us of exchange.
        {"program": "simspeed", "tiles": 64, "config": "p2", "runs": [10_000.0], "evaluating": [90.0, 80.0]},
        {
            "program": "simspeed",
            "tiles": 64,
            "config": "p16:1",
            "runs": [2_000.0],
            "evaluating": [54.0] + [15.0] * 15,
        },
    ]
    experiment.report(["@subutai " + json.dumps(r) for r in records], args, str(tmp_path))
    with open(tmp_path / "simspeed.csv") as f:
        header, _, row64 = csv.reader(line for line in f if not line.startswith("#"))
    cell = dict(zip(header, row64))
    assert cell["default code (MB)"] == "2.50"
    assert (
        cell["16 partitions (leader 1 tile), a core each (M tile-cycles/s, modelled)"]
        == f"{64 / (54 + 10):.3f}"
    )
