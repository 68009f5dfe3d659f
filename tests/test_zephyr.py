"""Zephyr on every tile (zephyr-app/): one kernel per tile from one image, the PThreads library on
Zephyr threads with both backends, and the project's programs built unchanged as Zephyr apps.

The builds need a Zephyr 4.x tree (ZEPHYR_BASE); without one those tests are skipped, with the
reason in pytest's summary. The devicetree generator and the command line are tested always.
"""

import hashlib
import json
import os
import re
import subprocess
import sys

import pytest

from scripts.capture import parse_lines
from soc.firmware import firmware_apps

from gateware.build import ROOT

GEN_DTSI = os.path.join(ROOT, "zephyr-app", "scripts", "gen_soc_dtsi.py")
ZEPHYR_PY = os.path.join(ROOT, "boards", "zephyr.py")


class ZephyrCache:
    """Zephyr images built once per session for the shared Verilator models."""

    def __init__(self, sim):
        self.sim = sim
        self.images = {}

    def run(
        self,
        mesh_x,
        mesh_y,
        app,
        backend="subutai",
        program=None,
        program_args="",
        conf=(),
        max_cycles=200_000_000,
    ):
        from soc.zephyr import build_app

        model = self.sim.model(mesh_x, mesh_y)
        key = (mesh_x, mesh_y, app, backend, program, program_args, tuple(conf))
        if key not in self.images:
            out_dir = None
            if conf:
                # The settings' names, and a digest of their values: one directory per image.
                tag = "_".join(c.split("=")[0].replace("CONFIG_SUBUTAI_", "").lower() for c in conf)
                digest = hashlib.sha1("\n".join(conf).encode()).hexdigest()[:8]
                out_dir = os.path.join(model.output_dir, "zephyr", f"{app}-{backend}-{tag}-{digest}")
            self.images[key] = build_app(
                model,
                app,
                backend,
                program,
                program_args,
                conf,
                out_dir=out_dir,
                log=lambda m: print(m, file=sys.stderr),
            )
        return model.run(self.images[key], max_cycles=max_cycles)


@pytest.fixture(scope="session")
def zephyr(sim):
    return ZephyrCache(sim)


# Always: the board's devicetree follows the SoC ------------------------------------------------------


@pytest.mark.parametrize("mesh", [(2, 2), (4, 2)], ids=["2x2", "4x2"])
def test_devicetree_generated_from_csr_json(sim, tmp_path, mesh):
    model = sim.model(*mesh)
    csr = model.config
    out = tmp_path / "subutai_soc.dtsi"
    subprocess.run([sys.executable, GEN_DTSI, model.csr_json, str(out), "--code-size", "0x60000"], check=True)
    dts = out.read_text()

    def node(label):
        m = re.search(rf"\b{label}: [^{{]+\{{(.*?)\n\t\t?\}};", dts, re.S)
        assert m, f"no node {label}"
        return m.group(1)

    regs = csr["csr_registers"]
    const = csr["constants"]
    uart = node("uart0")
    assert f"0x{regs['uart_rxtx']['addr']:08x} 0x4" in uart
    assert f"interrupts = <{const['uart_interrupt']} 0>" in uart
    timer = node("timer0")
    assert f"0x{regs['timer0_uptime_cycles']['addr']:08x} 0x8" in timer
    assert f"interrupts = <{const['timer0_interrupt']} 0>" in timer
    ni = node("ni0")
    assert f"interrupts = <{const['ni_interrupt']} 0>" in ni
    assert f"mesh-x = <{mesh[0]}>" in ni and f"mesh-y = <{mesh[1]}>" in ni
    assert f"interrupts = <{const['subutai_interrupt']} 0>" in node("engine0")
    tile_ram, main_ram = csr["memories"]["tile_ram"], csr["memories"]["main_ram"]
    assert f"reg = <0x{tile_ram['base']:08x} 0x{tile_ram['size']:x}>" in node("tile_ram")
    assert f"reg = <0x{main_ram['base']:08x} 0x60000>" in node("code")
    shared = node("shared_ram")
    assert f"0x{main_ram['base'] + 0x60000:08x} 0x{main_ram['size'] - 0x60000:x}" in shared
    assert f"clock-frequency = <{const['config_clock_frequency']}>" in dts


