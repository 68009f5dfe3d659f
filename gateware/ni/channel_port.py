#
# Rdy-ack channels between cores through the NoC: the channel port of a tile and its window.
#
"""Channel port: one-slot rdy-ack channels whose messages and events travel as NoC packets.

Seed 004 (a run-time support for fine-grained parallelism on the TILEPro64, §6) builds
cooperation between threads on *rdy-ack channels*: a one-position buffer between a sender and a
receiver, with a ``rdy`` event (a message is in the buffer) and an ``ack`` event (the receiver has
taken it, the buffer is free). Its fastest implementation (RA-UDN) sends both events as
processor-to-processor messages on the chip's user network. Here the port does it in hardware,
behind a window of the tile's local bus (the pattern of :mod:`gateware.ni.subutai_window`):

- **Slots.** A port has ``N_SLOTS`` outgoing and ``N_SLOTS`` incoming channel ends. Software
  connects an outgoing slot to (receiver tile, receiver's incoming slot, kind) and an incoming
  slot to (sender tile, sender's outgoing slot): one store each. Connecting an outgoing slot gives
  it its *credit* (the empty buffer: seed 004's ``ack`` initially true).
- **Send** is stores: up to ``MAX_WORDS`` words (one 32-byte cache line) into ``TX_DATA``, then
  one store of the word count to ``SEND + 4*slot``. The store waits on the bus while the slot has
  no credit (the receiver has not acknowledged the previous message: a full channel blocks its
  sender, nothing is dropped), then takes the credit and the message leaves as one normal-class
  packet: the head flit (type :data:`TYPE_DATA` or :data:`TYPE_PUSH` with the receiver's slot)
  and the words. ``STATUS`` shows the credits, so a sender that must not wait looks first.
- **Receive, NoC messages** (kind ``noc``): the packet's words land in the port's slot memory and
  the slot becomes *full* (``rdy``). A load of ``RECV + 4*slot`` waits on the bus until the slot
  is full and returns an info word (length, source tile); ``RX_DATA`` reads the words (single
  cycle loads of the window, no CSR, no main memory). ``RECV_BRIEF`` gives up after ``SPIN``
  cycles; ``WAIT_ANY`` waits for any full slot among ``MASK`` (a collector).
- **Receive, pushed data** (kind ``push``): the port writes the words into the receiving tile's
  own RAM (``PUSH_BASE + SLOT_BYTES*slot``) and then a flag word after them, through a bus master
  of the tile's crossbar; the slot becomes full too. The receiver finds message and flag in its
  local memory: no refill from main RAM, which is what seed 004's home forwarding achieves on a
  coherent machine (the sender's stores pushed to the receiver's cache).
- **Ack** is one store to ``ACK + 4*slot`` of the incoming slot: the slot is empty again and a
  head-only packet (type :data:`TYPE_ACK` with the sender's slot) gives the sender its credit.

Every channel packet is taken by the receiving port as it arrives: words into a slot that its
credit guarantees empty, an ack into a credit bit, a push into tile RAM (a bus write that waits
only for the tile's own crossbar). None waits for software, so channel traffic on the normal class
never holds a link because a core does not read (docs/architecture.md, "Channels").

Message types ``0x80``-``0xbf`` of the normal class belong to the port (:data:`TYPE_MASK`,
:data:`TYPE_VALUE`): the NI steers them here and refuses them from software.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr_eventmanager import EventManager, EventSourceLevel

from gateware.noc.common import head_field, head_flit

# Protocol (one source of truth: exported as C by c_header()) ---------------------------------------

N_SLOTS = 16  # Outgoing and incoming slots of a port (4 bits in the message type).
MAX_WORDS = 8  # Words of a message: one 32-byte cache line.
SLOT_BYTES = 64  # Pushed slot in tile RAM: MAX_WORDS words, the flag word, padding to two lines.
PUSH_FLAG_WORD = MAX_WORDS  # Word of the pushed slot that holds the flag (after the data).

TYPE_MASK = 0xC0  # Types (type & TYPE_MASK) == TYPE_VALUE are channel packets.
TYPE_VALUE = 0x80
TYPE_DATA = 0x80  # | receiver's slot: words for the port's slot memory.
TYPE_PUSH = 0x90  # | receiver's slot: words for the receiver's tile RAM.
TYPE_ACK = 0xA0  # | sender's slot: the receiver took the message (head flit only).
KIND_NOC = 0
KIND_PUSH = 1

# Window register map (byte offsets).
WINDOW_SIZE = 0x1000
TX_DATA = 0x000  # W: MAX_WORDS words of the next message.
STATUS = 0x020  # R: full incoming slots [15:0], credits of outgoing slots [31:16].
MASK = 0x024  # W: incoming slots WAIT_ANY watches.
SPIN = 0x028  # W: cycles RECV_BRIEF and WAIT_ANY_BRIEF wait at most.
WAIT_ANY = 0x02C  # R: waits until a slot of MASK is full, returns its info word.
WAIT_ANY_BRIEF = 0x030  # R: as WAIT_ANY, gives up after SPIN cycles (info word without VALID).
PUSH_BASE = 0x034  # W: byte address in tile RAM of the pushed slots (SLOT_BYTES each).
ERROR = 0x038  # R: sticky errors (ERR_*); W: clears them.
IRQ_MASK = 0x03C  # W: STATUS bits (full [15:0], credits [31:16]) that raise the interrupt.
CONNECT_OUT = 0x100  # W + 4*slot: CONN_VALID | dest tile [7:0] | dest slot [11:8] | kind [12].
CONNECT_IN = 0x140  # W + 4*slot: CONN_VALID | source tile [7:0] | source slot [11:8].
SEND = 0x180  # W + 4*slot: word count; waits for the slot's credit, then sends.
ACK = 0x1C0  # W + 4*slot: the message of the incoming slot was taken; acknowledges it.
RECV = 0x200  # R + 4*slot: waits until the slot is full, returns its info word.
RECV_BRIEF = 0x240  # R + 4*slot: as RECV, gives up after SPIN cycles.
RX_DATA = 0x400  # R + 4*(slot*MAX_WORDS + i): word i of the slot's message (kind noc).

CONN_VALID = 1 << 31  # A connect word without it disconnects the slot.
CONN_KIND_SHIFT = 12

# Info word of a full slot: length [3:0], VALID [7], source tile [15:8], slot [19:16]. The flag
# word of a pushed slot is the same info word.
INFO_LENGTH_MASK = 0xF
INFO_VALID = 1 << 7
INFO_SOURCE_SHIFT = 8
INFO_SLOT_SHIFT = 16

# Sticky errors: what the port refused or dropped instead of hanging.
ERR_SEND_UNCONNECTED = 1 << 0  # SEND on an unconnected outgoing slot (dropped).
ERR_SEND_LENGTH = 1 << 1  # SEND of more than MAX_WORDS words (dropped).
ERR_ACK_UNCONNECTED = 1 << 2  # ACK on an unconnected incoming slot (ignored).
ERR_BAD_TILE = 1 << 3  # CONNECT naming a tile outside the mesh (slot left unconnected).
ERR_BAD_PACKET = 1 << 4  # A packet for a slot that is not connected or too long (dropped).

SPIN_DEFAULT = 64


def info_word(length, source, slot, valid=1):
    """The info word of a full slot (the reference of the tests)."""
    return (
        (length & INFO_LENGTH_MASK)
        | (INFO_VALID if valid else 0)
        | ((source & 0xFF) << INFO_SOURCE_SHIFT)
        | ((slot & 0xF) << INFO_SLOT_SHIFT)
    )


def is_channel_type(type_field):
    """Migen expression: a head flit's type field is a channel packet's."""
    return (type_field & TYPE_MASK) == TYPE_VALUE


class ChannelPort(LiteXModule):
    """Channel port of tile ``tile_id``.

    ``ni``: the tile's :class:`gateware.ni.ni.NetworkInterface`, built with ``chan_stream``: the
    port sends on ``ni.chan_tx`` and receives on ``ni.chan_rx`` (normal-class packets of the
    channel types). ``self.window.bus``: the Wishbone slave of the tile's crossbar
    (:data:`WINDOW_SIZE` bytes, word addressed). ``self.dma``: the Wishbone master that writes
    pushed messages into tile RAM (``ram_origin``, ``ram_size`` bytes; the address is taken
    modulo the RAM, so a push never leaves it).

    Interrupt (``ev.rx``, level): pending while a ``STATUS`` bit of ``IRQ_MASK`` is set (an
    incoming slot full, an outgoing slot's credit back). A thread that must not hold its core on
    a waiting load or store (an operating system's) sets its bit and sleeps; the handler clears
    the bits it finds set and wakes their threads.
    """

    def __init__(self, ni, tile_id, mesh_x, mesh_y, ram_origin, ram_size, spin_default=SPIN_DEFAULT):
        n_tiles = mesh_x * mesh_y
        self.ev = EventManager()
        self.ev.rx = EventSourceLevel(description="A ``STATUS`` bit of ``IRQ_MASK`` is set.")
        self.ev.finalize()
        self.window = Module()
        self.window.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.dma = dma = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.error = error = Signal(5)

        # # #

        ns = N_SLOTS
        # Word offset in the window, its 16-word group (0x100 + 0x40*k is group 4 + k) and the
        # slot it names: signals, not slices, since LiteX's Verilog lowering of a Case or an Array
        # index on a slice of a slice assigns to the bus's address.
        word, group, slot_of, tx_word = Signal(10), Signal(6), Signal(4), Signal(3)
        self.comb += [
            word.eq(bus.adr[0:10]),
            group.eq(word[4:10]),
            slot_of.eq(word[0:4]),
            tx_word.eq(word[0:3]),
        ]
        access = bus.cyc & bus.stb & ~bus.ack
        reading = access & ~bus.we
        writing = access & bus.we
        self.sync += bus.ack.eq(0)

        # Outgoing slots: connection and credit.
        out_conn = Array(Signal(name=f"out_conn{s}") for s in range(ns))
        out_x = Array(Signal(4, name=f"out_x{s}") for s in range(ns))
        out_y = Array(Signal(4, name=f"out_y{s}") for s in range(ns))
        out_slot = Array(Signal(4, name=f"out_slot{s}") for s in range(ns))
        out_kind = Array(Signal(name=f"out_kind{s}") for s in range(ns))
        credit = Signal(ns)
        # Incoming slots: connection, full, what the last message was.
        in_conn = Array(Signal(name=f"in_conn{s}") for s in range(ns))
        in_x = Array(Signal(4, name=f"in_x{s}") for s in range(ns))
        in_y = Array(Signal(4, name=f"in_y{s}") for s in range(ns))
        in_slot = Array(Signal(4, name=f"in_slot{s}") for s in range(ns))
        full = Signal(ns)
        info = Array(Signal(20, name=f"info{s}") for s in range(ns))

        tx_data = Array(Signal(32, name=f"tx_data{i}") for i in range(MAX_WORDS))
        mask = Signal(ns)
        irq_mask = Signal(2 * ns)
        spin = Signal(16, reset=spin_default)
        push_base = Signal(32)
        waited = Signal(16)

        # Tile id -> (x, y) of a connect word, checked against the mesh.
        conn_x, conn_y, conn_ok = Signal(4), Signal(4), Signal()
        self.comb += Case(
            bus.dat_w[0:8],
            {
                **{t: [conn_x.eq(t % mesh_x), conn_y.eq(t // mesh_x), conn_ok.eq(1)] for t in range(n_tiles)},
                "default": conn_ok.eq(0),
            },
        )

        # Transmitter: one packet at a time from registers into ni.chan_tx --------------------------
        tx = ni.chan_tx
        tx_busy = Signal()
        tx_head = Signal(32)
        tx_len = Signal(4)
        tx_index = Signal(4)  # 0: the head flit; i: word i-1.
        self.comb += [
            tx.valid.eq(tx_busy),
            tx.first.eq(tx_index == 0),
            tx.last.eq(tx_index == tx_len),
            tx.data.eq(Mux(tx_index == 0, tx_head, tx_data[tx_index - 1])),
        ]
        self.sync += If(
            tx.valid & tx.ready,
            tx_index.eq(tx_index + 1),
            If(tx.last, tx_busy.eq(0), tx_index.eq(0)),
        )

        # Window stores ------------------------------------------------------------------------------
        set_credit = Signal(ns)  # From the receiver below (an ack arrived).
        set_full = Signal(ns)
        clear_credit = Signal(ns)
        clear_full = Signal(ns)
        err_set = Signal(5)
        send_len = Signal(8)
        self.comb += send_len.eq(bus.dat_w[0:8])
        s = slot_of
        self.sync += If(
            writing,
            Case(
                group,
                {
                    0: If(
                        word[3],  # STATUS ... ERROR (word 8..15)
                        bus.ack.eq(1),
                        Case(
                            slot_of,
                            {
                                MASK >> 2: mask.eq(bus.dat_w),
                                IRQ_MASK >> 2: irq_mask.eq(bus.dat_w),
                                SPIN >> 2: spin.eq(bus.dat_w),
                                PUSH_BASE >> 2: push_base.eq(bus.dat_w),
                                "default": [],
                            },
                        ),
                    ).Elif(
                        ~tx_busy,  # TX_DATA: not while the previous message is leaving.
                        bus.ack.eq(1),
                        tx_data[tx_word].eq(bus.dat_w),
                    ),
                    CONNECT_OUT >> 6: [
                        bus.ack.eq(1),
                        If(
                            bus.dat_w[31],
                            If(
                                conn_ok,
                                out_conn[s].eq(1),
                                out_x[s].eq(conn_x),
                                out_y[s].eq(conn_y),
                                out_slot[s].eq(bus.dat_w[8:12]),
                                out_kind[s].eq(bus.dat_w[CONN_KIND_SHIFT]),
                            ).Else(out_conn[s].eq(0)),
                        ).Else(out_conn[s].eq(0)),
                    ],
                    CONNECT_IN >> 6: [
                        bus.ack.eq(1),
                        If(
                            bus.dat_w[31] & conn_ok,
                            in_conn[s].eq(1),
                            in_x[s].eq(conn_x),
                            in_y[s].eq(conn_y),
                            in_slot[s].eq(bus.dat_w[8:12]),
                        ).Else(in_conn[s].eq(0)),
                    ],
                    SEND >> 6: If(
                        ~out_conn[s] | (send_len > MAX_WORDS),
                        bus.ack.eq(1),
                    ).Elif(
                        ~tx_busy & (credit >> s)[0],
                        bus.ack.eq(1),
                        tx_busy.eq(1),
                        tx_len.eq(send_len),
                        tx_head.eq(
                            head_flit(
                                out_x[s],
                                out_y[s],
                                ni.x,
                                ni.y,
                                send_len,
                                Mux(out_kind[s], TYPE_PUSH, TYPE_DATA) | out_slot[s],
                            )
                        ),
                    ),
                    ACK >> 6: If(
                        ~in_conn[s],
                        bus.ack.eq(1),
                    ).Elif(
                        ~tx_busy,
                        bus.ack.eq(1),
                        tx_busy.eq(1),
                        tx_len.eq(0),
                        tx_head.eq(
                            head_flit(
                                in_x[s],
                                in_y[s],
                                ni.x,
                                ni.y,
                                0,
                                TYPE_ACK | in_slot[s],
                            )
                        ),
                    ),
                    "default": bus.ack.eq(1),  # Reserved: acknowledged and ignored.
                },
            ),
        )
        # Credits and full bits: set by the receiver, cleared by stores (never the same slot in the
        # same cycle: an ack comes only for a message sent, a message only into an empty slot).
        self.comb += [
            If(
                writing & (group == SEND >> 6) & out_conn[s] & (send_len <= MAX_WORDS) & ~tx_busy,
                clear_credit.eq(C(1, ns) << s),
            ),
            If(writing & (group == CONNECT_OUT >> 6), clear_credit.eq(C(1, ns) << s)),
            If(writing & (group == ACK >> 6) & in_conn[s] & ~tx_busy, clear_full.eq(C(1, ns) << s)),
            If(writing & (group == CONNECT_IN >> 6), clear_full.eq(C(1, ns) << s)),
            If(writing & (group == SEND >> 6) & ~out_conn[s], err_set[0].eq(1)),
            If(writing & (group == SEND >> 6) & out_conn[s] & (send_len > MAX_WORDS), err_set[1].eq(1)),
            If(writing & (group == ACK >> 6) & ~in_conn[s], err_set[2].eq(1)),
            If(
                writing
                & ((group == CONNECT_OUT >> 6) | (group == CONNECT_IN >> 6))
                & bus.dat_w[31]
                & ~conn_ok,
                err_set[3].eq(1),
            ),
        ]
        connect_gives_credit = Signal(ns)
        self.comb += If(
            writing & (group == CONNECT_OUT >> 6) & bus.dat_w[31] & conn_ok,
            connect_gives_credit.eq(C(1, ns) << s),
        )
        self.comb += self.ev.rx.trigger.eq((Cat(full, credit) & irq_mask) != 0)
        self.sync += [
            credit.eq((credit & ~clear_credit) | set_credit | connect_gives_credit),
            full.eq((full & ~clear_full) | set_full),
            If(writing & (word == ERROR >> 2), error.eq(0)).Else(error.eq(error | err_set)),
        ]

        # Window loads -------------------------------------------------------------------------------
        slot_mem = Memory(32, ns * MAX_WORDS)
        # An asynchronous read port: a word load is answered in the cycle after it is seen, as a
        # register's (a synchronous one cost a cycle more per word; 128 words of distributed RAM).
        rd = slot_mem.get_port(async_read=True)
        wr = slot_mem.get_port(write_capable=True)
        self.specials += slot_mem, rd, wr
        self.comb += rd.adr.eq(word[0:7])  # RX_DATA: slot * MAX_WORDS + i

        waiting_slot = Signal(4)
        is_recv = reading & ((group == RECV >> 6) | (group == RECV_BRIEF >> 6))
        brief = Signal()
        ready_any = Signal(ns)
        any_slot = Signal(4)
        self.comb += [
            ready_any.eq(full & mask),
            # The lowest full slot of the mask (later statements override).
            *[If(ready_any[i], any_slot.eq(i)) for i in reversed(range(ns))],
        ]
        is_any = reading & ((word == WAIT_ANY >> 2) | (word == WAIT_ANY_BRIEF >> 2))
        self.comb += [
            waiting_slot.eq(Mux(is_any, any_slot, s)),
            brief.eq(Mux(is_any, word == WAIT_ANY_BRIEF >> 2, group == RECV_BRIEF >> 6)),
        ]
        found = Signal()
        self.comb += found.eq(Mux(is_any, ready_any != 0, (full >> s)[0]))
        self.sync += (
            If(
                is_recv | is_any,
                If(
                    found,
                    bus.ack.eq(1),
                    bus.dat_r.eq(Cat(info[waiting_slot], C(0, 12))),
                    waited.eq(0),
                )
                .Elif(brief & (waited >= spin), bus.ack.eq(1), bus.dat_r.eq(0), waited.eq(0))
                .Else(waited.eq(waited + 1)),
            )
            .Elif(
                reading & (word[8:10] == RX_DATA >> 10),
                bus.ack.eq(1),
                bus.dat_r.eq(rd.dat_r),
            )
            .Elif(
                reading,
                bus.ack.eq(1),
                bus.dat_r.eq(
                    Mux(
                        word == STATUS >> 2,
                        Cat(full, credit),
                        Mux(word == ERROR >> 2, error, 0),
                    )
                ),
            )
        )

        # Receiver: channel packets from the network ---------------------------------------------------
        rx = ni.chan_rx
        kind = Signal(2)
        r_slot = Signal(4)
        r_len = Signal(4)
        r_src = Signal(8)
        r_index = Signal(4)
        head_type, head_len, head_slot, head_kind = Signal(8), Signal(8), Signal(4), Signal(2)
        self.comb += [
            head_type.eq(head_field(rx.data, "type")),
            head_len.eq(head_field(rx.data, "length")),
            head_slot.eq(head_type[0:4]),
            head_kind.eq(head_type[4:6]),
        ]
        head_ok = Signal()
        src_tile = Signal(8)
        self.comb += src_tile.eq(head_field(rx.data, "src_y") * mesh_x + head_field(rx.data, "src_x"))
        ram_words = ram_size // 4
        push_adr = Signal(32)
        push_word = Signal(4)  # Word of the pushed slot: r_index, then the flag's.
        self.comb += push_adr.eq(
            (ram_origin >> 2) | ((push_base[2:] + r_slot * (SLOT_BYTES // 4) + push_word) & (ram_words - 1))
        )
        info_we, info_slot, info_value = Signal(), Signal(4), Signal(20)
        self.sync += If(info_we, info[info_slot].eq(info_value))
        r_info = Signal(20)
        self.comb += r_info.eq(Cat(r_len, C(0, 3), C(1, 1), r_src, r_slot))

        self.comb += head_ok.eq(
            Mux(
                head_kind == 2,  # TYPE_ACK: the sender's slot must be connected.
                Array(out_conn)[head_slot] & (head_len == 0),
                Array(in_conn)[head_slot] & (head_len <= MAX_WORDS) & (head_kind != 3),
            )
        )

        def delivered(slot, value):
            # A whole message is in the slot (memory or tile RAM): its full bit and info word.
            return [
                set_full.eq(C(1, ns) << slot),
                info_we.eq(1),
                info_slot.eq(slot),
                info_value.eq(value),
            ]

        def push_store(valid, data):
            # One word of a pushed message (or its flag) written into the tile RAM.
            return [
                dma.cyc.eq(valid),
                dma.stb.eq(valid),
                dma.we.eq(1),
                dma.sel.eq(0xF),
                dma.adr.eq(push_adr),
                dma.dat_w.eq(data),
            ]

        self.fsm = fsm = FSM(reset_state="HEAD")
        fsm.act(
            "HEAD",
            rx.ready.eq(1),
            If(
                rx.valid,
                If(
                    ~head_ok,
                    err_set[4].eq(1),
                    If(~rx.last, NextState("DROP")),
                )
                .Elif(
                    head_kind == 2,
                    set_credit.eq(C(1, ns) << head_slot),
                )
                .Else(
                    NextValue(kind, head_kind),
                    NextValue(r_slot, head_slot),
                    NextValue(r_len, head_len),
                    NextValue(r_src, src_tile),
                    NextValue(r_index, 0),
                    If(
                        rx.last,  # No words.
                        If(head_kind == KIND_PUSH, NextState("FLAG")).Else(
                            *delivered(head_slot, Cat(C(0, 4), C(0, 3), C(1, 1), src_tile, head_slot))
                        ),
                    )
                    .Elif(head_kind == KIND_PUSH, NextState("PUSH"))
                    .Else(NextState("WORDS")),
                ),
            ),
        )
        fsm.act(
            "WORDS",
            rx.ready.eq(1),
            wr.adr.eq(r_slot * MAX_WORDS + r_index),
            wr.dat_w.eq(rx.data),
            wr.we.eq(rx.valid),
            If(
                rx.valid,
                NextValue(r_index, r_index + 1),
                If(rx.last, *delivered(r_slot, r_info), NextState("HEAD")),
            ),
        )
        fsm.act(
            "PUSH",
            *push_store(rx.valid, rx.data),
            rx.ready.eq(dma.ack),
            If(
                rx.valid & dma.ack,
                NextValue(r_index, r_index + 1),
                If(rx.last, NextState("FLAG")),
            ),
        )
        # The flag after the words: a receiver that sees it finds the whole message.
        self.comb += push_word.eq(Mux(fsm.ongoing("FLAG"), PUSH_FLAG_WORD, r_index))
        fsm.act(
            "FLAG",
            *push_store(1, r_info),
            If(dma.ack, *delivered(r_slot, r_info), NextState("HEAD")),
        )
        fsm.act(
            "DROP",
            rx.ready.eq(1),
            If(rx.valid & rx.last, NextState("HEAD")),
        )


def c_header(prefix="SUBUTAI_CHAN"):
    """C header of the channel protocol and the window's register map."""
    lines = [
        "/* Generated from gateware/ni/channel_port.py: do not edit. */",
        f"#ifndef {prefix}_WINDOW_H",
        f"#define {prefix}_WINDOW_H",
        "",
    ]
    for name, value in [
        ("N_SLOTS", N_SLOTS),
        ("MAX_WORDS", MAX_WORDS),
        ("SLOT_BYTES", SLOT_BYTES),
        ("PUSH_FLAG_WORD", PUSH_FLAG_WORD),
        ("TYPE_MASK", TYPE_MASK),
        ("TYPE_VALUE", TYPE_VALUE),
        ("KIND_NOC", KIND_NOC),
        ("KIND_PUSH", KIND_PUSH),
        ("WINDOW_SIZE", WINDOW_SIZE),
        ("TX_DATA", TX_DATA),
        ("STATUS", STATUS),
        ("MASK", MASK),
        ("SPIN", SPIN),
        ("WAIT_ANY", WAIT_ANY),
        ("WAIT_ANY_BRIEF", WAIT_ANY_BRIEF),
        ("PUSH_BASE", PUSH_BASE),
        ("ERROR", ERROR),
        ("IRQ_MASK", IRQ_MASK),
        ("CONNECT_OUT", CONNECT_OUT),
        ("CONNECT_IN", CONNECT_IN),
        ("SEND", SEND),
        ("ACK", ACK),
        ("RECV", RECV),
        ("RECV_BRIEF", RECV_BRIEF),
        ("RX_DATA", RX_DATA),
        ("CONN_VALID", CONN_VALID),
        ("CONN_KIND_SHIFT", CONN_KIND_SHIFT),
        ("INFO_LENGTH_MASK", INFO_LENGTH_MASK),
        ("INFO_VALID", INFO_VALID),
        ("INFO_SOURCE_SHIFT", INFO_SOURCE_SHIFT),
        ("INFO_SLOT_SHIFT", INFO_SLOT_SHIFT),
        ("ERR_SEND_UNCONNECTED", ERR_SEND_UNCONNECTED),
        ("ERR_SEND_LENGTH", ERR_SEND_LENGTH),
        ("ERR_ACK_UNCONNECTED", ERR_ACK_UNCONNECTED),
        ("ERR_BAD_TILE", ERR_BAD_TILE),
        ("ERR_BAD_PACKET", ERR_BAD_PACKET),
        ("SPIN_DEFAULT", SPIN_DEFAULT),
    ]:
        lines.append(f"#define {prefix}_{name:<22} 0x{value:x}u")
    lines += ["", f"#endif /* {prefix}_WINDOW_H */"]
    return "\n".join(lines) + "\n"
