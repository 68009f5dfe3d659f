"""The memory system: line-interleaved main RAM banks behind the tiles' crossbar, refill bursts,
uncached I/O beside them, and the shared-bus configuration it replaces (``mem_banks=0``)."""

import os

import pytest

from gateware.build import BUILD_DIR
from gateware.memory import InterleavedMainRAM, bank_images, bank_of
from litex.soc.integration.soc import SoCRegion
from scripts.capture import parse_lines
from soc.simulation import build_model, default_mem_banks


def test_bank_images_hold_every_line_once_at_its_bank_address():
    size, n_banks = 4096, 4  # 128 lines of 8 words, 32 lines per bank
    words = list(range(1, 1000))  # 124.9 lines
    banks = bank_images(words, n_banks, size, line_bytes=32)
    # Rebuild the image the way the hardware addresses it: line -> (bank_of(line), line >> 2).
    rebuilt = []
    for line in range((len(words) + 7) // 8):
        bank, local = bank_of(line, 2, 7), line >> 2
        rebuilt += banks[bank][local * 8 : local * 8 + 8]
    assert rebuilt[: len(words)] == words and rebuilt[len(words) :] == [0] * (len(rebuilt) - len(words))
    assert sum(len(b) for b in banks) <= size // 4 + n_banks * 8


def test_bank_hash_spreads_consecutive_and_power_of_two_strided_lines():
    # Consecutive lines: every bank once in each group of n_banks lines.
    assert sorted(bank_of(l, 3, 15) for l in range(8)) == list(range(8))
    assert sorted(bank_of(l, 3, 15) for l in range(40, 48)) == list(range(8))
    # One slice per core at a power-of-two stride (8 KiB = 256 lines): the slices start in
    # different banks instead of all in bank 0.
    assert sorted(bank_of(c * 256, 3, 15) for c in range(8)) == list(range(8))
    assert bank_of(5, 0, 15) == 0


@pytest.mark.parametrize("n_banks,size,line_bytes", [(3, 1 << 20, 32), (4, 1000, 32), (4, 1 << 20, 24)])
def test_interleaved_ram_refuses_bad_geometry(n_banks, size, line_bytes):
    with pytest.raises(ValueError):
        InterleavedMainRAM(
            [], SoCRegion(origin=0x4000_0000, size=size), n_banks=n_banks, line_bytes=line_bytes
        )


def test_default_banks_one_per_tile_or_the_power_of_two_below():
    # Every mesh of 1x1 to 8x8 gets banks the interleaved RAM accepts, one per tile at most.
    for n in range(1, 65):
        banks = default_mem_banks(n)
        assert banks & (banks - 1) == 0 and n // 2 < banks <= n
    assert [default_mem_banks(n) for n in (1, 2, 3, 6, 8, 12, 16, 24, 48, 64)] == [
        1,
        2,
        2,
        4,
        8,
        8,
        16,
        16,
        32,
        64,
    ]
    with pytest.raises(ValueError):
        default_mem_banks(0)


def check_memstress(result, n):
    assert result.exit_code == 0, result.output[-2000:] + result.stderr
    records = parse_lines(result.output.splitlines())
    cores = [r for r in records if "tile" in r]
    assert [r["tile"] for r in cores] == list(range(n))
    for r in cores:
        assert r["own_errors"] == 0, r
        assert r["check_errors"] == 0, r
        assert r["adds"] > 0
    total = [r for r in records if "counter" in r]
    assert total and total[0]["counter"] == total[0]["expected"] == sum(r["adds"] for r in cores)


# 3x2: 6 tiles over 4 banks (default_mem_banks()), slow for its build of its own.
@pytest.mark.parametrize(
    "mesh",
    [(1, 1), (2, 2), (4, 2), pytest.param((3, 2), marks=pytest.mark.slow)],
    ids=["1x1", "2x2", "4x2", "3x2"],
)
def test_random_accesses_over_every_bank_read_back(sim, mesh):
    """Every core writes its words of a buffer spread over every bank with stores of every width,
    reads some back through refill bursts, mixes in uncached atomic adds, and after a barrier
    every core finds every word of every core."""
    x, y = mesh
    check_memstress(sim.run(x, y, "memstress", max_cycles=40_000_000), x * y)


@pytest.fixture(scope="module")
def shared_bus_model():
    return build_model(2, 1, mem_banks=0, log=lambda m: None)


def test_shared_bus_configuration_still_works(shared_bus_model):
    image = shared_bus_model.build_firmware("memstress")
    check_memstress(shared_bus_model.run(image, max_cycles=40_000_000), 2)


@pytest.fixture(scope="module")
def board_bus_model():
    """The boards' interconnect: registered uplinks on the one shared bus, bursts served by it."""
    return build_model(
        2,
        1,
        mem_banks=0,
        registered_uplinks=True,
        output_dir=os.path.join(BUILD_DIR, "sim_2x1_standard_mem0_registered"),
        log=lambda m: None,
    )


def test_registered_uplinks_on_the_shared_bus(board_bus_model, shared_bus_model):
    """Random accesses, bursts and uncached atomics through registered uplinks on one shared bus
    read back what was written, and a refill is one burst there too."""
    image = board_bus_model.build_firmware("memstress")
    check_memstress(board_bus_model.run(image, max_cycles=40_000_000), 2)
    latency = lambda r: r["refill_latency"]["cycles"] / r["refill_latency"]["lines"]
    assert latency(membw(board_bus_model)) < latency(membw(shared_bus_model)) - 3


def membw(model):
    result = model.run(model.build_firmware("membw"), max_cycles=20_000_000)
    assert result.exit_code == 0, result.output[-2000:] + result.stderr
    return {r["test"]: r for r in parse_lines(result.output.splitlines())}


def test_refill_bursts_and_parallel_banks(sim, shared_bus_model):
    """Cycle counts of the simulated RTL (deterministic): a refill is one burst, and the banks
    serve the private streams of several cores in parallel."""
    one = membw(sim.model(1, 1))
    four = membw(sim.model(2, 2))
    two_shared = membw(shared_bus_model)
    assert one["read_private"]["mem_banks"] == 1 and four["read_private"]["mem_banks"] == 4
    latency = lambda r: r["refill_latency"]["cycles"] / r["refill_latency"]["lines"]
    bpc = lambda r, t: r[t]["bytes"] / r[t]["cycles"]
    # A line of 8 words in one burst, not 8 single reads acknowledged every other cycle.
    assert latency(one) < latency(two_shared) - 5
    # Four cores streaming over their own slices move at least 3.5 times what one core does; the
    # shared bus acknowledges one word every other cycle whatever the number of cores.
    assert bpc(four, "read_private") > 3.5 * bpc(one, "read_private")
    assert bpc(four, "write_private") > 3.5 * bpc(one, "write_private")
    assert bpc(two_shared, "write_private") <= 2.0
