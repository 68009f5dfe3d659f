#
# Basic network interface: packetizes messages of a core into NoC flits and back.
#

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStorage, CSRStatus, CSRField, CSR
from litex.soc.interconnect.csr_eventmanager import EventManager, EventSourceLevel

from gateware.noc.common import link_layout, N_VCS, VC_NORMAL, VC_PRIORITY, head_flit, head_field
from gateware.ni.channel_port import is_channel_type


class NetworkInterface(LiteXModule):
    """Network interface between a core (CSRs) and its router's local port.

    TX: software writes a header (destination tile, class, type, payload length) and then the
    payload words. The message waits in the TX FIFO until it is complete and only then enters the
    network, so a slow or interrupted writer never holds network paths. Space for the whole message
    is reserved when the header is accepted: a message is either refused up front (error bit, the
    driver checks ``tx_free`` first) or sent whole; a malformed packet never reaches the NoC.

    RX: flits are sorted per class into RX FIFOs. A class's ``rx_status`` message count only
    counts messages whose tail has arrived, so software reads a whole message without waiting.
    Reading ``rx_data`` (normal class) or ``rx_prio_data`` (priority class) pops one word: the
    head flit first, then the payload. A full RX FIFO back-pressures the router; nothing is
    dropped. The ``rx`` event (interrupt) is pending while a complete message waits.

    Parameters: ``mesh_x``/``mesh_y`` (for destination decoding), the tile's own ``x``/``y``,
    FIFO depths, and ``max_payload`` (payload words per message; at most RX depth - 1 so a whole
    message always fits in the RX FIFO).

    With ``chan_stream`` (needs ``prio_stream``), normal-class packets whose type is a channel
    type (:mod:`gateware.ni.channel_port`) belong to the tile's channel port: they are sent from
    ``chan_tx`` and received on ``chan_rx`` (streams of flits with ``first``/``last``), packet by
    packet beside the software's on the same class, and a software header asking for a channel
    type is refused (``reserved_type``).

    ``with_counters``: the ``packets_out``/``packets_in`` CSRs (two 32-bit counters; the
    simulated SoC has them, boards do not).

    With ``prio_stream``, the priority class belongs to the hardware (Subutai-HW): its flits are
    sent from ``prio_tx`` and received on ``prio_rx`` (streams of flits with ``first``/``last``)
    instead of through software registers (there is no ``rx_prio_data``), and a software header
    asking for the priority class is refused (``bad_class``).
    """

    def __init__(
        self,
        mesh_x,
        mesh_y,
        x,
        y,
        tx_depth=16,
        rx_depth=16,
        max_payload=None,
        prio_stream=False,
        chan_stream=False,
        chan_rx_depth=4,
        starvation_limit=8,
        with_counters=True,
    ):
        n_tiles = mesh_x * mesh_y
        if max_payload is None:
            max_payload = min(tx_depth, rx_depth) - 1
        assert 0 < max_payload <= min(tx_depth, rx_depth) - 1 and max_payload < 256
        assert prio_stream or not chan_stream
        self.max_payload = max_payload
        # The tile's position: ints fold into the logic; Signals (a tile generated once as a
        # module of its own, soc/tile_block.py) make it an input. The ports use it too.
        self.x, self.y = x, y

        # Links to/from the router's local port.
        self.tx = Record(link_layout())  # NI -> router.
        self.rx = Record(link_layout())  # Router -> NI.

        # CSRs -----------------------------------------------------------------------------------
        self._tx_header = CSRStorage(
            fields=[
                CSRField("dest", size=8, description="Destination tile id (``y*X + x``)."),
                CSRField("vc", size=1, offset=8, description="Traffic class: 0 normal, 1 priority."),
                CSRField(
                    "length",
                    size=8,
                    offset=16,
                    description="Payload words that follow (0 to ``max_payload``).",
                ),
                CSRField("type", size=8, offset=24, description="Message type, carried in the head flit."),
            ],
            description="Writing opens a message; its payload follows through ``tx_data``.",
        )
        self._tx_data = CSRStorage(32, description="Next payload word of the open message.")
        self._tx_status = CSRStatus(
            fields=[
                CSRField("free", size=8, description="Free TX FIFO words (a message needs ``length + 1``)."),
                CSRField("open", size=1, offset=8, description="A message is open (payload words missing)."),
                CSRField("idle", size=1, offset=9, description="Everything written has entered the network."),
            ]
        )
        self._tx_error = CSRStatus(
            fields=[
                CSRField(
                    "bad_dest", size=1, offset=0, description="Header refused: destination outside the mesh."
                ),
                CSRField(
                    "too_long", size=1, offset=1, description="Header refused: length above ``max_payload``."
                ),
                CSRField(
                    "no_room",
                    size=1,
                    offset=2,
                    description="Header refused: TX FIFO lacks ``length + 1`` words.",
                ),
                CSRField("not_open", size=1, offset=3, description="Payload word refused: no open message."),
                CSRField(
                    "still_open", size=1, offset=4, description="Header refused: previous message still open."
                ),
                CSRField(
                    "bad_class",
                    size=1,
                    offset=5,
                    description="Header refused: the priority class belongs to the hardware.",
                ),
                CSRField(
                    "reserved_type",
                    size=1,
                    offset=6,
                    description="Header refused: channel message types belong to the channel port.",
                ),
            ],
            description="Sticky TX error flags; write ``tx_error_clear`` to clear.",
        )
        self._tx_error_clear = CSR()
        self._rx_status = CSRStatus(
            fields=[
                CSRField("messages", size=8, offset=0, description="Complete normal-class messages waiting."),
                CSRField(
                    "prio_messages", size=8, offset=8, description="Complete priority-class messages waiting."
                ),
                CSRField(
                    "underflow",
                    size=1,
                    offset=16,
                    description="Sticky: a read found no word (cleared by ``rx_error_clear``).",
                ),
            ]
        )
        self._rx_data = CSRStatus(
            32, description="Reading pops the next word of the normal class (head first)."
        )
        if not prio_stream:
            self._rx_prio_data = CSRStatus(
                32, description="Reading pops the next word of the priority class (head first)."
            )
        self._rx_error_clear = CSR()
        self._max_payload = CSRStatus(
            8, reset=max_payload, description="Largest payload of a message, in words."
        )

        self.ev = EventManager()
        self.ev.rx = EventSourceLevel(description="A complete message waits in an RX FIFO.")
        self.ev.finalize()
        # Last, so that every other register has the same address with and without them.
        if with_counters:
            self._packets_out = CSRStatus(
                32, description="Packets sent into the network (the software's and the channel port's)."
            )
            self._packets_in = CSRStatus(32, description="Packets received from the network.")

        # # #

        # TX ---------------------------------------------------------------------------------------
        # The stream's first/last travel through the FIFO with each flit.
        tx_fifo = stream.SyncFIFO([("data", 32), ("vc", 1)], tx_depth, buffered=False)
        self.tx_fifo = tx_fifo
        hdr = self._tx_header.fields
        open_ = Signal()
        open_vc = Signal()
        remaining = Signal(8)
        level = Signal(max=tx_depth + 1)
        free = Signal(max=tx_depth + 1)
        complete = Signal(max=tx_depth + 1)  # Complete messages in the TX FIFO.
        self.comb += [
            level.eq(tx_fifo.level),
            free.eq(tx_depth - level),
        ]

        # Destination tile id -> (x, y), checked against the mesh.
        dst_x, dst_y, dst_ok = Signal(4), Signal(4), Signal()
        self.comb += Case(
            hdr.dest,
            {
                **{t: [dst_x.eq(t % mesh_x), dst_y.eq(t // mesh_x), dst_ok.eq(1)] for t in range(n_tiles)},
                "default": dst_ok.eq(0),
            },
        )

        push = Signal()
        push_data = Signal(32)
        push_first, push_last, push_vc = Signal(), Signal(), Signal()
        err = self._tx_error
        tx_err = Signal(7)
        bad_class = Signal()
        reserved_type = Signal()
        self.comb += bad_class.eq(hdr.vc != VC_NORMAL if prio_stream else 0)
        self.comb += reserved_type.eq(is_channel_type(hdr.type) if chan_stream else 0)
        self.comb += [getattr(err.fields, f.name).eq(tx_err[i]) for i, f in enumerate(err.fields.fields)]
        self.comb += [
            tx_fifo.sink.valid.eq(push),
            tx_fifo.sink.data.eq(push_data),
            tx_fifo.sink.first.eq(push_first),
            tx_fifo.sink.last.eq(push_last),
            tx_fifo.sink.vc.eq(push_vc),
        ]
        tail_pushed = Signal()
        self.comb += tail_pushed.eq(push & push_last)
        self.sync += [
            If(self._tx_error_clear.re, tx_err.eq(0)),
            If(
                self._tx_header.re,
                If(open_, tx_err[4].eq(1))
                .Elif(bad_class, tx_err[5].eq(1))
                .Elif(reserved_type, tx_err[6].eq(1))
                .Elif(~dst_ok, tx_err[0].eq(1))
                .Elif(hdr.length > max_payload, tx_err[1].eq(1))
                .Elif(free < hdr.length + 1, tx_err[2].eq(1))
                .Else(
                    open_.eq(hdr.length != 0),
                    open_vc.eq(hdr.vc),
                    remaining.eq(hdr.length),
                ),
            ),
            If(
                self._tx_data.re,
                If(~open_, tx_err[3].eq(1)).Else(
                    remaining.eq(remaining - 1), If(remaining == 1, open_.eq(0))
                ),
            ),
        ]
        header_ok = Signal()
        self.comb += header_ok.eq(
            ~open_
            & ~bad_class
            & ~reserved_type
            & dst_ok
            & (hdr.length <= max_payload)
            & (free >= hdr.length + 1)
        )
        self.comb += [
            If(
                self._tx_header.re & header_ok,
                push.eq(1),
                push_data.eq(head_flit(dst_x, dst_y, x, y, hdr.length, hdr.type)),
                push_first.eq(1),
                push_last.eq(hdr.length == 0),
                push_vc.eq(hdr.vc),
            ).Elif(
                self._tx_data.re & open_,
                push.eq(1),
                push_data.eq(self._tx_data.storage),
                push_first.eq(0),
                push_last.eq(remaining == 1),
                push_vc.eq(open_vc),
            )
        ]

        # Injection: only complete messages leave the FIFO; flits go out on the message's class as
        # soon as the router has room in that class.
        tail_sent = Signal()
        sw_valid = Signal()  # A software flit is offered (its message is complete).
        sel_chan = Signal()  # The normal class's flit this cycle is the channel port's.
        out_valid = Signal()
        out_vc = Signal()
        prio_go = Signal()  # A hardware priority flit takes the link this cycle.
        self.comb += sw_valid.eq(tx_fifo.source.valid & (complete != 0))
        if chan_stream:
            # Packets of the two normal-class sources never interleave on the link: a started
            # packet keeps the class until its tail; otherwise the sources alternate.
            self.chan_tx = stream.Endpoint([("data", 32)])
            sw_mid, chan_mid, chan_won = Signal(), Signal(), Signal()
            self.comb += sel_chan.eq(~sw_mid & (chan_mid | (self.chan_tx.valid & (~sw_valid | ~chan_won))))
        normal_valid = Signal()
        self.comb += normal_valid.eq(Mux(sel_chan, self.chan_tx.valid, sw_valid) if chan_stream else sw_valid)
        if prio_stream:
            self.prio_tx = stream.Endpoint([("data", 32)])
            # Priority flits go whenever the router has room in their class; normal-class flits
            # use the other cycles, and one cycle after ``starvation_limit`` priority flits in a
            # row (as in the routers). Classes may interleave on a link.
            sw_can_go = Signal()
            starve = Signal(max=starvation_limit + 1)
            self.comb += [
                sw_can_go.eq(normal_valid & self.tx.ready[VC_NORMAL]),
                prio_go.eq(
                    self.prio_tx.valid
                    & self.tx.ready[VC_PRIORITY]
                    & ~(sw_can_go & (starve == starvation_limit))
                ),
                self.prio_tx.ready.eq(prio_go),
            ]
            self.sync += If(prio_go & sw_can_go, starve.eq(starve + 1)).Elif(~prio_go, starve.eq(0))
        sw_flit = [
            self.tx.valid.eq(out_valid),
            self.tx.data.eq(tx_fifo.source.data),
            self.tx.first.eq(tx_fifo.source.first),
            self.tx.last.eq(tx_fifo.source.last),
            self.tx.vc.eq(tx_fifo.source.vc),
        ]
        if chan_stream:
            sw_flit = [
                If(
                    sel_chan,
                    self.tx.valid.eq(out_valid),
                    self.tx.data.eq(self.chan_tx.data),
                    self.tx.first.eq(self.chan_tx.first),
                    self.tx.last.eq(self.chan_tx.last),
                    self.tx.vc.eq(VC_NORMAL),
                ).Else(*sw_flit)
            ]
        self.comb += [
            out_valid.eq(normal_valid),
            out_vc.eq(Mux(sel_chan, VC_NORMAL, tx_fifo.source.vc)),
        ]
        if prio_stream:
            self.comb += If(
                prio_go,
                self.tx.valid.eq(1),
                self.tx.data.eq(self.prio_tx.data),
                self.tx.first.eq(self.prio_tx.first),
                self.tx.last.eq(self.prio_tx.last),
                self.tx.vc.eq(VC_PRIORITY),
            ).Else(*sw_flit)
        else:
            self.comb += sw_flit
        accepted = Signal()
        self.comb += [
            accepted.eq(~prio_go & out_valid & Mux(out_vc, self.tx.ready[1], self.tx.ready[0])),
            tx_fifo.source.ready.eq(accepted & ~sel_chan),
            tail_sent.eq(accepted & ~sel_chan & tx_fifo.source.last),
        ]
        if chan_stream:
            self.comb += self.chan_tx.ready.eq(accepted & sel_chan)
            self.sync += If(
                accepted,
                If(sel_chan, chan_mid.eq(~self.chan_tx.last)).Else(sw_mid.eq(~tx_fifo.source.last)),
                If(self.tx.first, chan_won.eq(sel_chan)),
            )
        self.sync += [
            complete.eq(complete + tail_pushed - tail_sent),
        ]
        if with_counters:
            packet_out = tail_sent | (accepted & sel_chan & self.tx.last) if chan_stream else tail_sent
            self.sync += If(packet_out, self._packets_out.status.eq(self._packets_out.status + 1))
        self.comb += [
            self._tx_status.fields.free.eq(free),
            self._tx_status.fields.open.eq(open_),
            self._tx_status.fields.idle.eq(level == 0),
        ]

        # RX ---------------------------------------------------------------------------------------
        msg_counts = []
        data_csrs = [self._rx_data, None if prio_stream else self._rx_prio_data]
        underflow = Signal()
        if chan_stream:
            # Channel packets of the normal class go to the channel port, packet by packet (the
            # head's type decides, the body follows its head). The class is ready when both
            # consumers are, so ``ready`` depends on FIFO levels only, as links require.
            chan_fifo = stream.SyncFIFO([("data", 32)], chan_rx_depth, buffered=False)
            self.chan_rx_fifo = chan_fifo
            self.chan_rx = stream.Endpoint([("data", 32)])
            self.comb += chan_fifo.source.connect(self.chan_rx)
            to_chan = Signal()  # The body now arriving belongs to a channel packet.
            is_chan = Signal()
            normal_in = Signal()
            self.comb += [
                is_chan.eq(Mux(self.rx.first, is_channel_type(head_field(self.rx.data, "type")), to_chan)),
                normal_in.eq(self.rx.valid & (self.rx.vc == VC_NORMAL) & self.rx.ready[VC_NORMAL]),
                chan_fifo.sink.valid.eq(normal_in & is_chan),
                chan_fifo.sink.data.eq(self.rx.data),
                chan_fifo.sink.first.eq(self.rx.first),
                chan_fifo.sink.last.eq(self.rx.last),
            ]
            self.sync += If(normal_in & self.rx.first, to_chan.eq(is_chan))
        for vc in range(N_VCS):
            fifo = stream.SyncFIFO([("data", 32)], rx_depth, buffered=False)
            setattr(self, f"rx_fifo{vc}", fifo)
            count = Signal(8)
            msg_counts.append(count)
            self.comb += [
                fifo.sink.valid.eq(self.rx.valid & (self.rx.vc == vc)),
                fifo.sink.data.eq(self.rx.data),
                fifo.sink.first.eq(self.rx.first),
                fifo.sink.last.eq(self.rx.last),
                self.rx.ready[vc].eq(fifo.sink.ready),
            ]
            if chan_stream and vc == VC_NORMAL:
                self.comb += [
                    fifo.sink.valid.eq(normal_in & ~is_chan),
                    self.rx.ready[vc].eq(fifo.sink.ready & chan_fifo.sink.ready),
                ]
            if prio_stream and vc == VC_PRIORITY:
                # Hardware consumer: the FIFO's output is the prio_rx stream.
                self.prio_rx = stream.Endpoint([("data", 32)])
                self.comb += fifo.source.connect(self.prio_rx)
                continue
            pop = Signal()
            take = Signal()
            csr = data_csrs[vc]
            self.comb += [
                take.eq(fifo.sink.valid & fifo.sink.ready),
                csr.status.eq(Mux(fifo.source.valid, fifo.source.data, 0)),
                pop.eq(csr.we & fifo.source.valid),
                fifo.source.ready.eq(pop),
            ]
            self.sync += [
                count.eq(count + (take & self.rx.last) - (pop & fifo.source.last)),
                If(csr.we & ~fifo.source.valid, underflow.eq(1)),
            ]
        tail_in = Signal()
        self.comb += tail_in.eq(
            self.rx.valid & self.rx.last & Mux(self.rx.vc, self.rx.ready[1], self.rx.ready[0])
        )
        self.sync += If(self._rx_error_clear.re, underflow.eq(0))
        if with_counters:
            self.sync += If(tail_in, self._packets_in.status.eq(self._packets_in.status + 1))
        self.comb += [
            self._rx_status.fields.messages.eq(msg_counts[VC_NORMAL]),
            self._rx_status.fields.prio_messages.eq(msg_counts[VC_PRIORITY]),
            self._rx_status.fields.underflow.eq(underflow),
            self.ev.rx.trigger.eq((msg_counts[VC_NORMAL] != 0) | (msg_counts[VC_PRIORITY] != 0)),
        ]
