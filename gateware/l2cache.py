#
# Shared L2 cache of the boards' SDRAM: LiteX's write-back cache, its block RAM writes registered.
#
"""Write-back L2 cache between the SoC bus and LiteDRAM.

LiteX's :class:`litex.soc.interconnect.wishbone.Cache` compares the tag it has just read and, on a
write hit, writes the data memory in the same cycle: the block RAM's output, the comparator, the
acknowledgement and the byte enables of every data block RAM form one path. With the 32 KiB L2 of
a 4-tile ULX3S 85F build its data is sixteen DP16KD spread over the die, and that path was the
critical path of every 1-, 2- and 4-tile build (16.4 to 21.5 ns at a 20 ns clock;
docs/architecture.md, Boards). :class:`L2Cache` is the same cache (same layout, same refill and
eviction, the same line of the LiteDRAM port's width) with two changes, each a state between a
decision and the block RAM write it leads to: a write hit is acknowledged and written in the cycle
after the comparison (``WRITE_HIT``), and a miss writes its new tag in the cycle after the
comparison, or after the eviction's acknowledgement (``WRITE_TAG``). So the write enables of the
data memory and of the tag memory come from the state alone. On an 8-tile build the tag block RAM
sat 85 columns away from the FSM beside the SDRAM controller (the block RAMs are 95 % used), and
tag -> miss -> tag write enable took 25.2 ns. A write hit and a miss each cost one cycle more;
read hits are unchanged.

The data memory is held in lanes of ``lane_bits`` (16) with a write enable per byte, where
LiteX's SoC splits it into one memory per byte (``l2_cache_full_memory_we``). On an ECP5 a
byte lane of a 512-line (8 KiB) L2 fills a quarter of a DP16KD: sixteen block RAMs for 8 KiB.
A 16-bit lane maps to one DP16KD port in its 1024 x 18 mode with its two byte enables and
write-through read, so the same L2 takes eight (a 16 KiB one too). The whole line as one
memory would take four 36-bit PDPW16KD, but that pseudo-dual-port mode cannot return a word
written in the same cycle, and yosys then emulates the write-through read with 144 registers
and a multiplexer on the read data. From 2,048 lines (32 KiB) on, a byte lane fills a DP16KD
and both splits take sixteen.

Why not LiteX's as is: its FSM is one constructor with no hook for a state between the tag test
and the write. The rest follows it line for line.
"""

from migen import *
from migen.genlib.record import Record, layout_len

from litex.gen import LiteXModule
from litex.gen.genlib.misc import split, displacer, chooser

from gateware.memory import log2_exact


