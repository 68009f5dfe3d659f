"""The board SoC in simulation (``boards/<board>.py --sim``, ``make board-sim``): a 1-tile ULX3S SoC
with its BIOS, LiteDRAM controller, L2 and a model of the board's SDRAM chip runs in Verilator,
its UART on a pseudo-terminal; ``scripts/board_run.py`` serial-boots firmware through it as on a
board, and the run's exit status is the firmware's; a firmware that never ends is stopped by the
cycle limit with a clear message.

The model is built once (BIOS compile and Verilator, about a minute and a half here) into
build/test_board_sim/; each run then takes about 20 s.
"""

import os
import subprocess
import sys

import pytest

from gateware.build import BUILD_DIR, ROOT
from scripts.capture import read_capture

OUT = os.path.join(BUILD_DIR, "test_board_sim")
EXIT_TIMEOUT = 124


def board_sim(*args, timeout=1200):
    return subprocess.run(
        [sys.executable, "boards/radiona_ulx3s.py", "--tiles", "1", "--sim", "--output-dir", OUT, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_board_soc_serial_boots_firmware_through_its_bios(tmp_path):
    capture = tmp_path / "hello.txt"
    p = board_sim("--app", "hello", "--capture", str(capture))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    # The BIOS ran from its ROM, initialised and tested the SDRAM, then took the image by serial
    # boot from board_run.py through the pseudo-terminal.
    for seen in [
        "Initializing SDRAM @0x40000000",
        "Memtest OK",
        "Booting from serial",
        "Executing booted program at 0x40000000",
    ]:
        assert seen in p.stdout, seen
    assert "[board] the board SoC runs; its serial port is /dev/pts/" in p.stdout
    lines = [line.rstrip() for line in read_capture(str(capture))]
    assert any(line.startswith("hello from tile 0 of 1") for line in lines)
    assert lines[-1] == "@exit 0"
    # A second run reuses the model.
    p = board_sim("--app", "trap")
    assert "simulation model up to date" in p.stdout
    # The firmware's exit status is the run's: a trap ends it with 3.
    assert p.returncode == 3, p.stdout[-3000:] + p.stderr[-3000:]
    assert "*** trap on tile 0" in p.stdout


# Slow (15 M cycles past the BIOS): the plain SoC's cycle limit stays in make test
# (tests/test_soc_sim.py), the board SoC's serial boot too.
@pytest.mark.slow
def test_board_soc_firmware_that_never_ends_stops_at_the_cycle_limit():
    p = board_sim("--app", "busy", "--max-cycles", "15000000")
    assert p.returncode == EXIT_TIMEOUT, p.stdout[-3000:] + p.stderr[-3000:]
    assert (
        "stopped by the cycle limit (15,000,000 cycles, --max-cycles) before the firmware ended" in p.stdout
    )
    # Not the uploader's complaint about the port the model closed.
    assert "board_run.py: error" not in p.stderr


def test_board_sim_refuses_an_fpga_build_and_app_without_sim():
    p = board_sim("--build")
    assert p.returncode == 2 and "no --build or --load" in p.stderr
    p = subprocess.run(
        [sys.executable, "boards/radiona_ulx3s.py", "--tiles", "1", "--app", "hello"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "add --sim" in p.stderr


@pytest.mark.slow
@pytest.mark.zephyr
def test_board_soc_serial_boots_zephyr(tmp_path):
    capture = tmp_path / "zephyr.txt"
    p = board_sim("--zephyr", "--app", "hello", "--capture", str(capture))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    lines = [line.rstrip() for line in read_capture(str(capture))]
    assert "Hello from tile 0 of 1 (subutai_litex)" in lines
    assert lines[-1] == "@exit 0"
