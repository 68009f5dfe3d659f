"""RegisteredUplink (gateware/uplink.py) in front of a bursting LiteX SRAM, in Migen's simulator:
random single accesses of every byte mask, refill bursts of every start and length, bursts left
half way, idle gaps; every read is checked against a reference memory, no acknowledge ever comes
unasked, and the cycle costs of a store and of a line refill are those the design promises. With
registered feedback, the masters keep Wishbone B4's rules, and no combinational path runs from a
master's signals to the uplink's answers."""

import random

import pytest
from migen import Module, run_simulation, passive
from litex.soc.interconnect import wishbone

from gateware.memory import RegisteredSRAM
from gateware.netlist import combinational_cone
from gateware.uplink import RegisteredUplink, CTI_CLASSIC, CTI_INCREMENT, CTI_END

LINE_WORDS = 8
WORDS = 256


class Bench(Module):
    """The bridge in front of an SRAM that serves bursts (as the simulated SoC's RAMs) or only
    classic cycles (as LiteX's L2 cache on the boards), or of a :class:`RegisteredSRAM` (the
    boards' BIOS ROM and SRAM: classic cycles, answers registered)."""

    def __init__(
        self, register_response=False, bursting=True, registered_feedback=False, registered_ram=False
    ):
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.submodules.uplink = RegisteredUplink(
            self.bus,
            line_words=LINE_WORDS,
            register_response=register_response,
            registered_feedback=registered_feedback,
        )
        ram_cls = RegisteredSRAM if registered_ram else wishbone.SRAM
        self.submodules.ram = ram_cls(
            WORDS * 4,
            bus=wishbone.Interface(
                data_width=32, address_width=32, addressing="word", bursting=bursting and not registered_ram
            ),
        )
        self.comb += self.uplink.source.connect(self.ram.bus)


def transfer(bus, adr, we=0, dat=0, sel=0xF, cti=CTI_CLASSIC):
    """One access; returns (data, cycles until its acknowledge). cyc stays up afterwards: the
    next call (or idle()) decides."""
    yield bus.adr.eq(adr)
    yield bus.we.eq(we)
    yield bus.dat_w.eq(dat)
    yield bus.sel.eq(sel)
    yield bus.cti.eq(cti)
    yield bus.cyc.eq(1)
    yield bus.stb.eq(1)
    yield
    cycles = 1
    while not (yield bus.ack):
        assert not (yield bus.err)
        yield
        cycles += 1
    return (yield bus.dat_r), cycles


def idle(bus, n):
    yield bus.cyc.eq(0)
    yield bus.stb.eq(0)
    for _ in range(n):
        yield


def merge(old, dat, sel):
    mask = sum(0xFF << (8 * i) for i in range(4) if sel >> i & 1)
    return (old & ~mask) | (dat & mask)


def random_program(seed, n, leave_bursts=True):
    """Random accesses; with ``leave_bursts`` False the master keeps Wishbone B4's rules: every
    burst runs to its end-of-burst beat."""
    rng = random.Random(seed)
    ops = []
    for _ in range(n):
        kind = rng.choice(["read", "write", "write", "burst", "burst", "idle"])
        if kind == "read":
            ops.append(("read", rng.randrange(WORDS)))
        elif kind == "write":
            ops.append(("write", rng.randrange(WORDS), rng.getrandbits(32), rng.randrange(1, 16)))
        elif kind == "burst":
            start = rng.randrange(WORDS - 2 * LINE_WORDS)
            if rng.random() < 0.5:
                start -= start % LINE_WORDS  # A cache refill: an aligned line.
                length = LINE_WORDS
            else:
                length = rng.randrange(1, 2 * LINE_WORDS)  # Any start, up to two lines.
            # Some bursts are left half way without their last beat (another access follows).
            leave = leave_bursts and rng.random() < 0.25 and length > 1
            ops.append(("burst", start, length, leave))
        else:
            ops.append(("idle", rng.randrange(1, 4)))
    return ops


