#
# Registered tile uplink: cuts the combinational path from a core's caches through the memory
# crossbar's arbitration into a RAM bank, and keeps refill bursts at one word per cycle.
#
"""Registered Wishbone uplink between a tile and the memory crossbar.

Without it, a core's data cache drives the crossbar's address decoding, a bank's round-robin
arbiter and the bank's RAM address in one cycle: the critical path of the FPGA builds, and one that
grows with every master and bank. :class:`RegisteredUplink` registers every request before it
leaves the tile:

- **Single accesses** (stores, uncached I/O, anything that is not an incrementing read burst) are
  captured, issued downstream from the register on the next cycle, and acknowledged to the tile
  when the slave acknowledges them: one cycle more than a direct connection. Stores are not
  posted: a core's store has reached memory when the core goes on, so a release that follows it
  through another path (a NoC message to a Subutai engine) can never overtake it.
- **Incrementing read bursts** (``cti`` = 0b010, the cache refills) are run downstream by the
  uplink itself, one address per cycle to the end of the aligned ``line_words`` block, and the
  words are queued in a FIFO that the tile reads one per cycle as long as its addresses follow:
  two cycles more latency than a direct connection, the same throughput. A master that leaves the
  sequence (another address, a write, the end of its burst) gets its next access issued anew once
  the block's remaining words are drained.

With ``register_response`` a single access's answer and every burst beat are registered too (one
cycle more each; a refill keeps one word per cycle): then no combinational path crosses the
bridge in either direction. The boards put one in front of their L2 cache, whose tag lookup and
acknowledgement would otherwise reach through the shared SoC bus into the tiles' uplinks and back
into the L2's data write enables, and register the tiles' own uplinks' answers, which would
otherwise run from the shared bus arbiter's grant through a slave's acknowledgement into every
core's data cache or into the uplink's burst FIFO (docs/architecture.md, Boards).

With ``registered_feedback`` the uplink trusts its masters to follow the Wishbone B4 rules a
registered-feedback slave relies on: a request is held until it is acknowledged, and an
incrementing burst goes on from one address to the next until a beat with ``cti`` =
end-of-burst. Its acknowledgements then come from its own registers alone (the burst FIFO's
level, the state, the answer), never from the master's address or strobe: no combinational
path runs from a master through the uplink and back. The boards' L2 bridge uses it: its masters
are the tiles' uplinks, which keep those rules (a core's cache, which may leave a burst half
way, does not).
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream, wishbone

from gateware.memory import log2_exact

CTI_CLASSIC = 0b000
CTI_INCREMENT = 0b010
CTI_END = 0b111


class RegisteredUplink(LiteXModule):
    """``sink``: the tile's uplink (this module is its slave); ``source``: a master port of the
    memory crossbar. ``line_words``: 32-bit words of a cache line (a refill burst).
    ``keep_grant``: keep the bus cycle open for one idle cycle after each access (see ``hold``),
    right where each bank has its own arbiter; on one bus shared by every tile that idle cycle
    would be lost to all the others. ``register_response``: register a single access's answer
    and every burst beat; ``registered_feedback``: acknowledge from registers alone, for masters
    that keep Wishbone B4's rules (see above; needs ``register_response``)."""

    def __init__(
        self, sink, line_words=8, keep_grant=True, register_response=False, registered_feedback=False
    ):
        assert register_response or not registered_feedback
        assert line_words >= 2
        line_bits = log2_exact(line_words, "line_words")
        self.sink = sink
        self.source = source = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        adr = Signal(len(source.adr))
        we = Signal()
        sel = Signal(len(source.sel))
        dat_w = Signal(32)
        expect = Signal(len(source.adr))  # Address of the tile's next burst beat.
        remaining = Signal(line_bits + 1)  # Downstream beats still to be acknowledged.
        request = sink.cyc & sink.stb
        burst = ~sink.we & (sink.cti == CTI_INCREMENT)

        self.words = words = stream.SyncFIFO([("data", 32), ("err", 1)], line_words)
        # Whether the tile's current access is the burst's next beat: compared, or (with
        # registered feedback) known, since a master holding an incrementing burst presents it.
        follows = 1 if registered_feedback else request & ~sink.we & (sink.adr == expect)

        # After an access the bus cycle stays open (cyc without stb) for one idle cycle, so that the
        # core's next access, if it comes at once, keeps the bank's grant as it would without the
        # register: back-to-back stores to a line are not interleaved with every other core's.
        hold = Signal()

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act(
            "IDLE",
            source.cyc.eq(hold if keep_grant else 0),
            source.adr.eq(adr),
            NextValue(hold, 0),
            If(
                request,
                NextValue(adr, sink.adr),
                NextValue(we, sink.we),
                NextValue(sel, sink.sel),
                NextValue(dat_w, sink.dat_w),
                NextValue(expect, sink.adr),
                NextValue(remaining, line_words - sink.adr[:line_bits]),
                If(burst, NextState("BURST")).Else(NextState("SINGLE")),
            ),
        )
        # One access from the register; the slave's answer goes straight back to the tile, or
        # through a register (RESPOND) with register_response.
        single = [
            source.cyc.eq(1),
            source.stb.eq(1),
            source.adr.eq(adr),
            source.we.eq(we),
            source.sel.eq(sel),
            source.dat_w.eq(dat_w),
            source.cti.eq(CTI_CLASSIC),
        ]
        if register_response:
            answer = Signal(32)
            answer_err = Signal()
            fsm.act(
                "SINGLE",
                *single,
                If(
                    source.ack | source.err,
                    NextValue(answer, source.dat_r),
                    NextValue(answer_err, source.err),
                    NextState("RESPOND"),
                ),
            )
            # The master still holds the request the answer is for; with registered feedback
            # that is trusted, not checked.
            asked = 1 if registered_feedback else request
            fsm.act(
                "RESPOND",
                source.adr.eq(adr),
                sink.dat_r.eq(answer),
                sink.ack.eq(~answer_err & asked),
                sink.err.eq(answer_err & asked),
                NextValue(hold, 1),
                NextState("IDLE"),
            )
        else:
            fsm.act(
                "SINGLE",
                *single,
                sink.dat_r.eq(source.dat_r),
                sink.ack.eq(source.ack & request),
                sink.err.eq(source.err & request),
                If(
                    source.ack | source.err,
                    NextValue(hold, 1),
                    NextState("IDLE"),
                ),
            )
        # Downstream: the rest of the block, one address per cycle, into the FIFO; with
        # register_response each beat passes a register first (one cycle more latency, the same
        # throughput: the FIFO holds a whole block, so the beat in the register always fits).
        answered = Signal()  # A downstream beat is answered (BURST, DRAIN).
        beat = stream.Endpoint([("data", 32), ("err", 1)])
        take_beat = [beat.valid.eq(answered), beat.data.eq(source.dat_r), beat.err.eq(source.err)]
        if register_response:
            self.sync += take_beat
            beat_pending = beat.valid
        else:
            self.comb += take_beat
            beat_pending = 0
        self.comb += beat.connect(words.sink, omit={"ready"})
        downstream = [
            source.cyc.eq(remaining != 0),
            source.stb.eq(remaining != 0),
            source.adr.eq(adr),
            source.sel.eq(sel),
            source.cti.eq(Mux(remaining == 1, CTI_END, CTI_INCREMENT)),
            answered.eq(source.ack | source.err),
            # A burst stays inside its aligned block: only the word's index in it counts up
            # (no 30-bit adder; past the block's end the address is never used).
            If(
                answered,
                NextValue(adr[:line_bits], adr[:line_bits] + 1),
                NextValue(remaining, remaining - 1),
            ),
        ]
        # Upstream: the tile takes one queued word per cycle while its addresses follow.
        take = If(
            words.source.valid & follows,
            sink.ack.eq(~words.source.err),
            sink.err.eq(words.source.err),
            words.source.ready.eq(1),
            NextValue(expect[:line_bits], expect[:line_bits] + 1),
            If(
                (sink.cti != CTI_INCREMENT) | (expect[:line_bits] == line_words - 1),
                # The block's last word needs no draining: take the next access at once.
                If(
                    (remaining == 0) & ~beat_pending & (words.level == 1),
                    NextState("IDLE"),
                ).Else(
                    NextState("DRAIN"),
                ),
            ),
        )
        if not registered_feedback:
            take = take.Elif(~follows, NextState("DRAIN"))  # The tile left the block.
        fsm.act("BURST", *downstream, sink.dat_r.eq(words.source.data), take)
        # The tile left the block: finish the downstream burst, drop the words nobody will read.
        fsm.act(
            "DRAIN",
            *downstream,
            words.source.ready.eq(1),
            If((remaining == 0) & ~beat_pending & ~words.source.valid, NextState("IDLE")),
        )
