#
# Direct window of a core to its tile's Subutai port: requests as single stores, replies as
# (blocking) loads, on the tile's local bus instead of through the CSR bridge.
#
"""Subutai window: the core's fast path to the Subutai port of its tile.

Through the CSRs a request is a status read, three writes and, for its reply, three reads, each
crossing the tile's CSR bridge (about 9 cycles), and a core that waits sleeps until the reply
interrupt. The window is a Wishbone slave of the tile's crossbar, so each access is a
single-cycle access of the tile's local bus:

- **A request is one store** of the sync id to the op's address (``OP_BASE + 4*op``, or
  ``OP_REPLY_BASE + 4*op`` to ask a reply even for a posted op). Its value is the ``VALUE``
  register (written beforehand when an op needs one), its thread the ``THREAD`` register, its core
  the tile's. Posted ops (unlock, signal, broadcast) are then done: the store is acknowledged as
  soon as the port's request FIFO takes the request.
- **A reply is one load.** ``REPLY`` blocks the core on the bus until a reply is at the head of
  the reply FIFO, pops it and returns its *info word* (:func:`info_word`): status, a "valid" bit
  and the low bits of the reply's value (a lock grant's ``GRANT_LOCAL``, a barrier's serial bit).
  The whole id and value of the last reply taken stay readable at ``ID`` and ``VALUE``.
  ``REPLY_BRIEF`` waits at most ``SPIN`` cycles and returns an info word with "valid" clear when
  nothing came: a core that expects a quick answer (a free mutex) can wait that long, and, when it
  did not come, invalidate its data cache while it waits for the rest (nothing else touches memory
  meanwhile).

The window has no time-out: the tile's crossbar has none, so a wait of any length completes when
the reply arrives. The core takes no interrupt while its load waits, and every other source is
served once the load completes.

The window is the port's only register interface. Code that must not stall on the bus (the
threads of an operating system, a wait with a deadline) issues its request with the same stores
and sleeps until the port's ``reply`` interrupt rises (``STATUS`` bit 0 says so too): a ``REPLY``
load then returns at once, and ``ID``, ``VALUE`` and ``REPLY_THREAD`` say the rest of the reply,
so a handler can give each reply to its thread.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone

# Register map (byte offsets in the window). One source of truth: exported as C by c_header().
WINDOW_SIZE = 0x1000
VALUE = 0x000  # W: value of the next requests. R: value of the last reply taken.
ID = 0x004  # R: sync id of the last reply taken.
THREAD = 0x008  # W: thread id of the next requests (the reply's thread field).
SPIN = 0x00C  # W: cycles a REPLY_BRIEF load waits at most.
REPLY = 0x010  # R: waits for a reply, pops it, returns its info word.
REPLY_BRIEF = 0x014  # R: as REPLY, but gives up after SPIN cycles (info word without VALID).
STATUS = 0x018  # R: a reply waits [0]; a request can be issued now [8].
REPLY_THREAD = 0x01C  # R: thread of the last reply taken.
OP_BASE = 0x100  # W: request op (offset - OP_BASE)/4 on the sync id written.
OP_REPLY_BASE = 0x200  # W: the same, asking a reply even for a posted op.
OP_COUNT = 64  # Ops 0x00..0x3f: every core and engine op.

# Info word of a reply: status [6:0], VALID [7], value [23:0] in [31:8].
INFO_STATUS_MASK = 0x7F
INFO_VALID = 1 << 7
INFO_VALUE_SHIFT = 8

SPIN_DEFAULT = 64


def info_word(status, value, valid=1):
    """The info word a reply load returns (the reference of the tests)."""
    return (
        (status & INFO_STATUS_MASK) | (INFO_VALID if valid else 0) | ((value & 0xFFFFFF) << INFO_VALUE_SHIFT)
    )


class SubutaiWindow(LiteXModule):
    """``request``: source of requests for the port's request FIFO (``P.REQUEST_LAYOUT``);
    ``reply``: the head of the port's reply FIFO (sync_id, op, thread, value), popped here;
    ``tile_id``: the core field of every request. ``bus``: the Wishbone slave (word addressed,
    :data:`WINDOW_SIZE` bytes)."""

    def __init__(self, request, reply, tile_id, spin_default=SPIN_DEFAULT):
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        word = bus.adr[0:10]  # Word offset in the window.
        access = bus.cyc & bus.stb & ~bus.ack
        reading = access & ~bus.we
        writing = access & bus.we
        is_op = (word[8:10] == 0) & (word[6] ^ word[7])  # OP_BASE or OP_REPLY_BASE

        value = Signal(32)  # Value of the next requests.
        thread = Signal(16)
        spin = Signal(16, reset=spin_default)
        last_id = Signal(32)
        last_value = Signal(32)
        last_thread = Signal(16)
        waited = Signal(16)  # Cycles the current REPLY_BRIEF load has waited.

        self.sync += bus.ack.eq(0)

        # Requests: a store to an op address; acknowledged once the request FIFO takes it.
        self.comb += [
            request.valid.eq(writing & is_op),
            request.sync_id.eq(bus.dat_w),
            request.value.eq(value),
            request.op.eq(word[0:6]),
            request.core.eq(tile_id),
            request.thread.eq(thread),
            request.reply.eq(word[7]),
        ]
        self.sync += If(request.valid & request.ready, bus.ack.eq(1))

        # Registers.
        self.sync += If(
            writing & ~is_op,
            bus.ack.eq(1),
            Case(
                word,
                {
                    VALUE >> 2: value.eq(bus.dat_w),
                    THREAD >> 2: thread.eq(bus.dat_w),
                    SPIN >> 2: spin.eq(bus.dat_w),
                    "default": [],
                },
            ),
        )

        # Replies: a load of REPLY (or REPLY_BRIEF) pops the head when there is one.
        info = Signal(32)
        self.comb += info.eq(Cat(reply.op[0:7], C(1, 1), reply.value[0:24]))
        wants_reply = reading & ((word == REPLY >> 2) | (word == REPLY_BRIEF >> 2))
        self.comb += reply.ready.eq(wants_reply & reply.valid)
        self.sync += [
            If(
                wants_reply,
                If(
                    reply.valid,
                    bus.ack.eq(1),
                    bus.dat_r.eq(info),
                    last_id.eq(reply.sync_id),
                    last_value.eq(reply.value),
                    last_thread.eq(reply.thread),
                    waited.eq(0),
                )
                .Elif(
                    (word == REPLY_BRIEF >> 2) & (waited >= spin),
                    bus.ack.eq(1),
                    bus.dat_r.eq(0),
                    waited.eq(0),
                )
                .Else(
                    waited.eq(waited + 1),
                ),
            ).Elif(
                reading,
                bus.ack.eq(1),
                Case(
                    word,
                    {
                        VALUE >> 2: bus.dat_r.eq(last_value),
                        ID >> 2: bus.dat_r.eq(last_id),
                        STATUS >> 2: bus.dat_r.eq(Cat(reply.valid, C(0, 7), request.ready)),
                        REPLY_THREAD >> 2: bus.dat_r.eq(last_thread),
                        "default": bus.dat_r.eq(0),
                    },
                ),
            ),
        ]
        # A store to a reserved offset is acknowledged and ignored (above), like a read of one.
        # THREAD and SPIN read as 0: software knows what it wrote, and their read-back took 30
        # LUT4 of the read multiplexer on an ECP5.


def c_header(prefix="SUBUTAI_WINDOW"):
    """C header of the window's register map and info word."""
    lines = [
        "/* Generated from gateware/ni/subutai_window.py: do not edit. */",
        f"#ifndef {prefix}_H",
        f"#define {prefix}_H",
        "",
    ]
    for name, value in [
        ("SIZE", WINDOW_SIZE),
        ("VALUE", VALUE),
        ("ID", ID),
        ("THREAD", THREAD),
        ("SPIN", SPIN),
        ("REPLY", REPLY),
        ("REPLY_BRIEF", REPLY_BRIEF),
        ("STATUS", STATUS),
        ("REPLY_THREAD", REPLY_THREAD),
        ("OP_BASE", OP_BASE),
        ("OP_REPLY_BASE", OP_REPLY_BASE),
        ("OP_COUNT", OP_COUNT),
        ("INFO_STATUS_MASK", INFO_STATUS_MASK),
        ("INFO_VALID", INFO_VALID),
        ("INFO_VALUE_SHIFT", INFO_VALUE_SHIFT),
        ("SPIN_DEFAULT", SPIN_DEFAULT),
    ]:
        lines.append(f"#define {prefix}_{name:<18} 0x{value:x}u")
    lines += ["", f"#endif /* {prefix}_H */"]
    return "\n".join(lines) + "\n"
