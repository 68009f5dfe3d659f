#
# Subutai port of a network interface: the core's synchronization requests, the tile's Subutai-HW
# engine, and their packets on the NoC's priority class.
#

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStatus, CSRField
from litex.soc.interconnect.csr_eventmanager import EventManager, EventSourceLevel

from gateware.noc.common import head_flit
from gateware.subutai import protocol as P
from gateware.subutai.engine import SubutaiEngine
from gateware.ni.subutai_window import SubutaiWindow
from gateware.fifo import stream_fifo

# Head-flit type of Subutai packets (opaque to the routers).
SUBUTAI_PACKET_TYPE = 0x53
# Payload words of a Subutai packet (TPDS'21 Fig. 8): sync id; op | core | thread; value.
SUBUTAI_PACKET_WORDS = 3

_REPLY_LAYOUT = [("sync_id", 32), ("op", 8), ("thread", 16), ("value", 32)]
_OUT_LAYOUT = [("dest", 8), ("sync_id", 32), ("op", 8), ("core", 8), ("thread", 16), ("value", 32)]


def _round_robin_merge(module, sinks, source):
    """Merge streams of one layout into ``source``, one transfer at a time, round-robin."""
    n = len(sinks)
    if n == 1:
        module.comb += sinks[0].connect(source)
        return
    grant = Signal(max=n)
    nxt = Signal(max=n)
    valids = Array(s.valid for s in sinks)
    module.comb += Case(grant, {i: sinks[i].connect(source) for i in range(n)})
    for i in range(n):
        others = [(i + k) % n for k in range(1, n)]
        # The first requester after i in round-robin order wins (later statements override).
        module.comb += If(grant == i, nxt.eq(i), *[If(sinks[j].valid, nxt.eq(j)) for j in reversed(others)])
    # Pass the grant on when the granted input is idle or has just transferred.
    module.sync += If(~valids[grant] | (source.valid & source.ready), grant.eq(nxt))