class L2Cache(LiteXModule):
    """``cachesize``: 32-bit words of data; ``master``: the SoC side (32-bit words),
    ``slave``: the memory side, whose data width (a multiple of 32) is the line;
    ``lane_bits``: width of each data memory (a whole number of bytes dividing the line)."""

    def __init__(self, cachesize, master, slave, reverse=False, lane_bits=16):
        self.master = master
        self.slave = slave

        # # #

        dw_from = len(master.dat_r)
        dw_to = len(slave.dat_r)
        if dw_to < dw_from or dw_to % dw_from:
            raise ValueError(
                f"L2Cache: the line ({dw_to} bits) must be a multiple of the master's words ({dw_from} bits)"
            )

        # Address split: TAG | LINE NUMBER | LINE OFFSET.
        offsetbits = log2_exact(dw_to // dw_from, "words per line")
        addressbits = len(slave.adr) + offsetbits
        linebits = log2_exact(cachesize, "cachesize") - offsetbits
        tagbits = addressbits - linebits
        adr_offset, adr_line, adr_tag = split(master.adr, offsetbits, linebits, tagbits)

        # Data memory: one line per word, in lanes of ``lane_bits`` with a write enable per byte.
        if lane_bits % 8 or dw_to % lane_bits:
            raise ValueError(
                f"L2Cache: lanes of {lane_bits} bits do not divide the line ({dw_to} bits) in whole bytes"
            )
        data_port = Record([("adr", linebits), ("dat_r", dw_to), ("dat_w", dw_to), ("we", dw_to // 8)])
        for i in range(dw_to // lane_bits):
            mem = Memory(lane_bits, 2**linebits, name=f"data_mem_lane{i}")
            port = mem.get_port(write_capable=True, we_granularity=8)
            self.specials += mem, port
            bits, byte_ens = (
                slice(i * lane_bits, (i + 1) * lane_bits),
                slice(i * lane_bits // 8, (i + 1) * lane_bits // 8),
            )
            self.comb += [
                port.adr.eq(data_port.adr),
                port.dat_w.eq(data_port.dat_w[bits]),
                port.we.eq(data_port.we[byte_ens]),
                data_port.dat_r[bits].eq(port.dat_r),
            ]

        write_from_slave = Signal()
        write_from_master = Signal()
        if adr_offset is None:
            adr_offset_r = None
        else:
            adr_offset_r = Signal(offsetbits, reset_less=True)
            self.sync += adr_offset_r.eq(adr_offset)

        self.comb += [
            data_port.adr.eq(adr_line),
            If(
                write_from_slave,
                data_port.dat_w.eq(slave.dat_r),
                data_port.we.eq(Replicate(1, dw_to // 8)),
            ).Else(
                data_port.dat_w.eq(Replicate(master.dat_w, dw_to // dw_from)),
                If(
                    write_from_master,
                    displacer(master.sel, adr_offset, data_port.we, 2**offsetbits, reverse=reverse),
                ),
            ),
            slave.dat_w.eq(data_port.dat_r),
            slave.sel.eq(2 ** (dw_to // 8) - 1),
            chooser(data_port.dat_r, adr_offset_r, master.dat_r, reverse=reverse),
        ]

        # Tag memory.
        tag_layout = [("tag", tagbits), ("dirty", 1)]
        tag_mem = Memory(layout_len(tag_layout), 2**linebits)
        tag_port = tag_mem.get_port(write_capable=True)
        self.specials += tag_mem, tag_port
        tag_do = Record(tag_layout)
        tag_di = Record(tag_layout)
        self.comb += [
            tag_do.raw_bits().eq(tag_port.dat_r),
            tag_port.dat_w.eq(tag_di.raw_bits()),
            tag_port.adr.eq(adr_line),
            tag_di.tag.eq(adr_tag),
            slave.adr.eq(Cat(adr_line, tag_do.tag)),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE", If(master.cyc & master.stb, NextState("TEST_HIT")))
        fsm.act(
            "TEST_HIT",
            If(
                tag_do.tag == adr_tag,
                If(
                    master.we,
                    NextState("WRITE_HIT"),
                ).Else(
                    master.ack.eq(1),
                    NextState("IDLE"),
                ),
            ).Else(If(tag_do.dirty, NextState("EVICT")).Else(NextState("WRITE_TAG"))),
        )
        # The hit's write, from the state alone: the master holds its request until acknowledged.
        fsm.act(
            "WRITE_HIT",
            master.ack.eq(1),
            write_from_master.eq(1),
            tag_di.dirty.eq(1),
            tag_port.we.eq(1),
            NextState("IDLE"),
        )
        fsm.act(
            "EVICT", slave.stb.eq(1), slave.cyc.eq(1), slave.we.eq(1), If(slave.ack, NextState("WRITE_TAG"))
        )
        # A miss writes the new line's tag first (it sets the slave address of the refill), from
        # the state alone: neither the comparison nor the memory's acknowledgement reaches the
        # tag memory's write enable.
        fsm.act("WRITE_TAG", tag_port.we.eq(1), NextState("REFILL"))
        fsm.act(
            "REFILL",
            slave.stb.eq(1),
            slave.cyc.eq(1),
            slave.we.eq(0),
            If(
                slave.ack,
                write_from_slave.eq(1),
                NextState("TEST_HIT"),
            ),
        )
