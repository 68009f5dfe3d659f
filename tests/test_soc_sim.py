"""Integration tests of the multi-tile SoC in Verilator: boot, tile ids, memories, cycle counter."""

import json
import os
import re
import subprocess
import sys

import pytest

from scripts.capture import parse_lines
from gateware.build import ROOT
from soc.simulation import EXIT_TIMEOUT, build_model

MESHES = [(1, 1), (2, 1), (2, 2)]
MESH_IDS = [f"{x}x{y}" for x, y in MESHES]


@pytest.mark.parametrize("mesh", MESHES, ids=MESH_IDS)
def test_hello_every_tile_reports_its_id(sim, mesh):
    x, y = mesh
    n = x * y
    r = sim.run(x, y, "hello", max_cycles=5_000_000)
    assert r.exit_code == 0, r.stderr
    lines = re.findall(
        r"hello from tile (\d+) of (\d+) \(x=(\d+), y=(\d+)\) counter=(\d+) cycle=(\d+)", r.output
    )
    assert len(lines) == n, r.output
    release = int(re.search(r"cores released at cycle (\d+)", r.output).group(1))
    for i, (tile, tiles, tx, ty, counter, cycle) in enumerate(lines):
        assert int(tile) == i
        assert int(tiles) == n
        assert (int(tx), int(ty)) == (i % x, i // x)
        assert int(counter) == 100 * (i + 1)
        if i > 0:
            # Secondary cores only run once core 0 has released them.
            assert int(cycle) > release


@pytest.mark.parametrize("mesh", MESHES, ids=MESH_IDS)
def test_memories_and_cycle_counter(sim, mesh):
    x, y = mesh
    n = x * y
    r = sim.run(x, y, "memcheck", max_cycles=5_000_000)
    assert r.exit_code == 0, r.stderr
    reports = parse_lines(r.output.splitlines())
    assert [rep["tile"] for rep in reports] == list(range(n))
    addrs = {rep["private_addr"] for rep in reports}
    assert len(addrs) == 1, "every core must use the same local address"
    for rep in reports:
        # Private RAM: every core wrote 0xa5000000|tile at the same address before any read.
        assert rep["private"] == 0xA5000000 | rep["tile"]
        # Shared RAM: every core sees every other core's slot.
        assert rep["shared_seen"] == n
        # Monotonic: successive reads strictly increase.
        assert rep["monotonic"] == 1
        # Common: core 0 stamped t_go, then signalled; tile i saw the signal, then stamped
        # t_seen; core 0 saw tile i done, then stamped t_end. One counter means order holds.
        assert rep["t_go"] < rep["t_seen"] < rep["t_end"]
    # The counter counts simulated cycles from reset.
    assert reports[0]["t_end"] < r.cycles


def test_trap_is_reported_not_hung(sim):
    r = sim.run(1, 1, "trap", max_cycles=2_000_000)
    assert r.exit_code == 3
    assert re.search(r"\*\*\* trap on tile 0: mcause=2 ", r.output), r.output


def test_timeout_ends_simulation(sim):
    r = sim.run(2, 1, "busy", max_cycles=20_000)
    assert r.exit_code == EXIT_TIMEOUT
    assert "timeout" in r.stderr
    assert r.cycles == 20_000


def _children(pid):
    """Processes whose parent is ``pid`` (from /proc)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigterm_stops_the_running_model(sim, tmp_path):
    """A script that calls stop_runs_on_sigterm() (every benchmark script) and is stopped with
    SIGTERM in the middle of a run takes its model with it: the model computing for ever
    ("busy") is gone when the script has exited, with the status of SIGTERM's SystemExit.
    Without the handler Python dies at once and leaves the model running, an orphan."""
    import signal
    import time

    model = sim.model(2, 1)
    image = sim.image(2, 1, "busy")
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\n"
        "from soc.simulation import SimModel, stop_runs_on_sigterm\n"
        "stop_runs_on_sigterm()\n"
        f"SimModel({model.output_dir!r}).run({image!r}, max_cycles=10**12)\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    vsim = []
    try:
        deadline = time.monotonic() + 60
        while not vsim and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            vsim = [
                k for k in _children(proc.pid) if os.path.basename(os.readlink(f"/proc/{k}/exe")) == "Vsim"
            ]
        assert vsim, "the model never started"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
        time.sleep(0.5)
        assert not _alive(vsim[0]), "the model outlived the script that ran it"
    finally:
        proc.kill()
        for k in vsim:
            if _alive(k):
                os.kill(k, signal.SIGKILL)


def test_generated_exports_describe_tiles(sim):
    model = sim.model(2, 2)
    cfg = model.config
    c = cfg["constants"]
    assert (c["mesh_x"], c["mesh_y"], c["n_tiles"]) == (2, 2, 4)
    mems = cfg["memories"]
    assert mems["tile_ram"]["base"] == 0x2000_0000
    assert mems["main_ram"]["base"] == 0x4000_0000
    tile_csr = mems["tile_csr"]["base"]
    for bank in ["tile", "timer0"]:
        assert tile_csr <= cfg["csr_bases"][bank] < tile_csr + mems["tile_csr"]["size"]
    for reg in ["tile_id", "tile_position", "tile_cycles", "timer0_uptime_cycles", "cores_release"]:
        assert reg in cfg["csr_registers"], reg
    assert c["timer0_interrupt"] != c["uart_interrupt"]
    csr_h = open(os.path.join(model.generated_dir, "csr.h")).read()
    assert "tile_id_read" in csr_h and "cores_release_write" in csr_h


def _sim_cli(*args):
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "boards", "sim.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (["--tiles", "5"], "does not form a mesh"),
        (["--tiles", "17"], "does not form a mesh"),
        (["--tiles", "65"], "must be 1 to 64"),
        (["--mesh", "9x1"], "each side must be 1 to 8"),
        (["--mesh", "2by2"], "expected XxY"),
        (["--tiles", "4", "--mesh", "2x1"], "does not match"),
        (["--ram-init", "/nonexistent.bin"], "no such file"),
        (["--app", "no_such_app"], "no such application"),
        (["--mem-banks", "3"], "expected 0 or a power of two"),
        (["--threads", "0"], "--threads must be >= 1"),
        (["--threads", "2", "--trace"], "--threads and --trace"),
    ],
)
def test_cli_rejects_bad_arguments(args, message):
    p = _sim_cli(*args)
    assert p.returncode == 2
    assert message in p.stderr


@pytest.mark.parametrize(
    "target, message",
    [
        (["sim", "TILES=1", "APP=hello"], "--args only applies to a benchmark program"),
        (["zephyr-sim", "TILES=4", "ZAPP=pthreadtest", "PROGRAM=x264"], "only apply"),
    ],
)
def test_make_passes_one_option_as_the_programs_arguments(target, message):
    """ARGS holding a single option (``-m10``) reaches the target as the value of its --args, not
    as an option of the target's own (argparse took ``--args -m10`` for a missing value): the
    target's own check of the arguments answers, before anything is built."""
    p = subprocess.run(["make", "-s", *target, "ARGS=-m10"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode != 0
    assert message in p.stderr and "expected one argument" not in p.stderr, p.stderr


def test_harness_rejects_bad_arguments(sim):
    model = sim.model(1, 1)
    p = subprocess.run([model.binary, "--max-cycles", "ten"], capture_output=True, text=True)
    assert p.returncode == 2 and "not a number" in p.stderr
    p = subprocess.run([model.binary, "--dir", "/nonexistent"], capture_output=True, text=True)
    assert p.returncode == 2 and "cannot enter" in p.stderr
    p = subprocess.run(
        [model.binary, "--trace", "x.vcd", "--dir", model.gateware_dir], capture_output=True, text=True
    )
    assert p.returncode == 2 and "without tracing" in p.stderr


def test_trace_writes_waveform(sim, tmp_path):
    model = build_model(1, 1, trace="1", log=lambda m: None)
    vcd = tmp_path / "hello.vcd"
    r = model.run(sim.image(1, 1, "hello"), max_cycles=2_000_000, trace=str(vcd))
    assert r.exit_code == 0
    head = vcd.read_text()[:4000]
    assert "$enddefinitions" in head or "$scope" in head
    assert "serial_source_valid" in head


@pytest.mark.slow
def test_threaded_model_runs_cycle_for_cycle(sim):
    """A model on two host threads (--threads) simulates the same cycles and prints the same."""
    single = sim.model(2, 1)
    threaded = build_model(2, 1, threads=2, log=lambda m: print(m, file=sys.stderr))
    assert threaded.threads == 2 and threaded.binary != single.binary
    image = sim.image(2, 1, "hello")
    a, b = single.run(image), threaded.run(image)
    assert a.exit_code == b.exit_code == 0
    assert (a.cycles, a.output) == (b.cycles, b.output)


def test_tile_blocks_run_cycle_for_cycle(sim):
    """A model that verilates one tile module for every tile but tile 0 (soc/tile_block.py, the
    default of large meshes) simulates the same cycles and prints the same as the model with every
    tile flattened into the SoC's module, on programs that use every part of a tile: the NI's
    messages (pingpong), Subutai's objects (synctest), the channel port (chantest)."""
    flat = sim.model(2, 2)
    blocks = build_model(2, 2, tile_blocks=True, log=lambda m: print(m, file=sys.stderr))
    assert blocks.binary != flat.binary
    for name in ("hello", "pingpong", "synctest", "chantest"):
        image = sim.image(2, 2, name)
        a, b = blocks.run(image), flat.run(image)
        assert a.exit_code == b.exit_code == 0, name
        assert (a.cycles, a.output) == (b.cycles, b.output), name
    with open(blocks.stamp) as f:
        assert json.load(f)["tile_blocks"] is True
    with open(os.path.join(blocks.gateware_dir, "subutai_tile.v")) as f:
        assert "module subutai_tile" in f.read()