class SubutaiPort(LiteXModule):
    """Synchronization requests of a core, its tile's Subutai-HW engine and their packets.

    Core side: the direct window (:class:`gateware.ni.subutai_window.SubutaiWindow`,
    ``self.window.bus``, a slave of the tile's crossbar): a request is one store, its reply one
    load, as single-cycle accesses of the tile's local bus. Requests enter a FIFO (the core id is
    the tile's, set by hardware); replies queue in a FIFO the window pops. The ``reply`` event
    (interrupt) is pending while a reply waits: a core that cannot stall on the bus (a thread of
    an operating system, a timed wait) sleeps until it rises and then takes the reply with a load
    that no longer waits. There are no request or reply CSRs: each would be one more 32-bit
    register in the tile's CSR bank, whose read multiplexer and request multiplexer took about
    300 LUT4 per tile on an ECP5 (docs/architecture.md, Boards).

    Routing (TPDS'21 §III-D): the host tile of a request is bits 30:24 of its sync id. A request for
    this tile's engine (or for no valid tile, which the engine refuses with EINVAL) goes straight
    to the engine and never enters the NoC; any other goes to its host as a priority-class packet.
    Engine output is a reply for this tile's core (local), or a packet for another tile. Packets
    from the network are replies (to the reply FIFO) or requests (to the engine).

    ``tile_id`` is an int, or a Signal in a tile generated once for every position
    (:mod:`soc.tile_block`); the packets' source position is the NI's (``ni.x``, ``ni.y``).

    Engine counters are readable as CSRs (``ev_<name>``) when ``with_counters`` (the simulated
    SoC; not on boards, where they would be a third of the engine), and the last error of a posted
    request always.

    Buffers (entries, :func:`gateware.fifo.stream_fifo`): ``request_depth`` core requests (1),
    ``net_depth`` requests from the network in front of the engine (0: the packet being
    assembled is the only one, the NI's priority RX FIFO holds the next), ``out_depth`` engine
    packets behind its output register (0), ``reply_depth`` replies for the core (8). Each entry
    is about a hundred bits: in registers up to 2 entries, beyond that distributed RAM at about
    8 LUT4 sites per 4 bits (16 entries deep whatever the depth). A core issues one request at
    a time, so a deeper request buffer only lets it run ahead (a 2-entry one cost 82 LUT4 more
    for the same cycles in `make bench`); with 8-entry request, network and output FIFOs
    the port took 150 distributed-RAM blocks instead of 49 and the benchmarks' Subutai medians
    were 1 to 2 cycles higher (each FIFO adds a cycle of latency). Replies are different: a
    core running several threads gets bursts of them (a barrier release sends one per cycle,
    one per waiting thread), and a full reply FIFO holds the engine until the core's interrupt
    handler takes one, so it keeps 8 entries (a 2-entry queue of registers would save 93 LUT4
    sites).
    """

    def __init__(
        self,
        ni,
        tile_id,
        mesh_x,
        mesh_y,
        spm_bytes=2048,
        reply_depth=8,
        request_depth=1,
        net_depth=0,
        out_depth=0,
        with_counters=True,
    ):
        n_tiles = mesh_x * mesh_y
        self.engine = engine = SubutaiEngine(
            tile_id, n_tiles, spm_bytes=spm_bytes, with_counters=with_counters
        )

        # CSRs -----------------------------------------------------------------------------------
        self._last_error = CSRStatus(
            fields=[
                CSRField("status", size=8, description="Status of the last refused posted request."),
                CSRField("op", size=8, offset=8, description="Its op."),
            ]
        )
        self._last_error_id = CSRStatus(32, description="Sync id of the last refused posted request.")
        self.ev = EventManager()
        self.ev.reply = EventSourceLevel(
            description="A reply waits (the window's ``REPLY`` load takes it at once)."
        )
        self.ev.finalize()
        # Last, so that every other register has the same address with and without them.
        for name, sig in engine.counters.items():
            setattr(
                self,
                f"_ev_{name}",
                CSRStatus(32, name=f"ev_{name}", description=f"Engine counter ``{name}``."),
            )

        # # #

        for name, sig in engine.counters.items():
            self.comb += getattr(self, f"_ev_{name}").status.eq(sig)
        self.comb += [
            self._last_error.fields.status.eq(engine.last_err_status),
            self._last_error.fields.op.eq(engine.last_err_op),
            self._last_error_id.status.eq(engine.last_err_sync),
        ]

        # Core requests (from the window) ----------------------------------------------------------
        # Whether a request is for this tile's engine (its id names this tile, or no tile: the
        # engine answers EINVAL) is decided as it enters the buffer and travels with it, so the
        # comparison is not on the path from the buffer through the engine's input to its FSM.
        issue = stream_fifo(P.REQUEST_LAYOUT + [("local", 1)], request_depth)
        self.issue = issue

        entering, host = Signal(P.ID_NI_BITS), Signal(P.ID_NI_BITS)
        self.comb += [
            entering.eq(issue.sink.sync_id[P.ID_NI_SLICE]),
            issue.sink.local.eq((entering == tile_id) | (entering >= n_tiles)),
            host.eq(issue.source.sync_id[P.ID_NI_SLICE]),
        ]
        core_local = stream.Endpoint(P.REQUEST_LAYOUT)
        core_remote = stream.Endpoint(_OUT_LAYOUT)
        self.comb += [
            If(
                issue.source.local,
                issue.source.connect(core_local, omit={"local"}),
            ).Else(
                issue.source.connect(core_remote, omit={"op", "reply", "local"}),
                core_remote.dest.eq(host),
                # On the wire the reply flag travels in the op byte.
                core_remote.op.eq(issue.source.op | Mux(issue.source.reply, P.OP_FLAG_REPLY, 0)),
            )
        ]

        # Packets from the network -----------------------------------------------------------------
        words = Array(Signal(32) for _ in range(SUBUTAI_PACKET_WORDS))
        index = Signal(max=SUBUTAI_PACKET_WORDS + 1)
        full = Signal()
        net_request = stream.Endpoint(P.REQUEST_LAYOUT)
        net_reply = stream.Endpoint(_REPLY_LAYOUT)
        rx = ni.prio_rx
        op_word = words[1]
        is_reply = Signal()
        self.comb += [
            rx.ready.eq(~full),
            is_reply.eq(op_word[7]),
            net_request.valid.eq(full & ~is_reply),
            net_request.sync_id.eq(words[0]),
            net_request.op.eq(op_word[0:8] & ~P.OP_FLAG_REPLY),
            net_request.reply.eq((op_word & P.OP_FLAG_REPLY) != 0),
            net_request.core.eq(op_word[8:16]),
            net_request.thread.eq(op_word[16:32]),
            net_request.value.eq(words[2]),
            net_reply.valid.eq(full & is_reply),
            net_reply.sync_id.eq(words[0]),
            net_reply.op.eq(op_word[0:8]),
            net_reply.thread.eq(op_word[16:32]),
            net_reply.value.eq(words[2]),
        ]
        self.sync += [
            If(
                rx.valid & rx.ready,
                If(
                    rx.first,
                    index.eq(0),  # Head flit: routing only.
                ).Else(
                    words[index].eq(rx.data),
                    index.eq(index + 1),
                    If(rx.last, full.eq(1)),
                ),
            ),
            If(
                full & ((net_request.valid & net_request.ready) | (net_reply.valid & net_reply.ready)),
                full.eq(0),
                index.eq(0),
            ),
        ]

        # Engine input: core requests for this tile and requests from the network --------------
        net_fifo = stream_fifo(P.REQUEST_LAYOUT, net_depth)
        self.net_fifo = net_fifo
        self.comb += net_request.connect(net_fifo.sink)
        _round_robin_merge(self, [core_local, net_fifo.source], engine.sink)

        # Engine output: replies for this core, packets for other tiles ----------------------------
        out_fifo = stream_fifo(P.PACKET_LAYOUT, out_depth)
        self.out_fifo = out_fifo
        self.comb += engine.source.connect(out_fifo.sink)
        eng_reply = stream.Endpoint(_REPLY_LAYOUT)
        eng_remote = stream.Endpoint(_OUT_LAYOUT)
        src = out_fifo.source
        self.comb += [
            If(
                (src.dest == tile_id) & src.op[7],
                eng_reply.valid.eq(src.valid),
                src.ready.eq(eng_reply.ready),
            ).Else(
                eng_remote.valid.eq(src.valid),
                src.ready.eq(eng_remote.ready),
            ),
            # Record.eq: the payload fields each destination has.
            eng_reply.payload.eq(src.payload),
            eng_remote.payload.eq(src.payload),
        ]

        # Packetizer: one Subutai packet (head + 3 words) on the priority class ------------------
        out = stream.Endpoint(_OUT_LAYOUT)
        _round_robin_merge(self, [core_remote, eng_remote], out)
        dst_x, dst_y = Signal(4), Signal(4)
        self.comb += Case(
            out.dest,
            {
                **{t: [dst_x.eq(t % mesh_x), dst_y.eq(t // mesh_x)] for t in range(n_tiles)},
                "default": [dst_x.eq(0), dst_y.eq(0)],  # Never: remote dests are < n_tiles.
            },
        )
        flit = Signal(2)
        tx = ni.prio_tx
        self.comb += [
            tx.valid.eq(out.valid),
            tx.first.eq(flit == 0),
            tx.last.eq(flit == SUBUTAI_PACKET_WORDS),
            Case(
                flit,
                {
                    0: tx.data.eq(
                        head_flit(
                            dst_x,
                            dst_y,
                            ni.x,
                            ni.y,
                            SUBUTAI_PACKET_WORDS,
                            SUBUTAI_PACKET_TYPE,
                        )
                    ),
                    1: tx.data.eq(out.sync_id),
                    2: tx.data.eq(Cat(out.op, out.core, out.thread)),
                    3: tx.data.eq(out.value),
                },
            ),
            out.ready.eq(tx.ready & (flit == SUBUTAI_PACKET_WORDS)),
        ]
        self.sync += If(tx.valid & tx.ready, flit.eq(Mux(flit == SUBUTAI_PACKET_WORDS, 0, flit + 1)))

        # Replies for this core, and the window ------------------------------------------------
        replies = stream_fifo(_REPLY_LAYOUT, reply_depth)
        self.replies = replies
        _round_robin_merge(self, [eng_reply, net_reply], replies.sink)
        self.comb += self.ev.reply.trigger.eq(replies.source.valid)
        self.window = SubutaiWindow(issue.sink, replies.source, tile_id)
