"""Figures anyone can reproduce: the table of docs/benchmarks.md is the results' one, and the committed
prodcons results are what the committed code gives."""

import os
import subprocess
import sys

import pytest

from gateware.build import ROOT
from scripts.capture import parse_lines
from scripts.figures import BEGIN, END, FiguresError, render, splice
from scripts.results import RESULTS_DIR


def test_the_documented_figures_are_the_results():
    """`make figures` would not change docs/benchmarks.md: its table comes from results/*.csv."""
    r = subprocess.run(
        [sys.executable, "scripts/figures.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


def test_figures_check_fails_on_a_stale_document(tmp_path):
    readme = tmp_path / "benchmarks.md"
    table = render(RESULTS_DIR).replace("make bench-noc", "make bench-nothing", 1)
    readme.write_text(f"# x\n\n{BEGIN}\n{table}{END}\n")
    r = subprocess.run(
        [sys.executable, "scripts/figures.py", "--check", "--doc", str(readme)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "make figures" in r.stderr and "Traceback" not in r.stderr


def test_figures_name_the_command_of_a_missing_result(tmp_path):
    with pytest.raises(FiguresError, match="make bench-noc"):
        render(str(tmp_path))


def test_figures_need_their_markers():
    with pytest.raises(FiguresError, match="markers"):
        splice("# a document without the table\n", "| x |\n")


def _medians(rows):
    return {(int(r["tiles"]), r["backend"], r["primitive"], r["case"]): int(float(r["median"])) for r in rows}


def test_prodcons_results_are_reproduced():
    """The 2-tile prodcons of `make bench`, rerun: its medians are those of results/prodcons.csv
    (the simulation is cycle-accurate, the build reproducible and the timed code pinned in the
    caches; a change that moves them must commit the new results)."""
    from scripts.experiments.framework import rerun
    from scripts.experiments.prodcons import latency_rows

    from scripts.experiments.stamp import read_csv

    _, rows = read_csv(os.path.join(RESULTS_DIR, "prodcons.csv"))
    committed = {k: v for k, v in _medians(rows).items() if k[0] == 2}
    assert committed, "results/prodcons.csv has no 2-tile rows: run `make bench`"
    again = _medians(latency_rows(parse_lines(rerun("prodcons", ["--tiles", "2"]))))
    assert again == committed