@pytest.mark.parametrize(
    "register_response,bursting,feedback,registered_ram",
    [
        (False, True, False, False),
        (True, True, False, False),
        (True, False, False, False),
        (True, True, True, False),
        (True, False, True, False),
        (True, False, False, True),
        (False, False, False, True),
    ],
    ids=[
        "direct",
        "registered",
        "registered-classic-slave",
        "feedback",
        "feedback-classic-slave",
        "registered-sram",
        "direct-registered-sram",
    ],
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_accesses_match_a_reference_memory(
    seed, register_response, bursting, feedback, registered_ram
):
    dut = Bench(register_response, bursting, registered_feedback=feedback, registered_ram=registered_ram)
    reference = [0] * WORDS
    errors = []
    content = []

    def master():
        for op in random_program(seed, 300, leave_bursts=not feedback):
            if op[0] == "read":
                data, _ = yield from transfer(dut.bus, op[1])
                if data != reference[op[1]]:
                    errors.append((op, data, reference[op[1]]))
            elif op[0] == "write":
                _, adr, dat, sel = op
                yield from transfer(dut.bus, adr, we=1, dat=dat, sel=sel)
                reference[adr] = merge(reference[adr], dat, sel)
            elif op[0] == "burst":
                _, start, length, leave = op
                beats = length - 1 if leave else length
                for k in range(beats):
                    last = k == length - 1
                    data, _ = yield from transfer(dut.bus, start + k, cti=CTI_END if last else CTI_INCREMENT)
                    if data != reference[start + k]:
                        errors.append((op, k, data, reference[start + k]))
            else:
                yield from idle(dut.bus, op[1])
        yield from idle(dut.bus, 2 * LINE_WORDS)
        for a in range(WORDS):
            content.append((yield dut.ram.mem[a]))

    @passive
    def monitor():
        while True:
            if (yield dut.bus.ack) and not ((yield dut.bus.cyc) and (yield dut.bus.stb)):
                errors.append("acknowledge without a request")
            yield

    run_simulation(dut, [master(), monitor()])
    assert errors == []
    # And the RAM holds exactly what was written.
    assert content == reference


@pytest.mark.parametrize(
    "register_response,feedback",
    [(False, False), (True, False), (True, True)],
    ids=["direct", "registered", "feedback"],
)
def test_cycle_costs_of_a_store_and_of_a_refill(register_response, feedback):
    dut = Bench(register_response, registered_feedback=feedback)
    costs = {}

    def master():
        _, costs["store"] = yield from transfer(dut.bus, 5, we=1, dat=0x1234)
        yield from idle(dut.bus, 4)
        start = 2 * LINE_WORDS
        total = 0
        for k in range(LINE_WORDS):
            _, c = yield from transfer(
                dut.bus, start + k, cti=CTI_END if k == LINE_WORDS - 1 else CTI_INCREMENT
            )
            total += c
        costs["refill"] = total
        yield from idle(dut.bus, 4)

    run_simulation(dut, master())
    # Captured, issued from the register, acknowledged by the SRAM: 3 cycles (2 unregistered),
    # one more through the response register.
    assert costs["store"] == (4 if register_response else 3)
    # 8 words: 3 cycles to the first (4 through the beat register), then one word per cycle.
    assert costs["refill"] == LINE_WORDS + 3 + (1 if register_response else 0)


@pytest.mark.parametrize("feedback", [False, True], ids=["registered", "feedback"])
def test_registered_feedback_answers_from_registers_alone(feedback):
    sink = wishbone.Interface(data_width=32, address_width=32, addressing="word")
    uplink = RegisteredUplink(
        sink, line_words=LINE_WORDS, register_response=True, registered_feedback=feedback
    )
    cone = combinational_cone(uplink.get_fragment(), [sink.ack, sink.err, sink.dat_r])
    master = {sink.adr, sink.cyc, sink.stb, sink.we, sink.cti, sink.sel, sink.dat_w}
    if feedback:
        # Nothing of the master's: the bridge's answers leave it from its registers.
        assert cone & master == set()
    else:
        # Without it the answers follow the master's request (and a burst its address).
        assert {sink.adr, sink.cyc, sink.stb} <= cone


def test_registered_sram_answers_from_its_registers_one_cycle_later():
    """The boards' BIOS ROM and SRAM: 3 cycles a read or a write (LiteX's SRAM: 2), and neither
    the block RAM's read data nor the request reaches the answer without a register."""
    bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
    ram = RegisteredSRAM(WORDS * 4, bus=bus, init=[0x1000 + a for a in range(WORDS)])
    costs = {}

    def master():
        costs["read"] = yield from transfer(bus, 7)
        costs["write"] = yield from transfer(bus, 9, we=1, dat=0xCAFE, sel=0b0011)
        costs["again"] = yield from transfer(bus, 9)
        yield from idle(bus, 2)

    run_simulation(ram, master())
    assert costs["read"] == (0x1007, 3)
    assert costs["write"][1] == 3
    assert costs["again"] == ((0x1009 & ~0xFFFF) | 0xCAFE, 3)
    fresh = RegisteredSRAM(WORDS * 4)
    assert combinational_cone(fresh.get_fragment(), [fresh.bus.ack, fresh.bus.dat_r]) == set()
    # One port, the bus's: no CSR-mapped access to it (LiteX's SoC would add a second port).
    assert fresh.get_memories() == [] and len(fresh.mem.ports) == 1
