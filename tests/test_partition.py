"""A model cut into partitions (soc/partition.py): each partition a Verilator model in a process
of its own, exchanging the cut's nets every cycle. It is the same machine as the model in one
process: the same cycles and the same output, on programs that use every path across the cut
(uplinks to the memory banks, NoC links between partitions, the cores' release, the reset), over
shared memory and over MPI; a partition that dies ends the run with an error, never a hang."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from soc.partition import Net, Partitioning, PartitionError, ports_header
from soc.simulation import EXIT_PARTITION, build_model, mpi_flags

PROGRAMS = ("streamcluster", "bodytrack", "x264", "radix")
PROGRAM_ARGS = "-i test -s 1"


def _log(message):
    print(message, file=sys.stderr)


# The cut ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mesh, n", [((2, 2), 2), ((4, 4), 4), ((8, 8), 3), ((3, 2), 6), ((8, 8), 64)])
def test_every_net_has_one_driver_and_one_reader_across_the_cut(mesh, n):
    P = Partitioning(*mesh, n)
    assert sorted(i for k in range(n) for i in P.tiles(k)) == list(range(mesh[0] * mesh[1]))
    assert 0 in P.tiles(0)
    nets = P.nets()
    names = [net.name for net in nets]
    assert len(names) == len(set(names))
    for net in nets:
        assert net.readers and net.driver not in net.readers and 0 <= net.driver < n
        assert all(0 <= r < n for r in net.readers)
    # Every link between two partitions is cut, both ways (its flit forward, its ready back).
    crossing = [(a, b) for a, _, b in P.links() if P.partition_of(a) != P.partition_of(b)]
    for a, b in crossing:
        valid = next(net for net in nets if net.name == f"link_{a}_{b}_valid")
        ready = next(net for net in nets if net.name == f"link_{a}_{b}_ready")
        assert (valid.driver, valid.readers) == (P.partition_of(a), (P.partition_of(b),))
        assert (ready.driver, ready.readers) == (P.partition_of(b), (P.partition_of(a),))
    # Every remote tile's uplink and hold meet the leader.
    for i in P.remote_tiles():
        assert Net(f"tile{i}_uplink_cyc", 1, P.partition_of(i), (0,)) in nets
        assert Net(f"tile{i}_uplink_ack", 1, 0, (P.partition_of(i),)) in nets
        assert Net(f"tile{i}_cpu_reset", 1, 0, (P.partition_of(i),)) in nets
    # The reset reaches every partition.
    rst = [net for net in nets if net.name == "soc_rst"]
    assert rst == ([Net("soc_rst", 1, 0, tuple(range(1, n)))] if n > 1 else [])


def test_buffer_blocks_do_not_overlap_and_each_holds_its_drivers_nets():
    P = Partitioning(8, 8, 4)
    place, words = P.layout()
    blocks = P.blocks()
    for k, (start, size) in enumerate(blocks):
        assert start % 16 == 0
        if k + 1 < len(blocks):
            assert start + size <= blocks[k + 1][0]
    assert blocks[-1][0] + blocks[-1][1] <= words
    for name, (word, net) in place.items():
        start, size = blocks[net.driver]
        assert start <= word and word + net.words <= start + size, name


def test_each_partition_reads_what_it_is_sent():
    P = Partitioning(4, 4, 4)
    for k in range(P.n):
        for p in P.providers(k):
            assert k in P.readers(p)
        header = ports_header(P, k)
        assert f"#define PARTITION_INDEX {k}" in header
        assert f"0x{P.layout_id():016x}" in header
    # Another cut of the same mesh is another layout: partitions of different cuts refuse each other.
    assert Partitioning(4, 4, 2).layout_id() != P.layout_id()


def test_each_partition_checks_every_net_it_drives():
    # The harness compares these nets, as the partition settled them with what it received,
    # with those it published (the premise of the cycle's two steps).
    P = Partitioning(4, 4, 3)
    place, _ = P.layout()
    for k in range(1, P.n):
        header = ports_header(P, k)
        driven = [(w, net) for w, net in place.values() if net.driver == k]
        assert driven
        assert f"static const int N_PUBLISHED = {len(driven)};" in header
        for w, net in driven:
            assert f'{{{w}, {net.words}, "{net.name}"}},' in header


def test_the_uplink_registers_of_a_cut_model_are_the_leaders():
    # What a tile partition sends the leader reaches a register there, not the crossbar: every
    # instance's uplink leaves through a RegisteredUplink of the SoC, none of the tile module's.
    from gateware.uplink import RegisteredUplink
    from soc.simulation import SimSoC

    P = Partitioning(2, 2, 2)
    soc = SimSoC(2, 2, partitioning=P, tile_blocks=True)
    assert not any(isinstance(m, RegisteredUplink) for _, m in soc.tile_block.module._submodules)
    for i in range(1, 4):
        registered = getattr(soc, f"uplink{i}")
        assert isinstance(registered, RegisteredUplink)
    for i in P.remote_tiles():
        assert getattr(soc, f"uplink{i}").sink is soc.remote_uplinks[i]
    # The single model keeps the register in the tile module.
    single = SimSoC(2, 2, tile_blocks=True)
    assert any(isinstance(m, RegisteredUplink) for _, m in single.tile_block.module._submodules)


def test_a_leader_of_chosen_size_leaves_the_other_tiles_evenly_shared():
    P = Partitioning(8, 8, 3, leader_tiles=1)
    assert [P.tiles(k) for k in range(3)] == [[0], list(range(1, 32)), list(range(32, 64))]
    assert P.remote_tiles() == list(range(1, 64))
    for bad in (0, 63, 64):
        with pytest.raises(PartitionError, match="leader of"):
            Partitioning(8, 8, 3, leader_tiles=bad)


@pytest.mark.parametrize("n", [0, 5, -1])
def test_more_partitions_than_tiles_is_an_error(n):
    with pytest.raises(PartitionError, match="partitions of 4 tiles"):
        Partitioning(2, 2, n)


def test_model_options_a_cut_model_cannot_have_are_errors():
    with pytest.raises(ValueError, match="partitions"):
        build_model(2, 2, partitions=2, trace="1")
    with pytest.raises(ValueError, match="partitions"):
        build_model(2, 2, partitions=2, threads=2)


# The cut model runs the single model's cycles -----------------------------------------------------


@pytest.fixture(scope="module")
def cut_2x2():
    return build_model(2, 2, partitions=2, log=_log)


def _same_run(single, cut, image, max_cycles=30_000_000, **kwargs):
    a = single.run(image, max_cycles=max_cycles)
    b = cut.run(image, max_cycles=max_cycles, **kwargs)
    assert a.exit_code == 0, a.output[-2000:]
    assert b.exit_code == a.exit_code, b.stderr[-2000:]
    assert b.cycles == a.cycles
    assert b.output == a.output
    assert "partitions=" in b.stderr
    return b


def _syncstress_short(sim, x, y):
    key = (x, y, "syncstress_short")
    if key not in sim.images:
        model = sim.model(x, y)
        sim.images[key] = model.build_firmware(
            "syncstress",
            out_dir=f"{model.output_dir}/firmware/syncstress_short",
            extra_cflags="-DSTRESS_CYCLES=1000000u",
        )
    return sim.images[key]


@pytest.mark.parametrize("app", ["synctest", "prodcons", "chantest", "syncstress_short"])
def test_2x2_in_2_partitions_runs_the_same_cycles(sim, cut_2x2, app):
    image = _syncstress_short(sim, 2, 2) if app == "syncstress_short" else sim.image(2, 2, app)
    _same_run(sim.model(2, 2), cut_2x2, image)


@pytest.mark.parametrize("program", PROGRAMS)
def test_2x2_in_2_partitions_runs_the_programs_cycle_for_cycle(sim, cut_2x2, program):
    _same_run(sim.model(2, 2), cut_2x2, sim.image(2, 2, program, program_args=PROGRAM_ARGS))


@pytest.mark.skipif(mpi_flags() is None, reason="Open MPI is not installed (make setup)")
def test_2x2_in_2_partitions_as_an_mpi_job_runs_the_same_cycles(sim, cut_2x2):
    """The partitions as the ranks of an MPI job (mpirun on this host, Open MPI's transports)."""
    _same_run(sim.model(2, 2), cut_2x2, sim.image(2, 2, "synctest"), hosts=["localhost"])


def test_a_partition_that_dies_ends_the_run_with_an_error(sim, cut_2x2):
    """The leader sees its child die and stops with EXIT_PARTITION: no run waits forever."""
    image = _syncstress_short(sim, 2, 2)
    result = {}
    run = threading.Thread(target=lambda: result.update(r=cut_2x2.run(image, max_cycles=0)))
    run.start()
    child = os.path.join(os.path.dirname(os.path.dirname(cut_2x2.binary)), "obj_dir_part1", "Vsim")
    deadline = time.monotonic() + 60
    pid = None
    while pid is None and time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if os.path.realpath(f.read().split(b"\0")[0].decode()) == child:
                        pid = int(entry)
            except (OSError, ValueError):
                pass
        time.sleep(0.05)
    assert pid is not None, "the leader did not start its partition"
    os.kill(pid, signal.SIGKILL)
    run.join(60)
    assert not run.is_alive()
    assert result["r"].exit_code == EXIT_PARTITION
    assert "died" in result["r"].stderr


def test_a_partition_alone_refuses_to_run(cut_2x2):
    child = os.path.join(os.path.dirname(os.path.dirname(cut_2x2.binary)), "obj_dir_part1", "Vsim")
    p = subprocess.run([child], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "run partition 0" in p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
def test_4x4_in_partitions_runs_the_same_cycles(sim, n):
    """4x4 in 2 partitions (whole halves) and in 4 (a row each: every tile partition both sends
    to and reads from two others)."""
    cut = build_model(4, 4, partitions=n, log=_log)
    single = sim.model(4, 4)
    for app in ("synctest", "prodcons"):
        _same_run(single, cut, sim.image(4, 4, app))
    _same_run(single, cut, _syncstress_short(sim, 4, 4))
    for program in PROGRAMS:
        _same_run(single, cut, sim.image(4, 4, program, program_args=PROGRAM_ARGS))