def test_devicetree_generator_errors(sim, tmp_path):
    model = sim.model(2, 2)
    too_big = subprocess.run(
        [sys.executable, GEN_DTSI, model.csr_json, str(tmp_path / "x.dtsi"), "--code-size", "0x100000"],
        capture_output=True,
        text=True,
    )
    assert too_big.returncode != 0 and "leaves no shared RAM" in too_big.stderr
    not_soc = tmp_path / "csr.json"
    not_soc.write_text(json.dumps({"csr_bases": {}, "csr_registers": {}, "constants": {}, "memories": {}}))
    wrong = subprocess.run(
        [sys.executable, GEN_DTSI, str(not_soc), str(tmp_path / "y.dtsi"), "--code-size", "0x60000"],
        capture_output=True,
        text=True,
    )
    assert wrong.returncode != 0 and "not a Subutai SoC build" in wrong.stderr
    # The code size has one source (SUBUTAI_CODE_SIZE of cmake/subutai.cmake): no default here.
    missing = subprocess.run(
        [sys.executable, GEN_DTSI, model.csr_json, str(tmp_path / "z.dtsi")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "--code-size" in missing.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tiles", "17"], "tiles"),
        (["--tiles", "4", "--app", "nosuchapp"], "no such application"),
        (["--tiles", "4", "--app", "program", "--program", "nosuch"], "--program"),
        (["--tiles", "4", "--app", "program", "--program", "syncstress"], "runs bare metal only"),
        (["--tiles", "4", "--app", "pthreadtest", "--program", "x264"], "only apply"),
        (["--tiles", "4", "--conf", "SUBUTAI=y"], "CONFIG_NAME=VALUE"),
    ],
)
def test_cli_errors(args, message):
    r = subprocess.run([sys.executable, ZEPHYR_PY, *args], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr


def test_bare_metal_applications_are_refused_under_zephyr():
    """An application of firmware/apps/ that uses the bare-metal runtime is refused by name
    before any build (it would stop at the link); the ones written for both runtimes are not."""
    from soc.zephyr import ZEPHYR_FIRMWARE_APPS, build_app

    with pytest.raises(ValueError, match="'syncstress' \\(an application that runs bare metal only\\)"):
        build_app(None, "program", "subutai", "syncstress")
    with pytest.raises(ValueError, match="no such program"):
        build_app(None, "program", "subutai", "nosuch")
    assert set(ZEPHYR_FIRMWARE_APPS) <= set(firmware_apps())


def test_missing_zephyr_is_a_clear_error():
    env = {k: v for k, v in os.environ.items() if k != "ZEPHYR_BASE"}
    r = subprocess.run([sys.executable, ZEPHYR_PY, "--tiles", "4"], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "ZEPHYR_BASE is not set" in r.stderr


# With Zephyr: boot, primitives, programs ----------------------------------------------------------


@pytest.mark.zephyr
@pytest.mark.parametrize("mesh", [(2, 2), (4, 2)], ids=["2x2", "4x2"])
def test_every_tile_boots_its_kernel(zephyr, mesh):
    r = zephyr.run(*mesh, "hello")
    n = mesh[0] * mesh[1]
    assert r.exit_code == 0, r.output
    for tile in range(n):
        assert f"Hello from tile {tile} of {n} (subutai_litex)" in r.output
    assert f"hellos: {n}" in r.output


def _pthreadtest_ok(r, groups):
    """Every check group of firmware/apps/pthreadtest (the bare-metal tests run the same source)
    passed."""
    assert r.exit_code == 0, r.output[-3000:]
    found = dict(re.findall(r"^([a-z ]+): (ok|FAILED)$", r.output, re.M))
    assert set(found) == set(groups), r.output[-3000:]
    assert all(result == "ok" for result in found.values()), r.output[-3000:]
    assert "pthreadtest: 0 failures" in r.output


def _placement(output):
    """Cores of pthreadtest's unpinned threads (its placement group): two threads pinned on core
    cores/2 stay alive while one unpinned thread per core is created after them."""
    m = re.search(r"^placement:((?: \d+)*)$", output, re.M)
    assert m, output[-2000:]
    return [int(c) for c in m.group(1).split()]


@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", "swonly"])
@pytest.mark.parametrize("mesh, per_core", [((2, 2), 3), ((4, 2), 2)], ids=["2x2-3", "4x2-2"])
def test_every_primitive_several_threads_per_tile(zephyr, pthreadtest_groups, backend, mesh, per_core):
    r = zephyr.run(*mesh, "pthreadtest", backend, conf=[f'CONFIG_SUBUTAI_APP_ARGS="{per_core}"'])
    _pthreadtest_ok(r, pthreadtest_groups)
    assert f"{mesh[0] * mesh[1]} cores, {mesh[0] * mesh[1] * per_core} threads" in r.output


@pytest.mark.slow
@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", "swonly"])
@pytest.mark.parametrize(
    "conf, per_core",
    [(["CONFIG_SUBUTAI_REPLY_SPIN_CYCLES=0"], 3), ([], 1)],
    ids=["sleep-at-once", "alone-spins"],
)
def test_spin_then_block_paths(zephyr, pthreadtest_groups, backend, conf, per_core):
    """Every primitive through both ends of spin-then-block: with no spin budget and three
    threads per tile, every wait that is not answered at once sleeps (through the window's
    give-up, the reply interrupt when other threads of the tile wait, interrupts let in while
    spinning); with one thread per tile every wait spins until its answer, letting interrupts in
    meanwhile."""
    r = zephyr.run(2, 2, "pthreadtest", backend, conf=conf + [f'CONFIG_SUBUTAI_APP_ARGS="{per_core}"'])
    _pthreadtest_ok(r, pthreadtest_groups)
    assert f"4 cores, {4 * per_core} threads" in r.output


@pytest.mark.slow
@pytest.mark.zephyr
def test_least_loaded_placement(zephyr, pthreadtest_groups):
    """Least-loaded placement fills the emptiest cores first, the lowest number first: with the
    main thread on core 0 and two threads pinned on core 2, the unpinned ones go to 1, 3, then 0
    and 1 (every core then holds one thread but core 2)."""
    r = zephyr.run(2, 2, "pthreadtest", "subutai", conf=["CONFIG_SUBUTAI_PLACEMENT_LEAST_LOADED=y"])
    _pthreadtest_ok(r, pthreadtest_groups)
    assert _placement(r.output) == [1, 3, 0, 1]


@pytest.mark.slow
@pytest.mark.zephyr
def test_round_robin_placement(zephyr, pthreadtest_groups):
    """Round-robin placement (the default) takes the cores in turn whatever they hold."""
    r = zephyr.run(2, 2, "pthreadtest", "subutai")
    _pthreadtest_ok(r, pthreadtest_groups)
    cores = _placement(r.output)
    assert len(cores) == 4 and sorted(cores) == [0, 1, 2, 3]
    assert all((b - a) % 4 == 1 for a, b in zip(cores, cores[1:])), cores


def _checksum(output, program):
    m = re.search(rf"^{program}: checksum (0x[0-9a-f]{{8}})$", output, re.M)
    assert m, output[-2000:]
    return m.group(1)


@pytest.mark.slow
@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", "swonly"])
@pytest.mark.parametrize("program", ["streamcluster", "bodytrack", "x264", "radix", "ep"])
def test_programs_match_bare_metal(sim, zephyr, program, backend):
    args = "-i test"
    bare = sim.run(2, 2, program, backend, args)
    assert bare.exit_code == 0
    r = zephyr.run(2, 2, "program", backend, program, args)
    assert r.exit_code == 0, r.output[-2000:]
    assert _checksum(r.output, program) == _checksum(bare.output, program)
    runs = [rec for rec in parse_lines(r.output.splitlines()) if rec.get("event") == "run"]
    assert len(runs) == 1 and runs[0]["backend"] == backend and runs[0]["tiles"] == 4


@pytest.mark.slow
@pytest.mark.zephyr
def test_program_of_ones_own_under_zephyr(sim, tmp_path):
    """A PThreads program outside the tree (--program-dir) builds as a Zephyr application as the
    benchmark programs do and runs under the harness."""
    from soc.zephyr import build_app

    program = os.path.join(os.path.dirname(__file__), "data", "programs", "counting")
    model = sim.model(2, 1)
    image = build_app(
        model,
        "program",
        "subutai",
        program_dir=program,
        out_dir=str(tmp_path / "build"),
        log=lambda m: print(m, file=sys.stderr),
    )
    r = model.run(image, max_cycles=50_000_000)
    assert r.exit_code == 0, r.output[-2000:]
    assert "counted: 200" in r.output
    runs = [rec for rec in parse_lines(r.output.splitlines()) if rec.get("event") == "run"]
    assert len(runs) == 1 and runs[0]["program"] == "counting" and runs[0]["exit"] == 0


@pytest.mark.slow
@pytest.mark.zephyr
def test_program_with_more_threads_than_cores(sim, zephyr):
    """Several threads per core: the checksum does not depend on the thread count."""
    bare = sim.run(2, 2, "x264", "subutai", "-i test")
    r = zephyr.run(2, 2, "program", "subutai", "x264", "-i test -t 8")
    assert r.exit_code == 0, r.output[-2000:]
    assert _checksum(r.output, "x264") == _checksum(bare.output, "x264")
    run = next(rec for rec in parse_lines(r.output.splitlines()) if rec.get("event") == "run")
    assert run["threads"] == 8


@pytest.mark.slow
@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", "swonly"])
def test_prodcons_unchanged(zephyr, backend):
    r = zephyr.run(2, 2, "program", backend, "prodcons")
    assert r.exit_code == 0, r.output[-2000:]
    records = parse_lines(r.output.splitlines())
    assert any(rec.get("backend") == backend for rec in records)


@pytest.mark.slow
@pytest.mark.zephyr
def test_zephyr_prodcons_results_are_reproduced():
    """The 2-tile prodcons of `make zephyr-bench`, rerun: its medians are those of
    results/zephyr_prodcons.csv (a change that moves them must commit the new results). A waiter
    alone on its core spins through the window for its grant, so the engine's hand-overs cost no
    interrupt and no context switch (a sleeping waiter took over 3,000 cycles)."""
    from scripts.experiments.framework import rerun
    from scripts.experiments.prodcons import latency_rows

    def medians(rows):
        return {
            (int(r["tiles"]), r["backend"], r["primitive"], r["case"]): int(float(r["median"])) for r in rows
        }

    from scripts.experiments.stamp import read_csv

    _, rows = read_csv(os.path.join(ROOT, "results", "zephyr_prodcons.csv"))
    committed = {k: v for k, v in medians(rows).items() if k[0] == 2}
    assert committed, "results/zephyr_prodcons.csv has no 2-tile rows: run `make zephyr-bench`"
    again = medians(latency_rows(parse_lines(rerun("prodcons", ["--tiles", "2", "--os", "zephyr"]))))
    assert again == committed
    for case in [("barrier", "wait_released"), ("cond", "wait_queued")]:
        assert again[(2, "subutai") + case] < 1000, again


@pytest.mark.slow
@pytest.mark.zephyr
@pytest.mark.parametrize("backend", ["subutai", "swonly"])
def test_kernel_path_costs(zephyr, backend):
    """The Zephyr costs app: every piece of a sleeping wait's path measured, in an order that
    holds on any build (a hand-off is a give, a block and a switch; a cold instruction cache only
    adds; the uncontended pair is a request to the engine under subutai)."""
    r = zephyr.run(2, 1, "costs", backend)
    assert r.exit_code == 0, r.output[-2000:]
    costs = {
        rec["what"]: rec["min"] for rec in parse_lines(r.output.splitlines()) if rec.get("program") == "costs"
    }
    assert len(costs) == 15 and all(v > 0 for v in costs.values()), costs
    switch = costs["context switch (k_yield to another thread and back, half)"]
    handoff = costs["hand-off: give to a waiting thread, block, until it runs"]
    assert costs["k_sem_give, no waiter"] < handoff and switch < handoff
    assert costs["context switch, kernel code not cached (half)"] >= switch
    assert costs["hand-off, kernel code not cached"] >= handoff
    assert costs["interrupt entry (own NoC message, send to handler)"] > 0
    pair = costs["pthread lock+unlock, uncontended"]
    assert pair > costs["pthread unlock"]


@pytest.mark.slow
@pytest.mark.zephyr
def test_zephyr_image_does_not_depend_on_build_directory(sim, tmp_path):
    """One application built in two directories: identical zephyr.bin and zephyr.elf (debug
    information included)."""
    from soc.zephyr import build_app

    model = sim.model(2, 2)
    images = [
        build_app(model, "hello", out_dir=str(tmp_path / d), log=lambda m: None) for d in ("a", "elsewhere/b")
    ]
    for suffix in ("bin", "elf"):
        files = [os.path.splitext(i)[0] + "." + suffix for i in images]
        with open(files[0], "rb") as a, open(files[1], "rb") as b:
            first, second = a.read(), b.read()
        assert first == second, suffix
    assert str(tmp_path).encode() not in second


@pytest.mark.zephyr
@pytest.mark.parametrize(
    "scenario", ["subutai.hello", pytest.param("subutai.pthreadtest.swonly", marks=pytest.mark.slow)]
)
def test_twister_runs_the_applications_on_the_simulated_board(sim, tmp_path, scenario):
    """Zephyr's twister builds an application's sample.yaml/testcase.yaml for subutai_litex and
    runs it on the Verilator model (the board's run target): it passes on its console check."""
    sim.model(2, 1)
    out = tmp_path / "twister"
    # -W: twister makes warnings errors; the Zephyr tree's own sources are not ours to judge.
    p = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "scripts", "zephyr_twister.py"),
            "--tiles",
            "2",
            "-s",
            scenario,
            "-W",
            "-O",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    report = json.load(open(out / "twister.json"))
    status = {s["name"].split("/")[-1]: s["status"] for s in report["testsuites"]}
    assert status == {scenario: "passed"}, status
