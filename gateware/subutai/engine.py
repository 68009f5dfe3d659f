#
# Subutai-HW engine: the synchronization FSM and its scratchpad (SPM), one per network interface.
#
"""Subutai-HW engine (TPDS'21 §V): mutexes, barriers, condition variables and read-write locks in
hardware.

The engine serves one request at a time from ``sink`` and emits replies and engine-to-engine
requests on ``source``; the surrounding NI routes both (see :mod:`gateware.subutai.protocol` for
op codes, ids and packets, and ``docs/subutai-hw.md`` for the design).

Scratchpad
==========

One Migen :class:`Memory` of ``spm_bytes/8`` 64-bit words (one BRAM pair on 7-series / ECP5),
used as a simple dual-port RAM: one synchronous read port (read latency **m = 1 cycle**: the
address is presented in cycle t, the word is in the read register in cycle t+1) and one write
port with byte enables (a queue element's ``next`` byte, or a control word's queue and value
without its generation, kind and alloc bit, is rewritten without a read-modify-write).
Words ``[0, n_queue)`` are queue elements (a queue pointer is an SPM address), words
``[n_queue, n_queue + n_ctrl)`` control structures.

Control structure (one word; TPDS'21 Fig. 6 packed into 64 bits, the id itself is not stored: the
index is implicit in the address and the NI id is the engine's)::

    bits  7:0  head       first queue element (0xff: empty queue)
         15:8  tail       last queue element
        26:16  gen        generation (must match the id's)
        29:27  kind       0 mutex, 1 error-checking mutex, 2 barrier, 3 cond, 4 rwlock
           30  alloc      the structure is allocated (TPDS'21's "F" bit)
        63:32  value      mutex:   owner thread [47:32], owner core [55:48], locked [56],
                                   released [57] (free, and [55:48] is the core that unlocked it
                                   last: its LOCK grant says GRANT_LOCAL)
                          rwlock:  as a mutex's while a writer holds it (locked [56]), else the
                                   readers holding it [47:32]
                          barrier: arrivals missing [47:32], count [63:48]
                          cond:    the waiters' mutex id (bit 63 clear: several mutexes)
                          free:    next free control structure [47:32] (0xffff: none)

Queue element (one word; TPDS'21 Fig. 7: the queues are singly linked because no operation removes
a waiter from the middle of a queue, so "prev" would only cost writes)::

    bits  7:0  next       next element of the queue or of the free list (0xff: none)
         15:8  core       waiting thread's core
        31:16  thread     waiting thread's id
        63:32  aux        condition waiters: the mutex id to requeue on; read-write lock
                          waiters: 1 for a writer, 0 for a reader (unused otherwise)

Free lists: control structures and queue elements each form a LIFO list whose head is a
register; ``INIT`` builds both after reset (the paper leaves this to the driver).

A condition variable's ``value`` field holds the mutex id its current waiters wait with (bit 31
cleared if they used different mutexes): a broadcast whose waiters all use one mutex of this
engine splices the whole queue onto the mutex's queue in constant time.

Engine-to-engine requests addressed to this engine itself are *self requests*, served before
``sink`` and never sent through ``source``; at most two are pending, and they are made of
registers the engine holds anyway (:class:`EngineRequestInput`).

:class:`SubutaiEngine` builds the datapath in its constructor (request input, scratchpad, packet
output, the latched control structure, the decode) and then one FSM, whose states each operation
family adds in a method of its own: ``_add_common_states`` (INIT, IDLE, DECODE),
``_add_allocation_states``, ``_add_mutex_states``, ``_add_barrier_states`` and
``_add_barrier_release_states``, ``_add_condition_states``, ``_add_rwlock_states`` and
``_add_error_states``. The constructor names the states first, in the order of their encoding,
so the families can be read (and changed) apart without moving a state's number.
"""

from functools import reduce
from operator import or_
from types import SimpleNamespace

from migen import *
from migen.genlib.fsm import FSM, NextState, NextValue

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from gateware.subutai import protocol as P

QNIL = P.QUEUE_NIL


# Submodules --------------------------------------------------------------------------------------


class SourceSelect(Module):
    """A datapath field whose source the FSM states choose by name.

    ``sources``: name -> value, in order; the first is the default of a state that chooses none.
    ``select(name)`` is the statement a state uses; ``value`` is the field; ``sel``: share
    another field's select code. Why not assign the field in each state: the FSM's Case then
    builds one multiplexer tree per field *per state and condition*, where this is one
    multiplexer over the distinct sources behind a small select code: about 15 % fewer LUTs for
    the same cycles (the engine's LUTs are in results/noc_resources.md).
    """

    def __init__(self, width, sources, sel=None):
        self.names = list(sources)
        self.sel = Signal(max=max(2, len(self.names))) if sel is None else sel
        self.value = Signal(width)

        # # #

        cases = {i: self.value.eq(v) for i, v in enumerate(sources.values())}
        cases["default"] = cases[len(self.names) - 1]
        self.comb += Case(self.sel, cases)

    def select(self, name):
        return self.sel.eq(self.names.index(name))


class EngineScratchpad(LiteXModule):
    """The scratchpad (SPM) and its free lists.

    One Migen :class:`Memory` of ``depth`` 64-bit words: a synchronous read port (``rd``, read
    latency 1 cycle, READ_FIRST: the word is re-read every cycle, stable while the address is
    held) and a write port with byte enables (``wr``: a queue element's ``next`` byte is
    rewritten without a read-modify-write). Queue elements at words ``[0, n_queue)``, control
    structures at ``[cbase, cbase + n_ctrl)`` with ``cbase = n_queue``: a queue pointer read
    from the SPM is an SPM address as is (no adder between the read data and the read address on
    the DECODE/WALK paths). The free-list heads and counts are registers the FSM updates.
    """

    # Write enables of a word's fields: byte 0 (a control word's head, a queue element's next),
    # byte 1 (tail, core), the middle (gen, kind, alloc; a queue element's thread), the value.
    WE_BYTE0, WE_BYTE1, WE_MIDDLE, WE_VALUE = 0x01, 0x02, 0x0C, 0xF0

    def __init__(self, depth, n_ctrl, n_queue):
        self.cbase = n_queue
        self.mem = Memory(64, depth, name="spm")
        self.rd = rd = self.mem.get_port(mode=READ_FIRST)
        self.wr = self.mem.get_port(write_capable=True, we_granularity=8)
        self.specials += rd, self.wr

        self.ctrl_free_head = Signal(16, reset=P.CTRL_NIL)  # INIT builds the lists from here.
        self.qfree_head = Signal(8, reset=QNIL)
        self.free_ctrl = Signal(max=n_ctrl + 1, reset=n_ctrl)
        self.free_queue = Signal(max=n_queue + 1, reset=n_queue)

        # Views of the read data: a control word, and a queue element.
        d = rd.dat_r
        self.d_head, self.d_tail, self.d_gen, self.d_kind = d[0:8], d[8:16], d[16:27], d[27:30]
        self.d_alloc, self.d_val = d[30], d[32:64]
        self.qd_next, self.qd_core, self.qd_thread, self.qd_aux = d[0:8], d[8:16], d[16:32], d[32:64]

    def add_write_datapath(self, adr, byte0, byte1, middle, value):
        """The write port's address and data, each a :class:`SourceSelect` (dicts of sources
        by name): ``adr``, ``byte0`` (a control word's head, a queue element's next), ``byte1``
        (tail, core), ``middle`` (bits 31:16: generation, kind, alloc; a queue element's
        thread) and ``value`` (bits 63:32). The write helpers below name their sources."""
        self.w_adr = SourceSelect(len(self.wr.adr), adr)
        self.w_byte0 = SourceSelect(8, byte0)
        self.w_byte1 = SourceSelect(8, byte1)
        self.w_middle = SourceSelect(16, middle)
        self.w_value = SourceSelect(32, value)
        self.submodules += self.w_adr, self.w_byte0, self.w_byte1, self.w_middle, self.w_value
        self.comb += [
            self.wr.adr.eq(self.w_adr.value),
            self.wr.dat_w.eq(
                Cat(self.w_byte0.value, self.w_byte1.value, self.w_middle.value, self.w_value.value)
            ),
        ]

    def write(self, adr, byte0, byte1, middle, value, we=0xFF):
        """Write the word made of the named sources at the named address (a field named
        ``None`` is left to its default source: its bytes must be outside ``we``)."""
        fields = [
            (self.w_byte0, byte0, self.WE_BYTE0),
            (self.w_byte1, byte1, self.WE_BYTE1),
            (self.w_middle, middle, self.WE_MIDDLE),
            (self.w_value, value, self.WE_VALUE),
        ]
        for _, name, mask in fields:
            assert name is not None or not (we & mask)
        return [self.wr.we.eq(we), self.w_adr.select(adr)] + [
            field.select(name) for field, name, _ in fields if name is not None
        ]

    def write_next(self, adr, nxt):
        """Rewrite the ``next`` byte of the queue element at the named address."""
        return [self.wr.we.eq(self.WE_BYTE0), self.w_adr.select(adr), self.w_byte0.select(nxt)]


class EngineRequestInput(LiteXModule):
    """Where the FSM takes its next request (a pending self request first, else ``sink``), and
    the latched request (``r_*``) the op states work on.

    Engine-to-engine requests for this same engine (a condition wait on a cond and a mutex both
    hosted here, a broadcast's next step) never go out on ``source``: they are *self requests*,
    pending until the FSM is back in IDLE and served there before any request from ``sink``, so
    the engine cannot deadlock on its own output whatever the NI's loop-back buffering. None is
    stored as a packet: each is made of registers the engine holds anyway, when it is taken
    (docs/subutai-hw.md):

    - WAIT_CHECK, COND_ENQUEUE, UNLOCK_FOR (``push_swap``, op ``push_op``): the request that
      emits one names the other structure in its value and carries its own id as the value:
      ``r_sync`` and ``r_value`` swap.
    - LOCK_FOR (``push_swap`` with ``push_waiter``): the same swap, ``r_value`` having taken
      the waiter's mutex (``mutex``) in the state that emits it (``load_mutex``); its thread and
      core are the waiter's, whose queue element is still in the SPM's read register when the
      request is taken (``waiter``).
    - BROADCAST_NEXT (``push_next``): the cond (``r_value``, which takes ``r_sync`` in the
      state that emits it (``load_cond``) unless a LOCK_FOR is pending, whose swap puts the cond
      there), the broadcaster's thread and core (``who``) and its reply flag (``reply``), kept
      in 25 register bits.

    Only the two pending flags depend on the FSM emitting a self request (``push_*``): the
    registers of what is pending load while nothing is pending, and ``r_value`` on the states'
    ``load_*`` strobes, whether the packet leaves in that cycle or waits for the output. So the
    emission (the output's skid register, the SPM's read data through the packet's destination)
    reaches two flip-flops, not the enables of some 70 (the critical path of a 4-tile ECP5
    build ran from the skid register through the FSM into ``r_value``, 19.9 ns).

    At most two are pending, a LOCK_FOR and then a BROADCAST_NEXT (one step of a broadcast),
    taken in that order. A queue of two whole requests served the same requests in the same
    cycles with about 200 LUTs and flip-flops more.
    """

    def __init__(self, sink, mutex, waiter):
        self.take = take = Signal()  # Strobe: the FSM takes a request (IDLE).
        self.accept = accept = Signal()  # A request is taken this cycle.
        self.pending = pending = Signal()  # A self request is pending.
        self.next_op = Signal(8)  # Op of the request taken (counters).
        self.next_sync = Signal(32)  # Its sync id (IDLE's read address).
        self.next_alloc = Signal()  # It is an allocation (from sink).
        # Self requests emitted (strobes and what they need).
        self.push_swap = Signal()
        self.push_op = Signal(8)
        self.push_waiter = Signal()
        self.push_next = Signal()
        self.who = Signal(24)
        self.reply = Signal()
        # States that may emit a LOCK_FOR / a BROADCAST_NEXT (r_value takes what it will need).
        self.load_mutex = Signal()
        self.load_cond = Signal()
        # Latched request.
        self.r_sync = r_sync = Signal(32)
        self.r_op = r_op = Signal(8)
        self.r_core = r_core = Signal(8)
        self.r_thread = r_thread = Signal(16)
        self.r_value = r_value = Signal(32)
        self.r_reply = r_reply = Signal()

        # # #

        p_swap, p_op, p_waiter = Signal(), Signal(8), Signal()
        p_next, p_who, p_reply = Signal(), Signal(24), Signal()
        self.comb += [
            pending.eq(p_swap | p_next),
            accept.eq(take & (pending | sink.valid)),
            sink.ready.eq(take & ~pending),
            If(
                p_swap,
                self.next_op.eq(p_op),
            )
            .Elif(
                p_next,
                self.next_op.eq(P.OP_BROADCAST_NEXT),
            )
            .Else(
                self.next_op.eq(sink.op),
            ),
            self.next_sync.eq(Mux(pending, r_value, sink.sync_id)),
            self.next_alloc.eq(~pending & reduce(or_, [sink.op == op for op in P.ALLOC_OPS])),
        ]
        self.sync += [
            If(
                accept,
                If(
                    p_swap,
                    r_sync.eq(r_value),
                    r_value.eq(r_sync),
                    r_op.eq(p_op),
                    r_reply.eq(0),
                    If(p_waiter, Cat(r_thread, r_core).eq(waiter)),
                    p_swap.eq(0),
                )
                .Elif(
                    p_next,
                    r_sync.eq(r_value),
                    r_op.eq(P.OP_BROADCAST_NEXT),
                    Cat(r_thread, r_core).eq(p_who),
                    r_reply.eq(p_reply),
                    p_next.eq(0),
                )
                .Else(
                    r_sync.eq(sink.sync_id),
                    r_op.eq(sink.op),
                    r_core.eq(sink.core),
                    r_thread.eq(sink.thread),
                    r_value.eq(sink.value),
                    r_reply.eq(sink.reply),
                ),
            ),
            If(self.push_swap, p_swap.eq(1)),
            If(~p_swap, p_op.eq(self.push_op), p_waiter.eq(self.push_waiter)),
            If(self.push_next, p_next.eq(1)),
            If(~p_next, p_who.eq(self.who), p_reply.eq(self.reply)),
            If(self.load_mutex, r_value.eq(mutex)),
            If(self.load_cond & ~p_swap, r_value.eq(r_sync)),
        ]


class EnginePacketOutput(LiteXModule):
    """The output register and its skid register: the FSM "emits" a packet (``send``) when the
    skid register is empty (``can_emit``); the packet goes to the output register (``source``)
    when that is empty or being drained, else to the skid register, which refills the output
    register as it drains. So the FSM never waits on a ready ``source``, never loses a packet on
    a stalled one, and ``source.ready`` (the port's arbitration and FIFO levels) only enables
    registers: it is not on the path into the FSM, where it was the critical path of the 1-, 2-
    and 8-tile ECP5 builds. A request for this engine itself becomes a pending self request of
    ``request`` (:class:`EngineRequestInput`) instead; the FSM emits one only when it could
    emit a packet (``can_emit``), as for any other."""

    def __init__(self, source, request, ni_id):
        self.ni_id = ni_id
        self.emit = emit = Signal()
        self.o = o = Record(P.PACKET_LAYOUT)
        self.o_reply = o_reply = Signal()  # Reply flag of a self request.
        self.o_self = o_self = Signal()
        self.can_emit = Signal()
        to_self = Signal()
        self.comb += [
            source.first.eq(1),
            source.last.eq(1),
            to_self.eq(emit & o_self),
            request.push_next.eq(to_self & (o.op == P.OP_BROADCAST_NEXT)),
            request.push_swap.eq(to_self & (o.op != P.OP_BROADCAST_NEXT)),
            request.push_op.eq(o.op),
            request.push_waiter.eq(o.op == P.OP_LOCK_FOR),
            request.who.eq(Cat(o.thread, o.core)),
            request.reply.eq(o_reply),
        ]
        # The data registers load whatever the packet fields hold whenever they may (an empty
        # skid register, an output register empty or draining), emitted or not: only the two
        # valid flags depend on ``emit``, so the FSM's decision (from the SPM's read data) does
        # not reach the enables of some 200 flip-flops (it did: 20.1 ns on a 4-tile ECP5 build).
        skid_valid = Signal()
        skid = Record(P.PACKET_LAYOUT)
        stalled = Signal()
        to_noc = Signal()  # A packet for source (not for this engine itself) is emitted.
        self.comb += [
            self.can_emit.eq(~skid_valid),
            stalled.eq(source.valid & ~source.ready),
            to_noc.eq(emit & ~o_self),
        ]
        self.sync += [
            If(
                ~stalled,
                source.valid.eq(skid_valid | to_noc),
                source.payload.raw_bits().eq(Mux(skid_valid, skid.raw_bits(), o.raw_bits())),
            ),
            If(~skid_valid, skid.eq(o)),
            If(
                stalled & to_noc,
                skid_valid.eq(1),
            ).Elif(
                source.ready,
                skid_valid.eq(0),
            ),
        ]

    def add_datapath(self, who, sync_id, value):
        """The packet's fields from :class:`SourceSelect` s: ``who`` (24 bits: thread, core),
        ``sync_id`` and ``value`` (dicts of sources by name). A reply goes to its thread's core;
        any other packet to the host of its sync id (:data:`protocol.ID_NI_SLICE`)."""
        self.o_sync = SourceSelect(32, sync_id)
        self.o_value = SourceSelect(32, value)
        self.submodules += self.o_sync, self.o_value
        o = self.o
        self.comb += [
            # A request for this engine itself: its sync id's host is this one (compared on the
            # sync id, not on the destination chosen from it: one multiplexer less on the path
            # from the SPM's read data to the pending self request's flags).
            self.o_self.eq(~o.op[7] & (o.sync_id[P.ID_NI_SLICE] == self.ni_id)),
            o.sync_id.eq(self.o_sync.value),
            o.value.eq(self.o_value.value),
            Cat(o.thread, o.core).eq(who.value),
            o.dest.eq(Mux(o.op[7], o.core, o.sync_id[P.ID_NI_SLICE])),
        ]

    def send(self, op, sync_id, value, reply=0):
        """Emit a packet: ``op``, the named sources of ``sync_id`` and ``value``; its thread
        and core are the engine's current ``who``."""
        return [
            self.emit.eq(1),
            self.o.op.eq(op),
            self.o_sync.select(sync_id),
            self.o_value.select(value),
            self.o_reply.eq(reply),
        ]


class EngineCounters(LiteXModule):
    """Event counters, in :data:`protocol.REQUEST_COUNTERS` + :data:`protocol.COUNTERS` order
    (``counters``: name -> 32-bit Signal; empty without ``with_counters``), and the last error of
    a request without reply (always: it is how a posted request's error is reported)."""

    def __init__(self, with_counters=True):
        self.counters = counters = {}
        if with_counters:
            for name in P.REQUEST_COUNTERS:
                counters[name] = Signal(32, name=f"ev_{name}")
            for name, _ in P.COUNTERS:
                counters[name] = Signal(32, name=f"ev_{name}")
        self.last_err_sync = Signal(32)
        self.last_err_op = Signal(8)
        self.last_err_status = Signal(8)
        # Strobes from the FSM.
        self.grant_inc = Signal()
        self.error_inc = Signal()
        self.silent_inc = Signal()

    def count(self, accept, op, out, scratchpad, n_queue, request, status, busy):
        """Counts requests taken (``accept`` of ``op``), packets emitted (``out``), grants and
        errors (the strobes), the queue high-water mark and the busy cycles."""
        c = self.counters
        self.sync += If(
            self.silent_inc,
            self.last_err_sync.eq(request.r_sync),
            self.last_err_op.eq(request.r_op),
            self.last_err_status.eq(status),
        )
        if not c:
            return
        in_use = Signal(max=n_queue + 1)
        self.comb += [
            in_use.eq(n_queue - scratchpad.free_queue),
            c["free_queue"].eq(scratchpad.free_queue),
            c["free_ctrl"].eq(scratchpad.free_ctrl),
        ]
        req_cases = {
            P.OPS[name[4:].upper()]: c[name].eq(c[name] + 1)
            for name in P.REQUEST_COUNTERS
            if name != "req_other"
        }
        req_cases["default"] = c["req_other"].eq(c["req_other"] + 1)
        self.sync += [
            If(accept, Case(op, req_cases)),
            If(self.grant_inc, c["grants"].eq(c["grants"] + 1)),
            If(
                out.emit,
                If(
                    out.o.op[7],
                    c["replies"].eq(c["replies"] + 1),
                )
                .Elif(
                    out.o_self,
                    c["self_requests"].eq(c["self_requests"] + 1),
                )
                .Else(
                    c["e2e"].eq(c["e2e"] + 1),
                ),
            ),
            If(self.error_inc, c["errors"].eq(c["errors"] + 1)),
            If(self.silent_inc, c["silent_errors"].eq(c["silent_errors"] + 1)),
            If(in_use > c["queue_hwm"], c["queue_hwm"].eq(in_use)),
            If(busy, c["busy_cycles"].eq(c["busy_cycles"] + 1)),
        ]


# Engine -------------------------------------------------------------------------------------------


class SubutaiEngine(LiteXModule):
    """Subutai-HW synchronization engine of one tile.

    Parameters
    ----------
    ni_id : int
        This tile's id (0..127), the ``ni`` field of every id the engine allocates.
    n_tiles : int
        Number of tiles; engine-to-engine requests to a tile >= ``n_tiles`` are refused (EINVAL).
    spm_bytes : int
        Scratchpad size in bytes (multiple of 8).
    n_ctrl : int or None
        Control structures; default a quarter of the SPM words (see
        :func:`gateware.subutai.protocol.spm_geometry`), the rest are queue elements (<= 255).
    with_counters : bool
        Build the event counters (``counters``). They are a third of the engine on an FPGA
        (seventeen 32-bit counters): the simulated SoC has them, the boards do not.

    Interface
    ---------
    ``sink``   requests, :data:`protocol.REQUEST_LAYOUT`, one per transfer.
    ``source`` packets, :data:`protocol.PACKET_LAYOUT`, one per transfer; registered, may be
               back-pressured at will (the FSM waits; nothing is dropped).
    ``ready``  the FSM is in IDLE with no self request pending (a request offered now is accepted).
    ``idle``   ``ready`` and no packet pending on ``source``.
    ``counters`` dict name -> 32-bit Signal, in :data:`protocol.REQUEST_COUNTERS` +
    :data:`protocol.COUNTERS` order: requests served per op (from ``sink`` or self requests),
    grants, replies, engine-to-engine packets, errors, queue high-water mark, free queue elements
    and control structures, busy cycles; plus ``last_err_sync``/``last_err_op``/
    ``last_err_status``: the last error of a request that had no reply (posted, ``reply`` = 0).
    """

    def __init__(self, ni_id, n_tiles, spm_bytes=2048, n_ctrl=None, with_counters=True):
        # ni_id: an int, or a Signal when the tile is a module of its own (soc/tile_block.py).
        assert n_tiles <= P.MAX_TILES and (not isinstance(ni_id, int) or 0 <= ni_id < n_tiles)
        depth, n_ctrl, n_queue = P.spm_geometry(spm_bytes, n_ctrl)
        self.ni_id, self.n_tiles = ni_id, n_tiles
        self.spm_bytes, self.depth, self.n_ctrl, self.n_queue = spm_bytes, depth, n_ctrl, n_queue

        self.sink = sink = stream.Endpoint(P.REQUEST_LAYOUT)
        self.source = source = stream.Endpoint(P.PACKET_LAYOUT)
        self.ready = Signal()  # FSM in IDLE, no self request: a sink request is taken now.
        self.idle = Signal()  # ready, and no packet pending on source.

        # Submodules -----------------------------------------------------------------------------
        self.events = events = EngineCounters(with_counters)
        self.counters = events.counters
        self.last_err_sync = events.last_err_sync
        self.last_err_op = events.last_err_op
        self.last_err_status = events.last_err_status
        self.spm = spm = EngineScratchpad(depth, n_ctrl, n_queue)
        self.request = request = EngineRequestInput(
            sink, mutex=spm.qd_aux, waiter=Cat(spm.qd_thread, spm.qd_core)
        )
        self.output = output = EnginePacketOutput(source, request, ni_id)
        self.mem = spm.mem
        rd, cbase = spm.rd, spm.cbase
        ctrl_free_head, qfree_head = spm.ctrl_free_head, spm.qfree_head
        free_ctrl, free_queue = spm.free_ctrl, spm.free_queue
        take, accept = request.take, request.accept
        r_sync, r_op, r_core = request.r_sync, request.r_op, request.r_core
        r_thread, r_value, r_reply = request.r_thread, request.r_value, request.r_reply
        can_emit = output.can_emit
        write, write_next = spm.write, spm.write_next
        grant_inc, error_inc, silent_inc = events.grant_inc, events.error_inc, events.silent_inc

        id_idx = r_sync[P.ID_INDEX_SHIFT : P.ID_INDEX_SHIFT + P.ID_INDEX_BITS]
        id_gen = r_sync[P.ID_GEN_SHIFT : P.ID_GEN_SHIFT + P.ID_GEN_BITS]
        id_kind = r_sync[P.ID_KIND_SHIFT : P.ID_KIND_SHIFT + P.ID_KIND_BITS]
        id_ni = r_sync[P.ID_NI_SLICE]
        id_f = r_sync[P.ID_F_BIT]
        me = Cat(r_thread, r_core)  # 24-bit owner/waiter tag.

        # Latched control structure (fields) -----------------------------------------------------
        cw_head = Signal(8)
        cw_tail = Signal(8)
        cw_gen = Signal(P.ID_GEN_BITS)
        cw_kind = Signal(P.ID_KIND_BITS)
        cw_val = Signal(32)
        owner = cw_val[0:24]
        locked = cw_val[24]
        released = cw_val[25]
        # A LOCK/TRYLOCK grant of a free mutex this core released last (not LOCK_FOR: a condition
        # wake-up always invalidates).
        grant_local = Signal()
        self.comb += grant_local.eq(released & (cw_val[16:24] == r_core) & (r_op != P.OP_LOCK_FOR))
        readers = cw_val[0:16]  # Read-write lock: its readers (while no writer holds it).
        b_left = cw_val[0:16]  # Barrier: arrivals still missing in this round.
        b_max = cw_val[16:32]

        qptr = Signal(8)  # Queue element being worked on (its word is in the read register).
        link = Signal(8)  # Old tail (DECODE: enqueues, barrier walks), a broadcast's next waiter, a
        # splice's mutex tail.
        status = Signal(7)  # Error status for the ERROR state.

        # Read data views.
        d = rd.dat_r
        d_head, d_gen, d_kind, d_alloc, d_val = spm.d_head, spm.d_gen, spm.d_kind, spm.d_alloc, spm.d_val
        qd_next, qd_core, qd_thread, qd_aux = spm.qd_next, spm.qd_core, spm.qd_thread, spm.qd_aux

        # Packets and SPM writes name their sources (see the datapath below). ``who``: whose
        # thread and core a packet carries and an owner tag is made of: the requester's ("req")
        # or the queue element's in the read register ("queue").
        def send(op, sync_id="req", value="zero", who="req", reply=0):
            return output.send(op, sync_id, value, reply) + [self.who.select(who)]

        def reply(st, value="zero", sync_id="req", who="req"):
            return send(C(P.OP_REPLY, 8) | st, sync_id, value, who)

        def lock_for():
            # Requeue of the woken condition waiter at the queue head onto its mutex (at the
            # mutex's host).
            return send(P.OP_LOCK_FOR, sync_id="aux", value="req", who="queue")

        def write_ctrl(idx, head, tail, middle, value, we=0xFF):
            # A control word: the named index (w_idx, below) and the named fields (bytes not in
            # ``we`` keep what the SPM holds).
            return write("ctrl", head, tail, middle, value, we) + [w_idx.select(idx)]

        # Bytes of a control word (write enables): head, tail, value.
        WE_HEAD, WE_TAIL, WE_VALUE = spm.WE_BYTE0, spm.WE_BYTE1, spm.WE_VALUE

        def write_cw(value="cw", head="cw_head", tail="cw_tail"):
            # The structure's generation, kind and alloc bit stay as they are: not rewritten (one
            # source less on the write port's middle field).
            return write_ctrl("id", head, tail, None, value, we=WE_HEAD | WE_TAIL | WE_VALUE)

        # Default read address: the current queue element (holding it keeps its word readable).
        self.comb += rd.adr.eq(qptr)

        # Helpers ---------------------------------------------------------------------------------
        def err(code):
            return [NextValue(status, code), NextState("ERROR")]

        def enqueue(aux):
            # The free element qptr (prefetched in DECODE) becomes the new tail.
            return [
                write("qptr", "nil", "req_core", "req_thread", aux),
                NextValue(qfree_head, qd_next),
                NextValue(free_queue, free_queue - 1),
                NextValue(cw_tail, qptr),
                If(
                    cw_head == QNIL,
                    NextValue(cw_head, qptr),
                    NextState("ENQ_CTRL"),
                ).Else(
                    NextState("ENQ_LINK"),  # link: the old tail (DECODE).
                ),
            ]

        # Combinational decode -------------------------------------------------------------------
        id_ok = Signal()  # r_sync names an allocated structure of this engine (d = its word).
        self.comb += id_ok.eq(
            id_f & (id_ni == ni_id) & (id_idx < n_ctrl) & d_alloc & (d_kind == id_kind) & (d_gen == id_gen)
        )
        is_mutex = id_kind[1:] == 0
        is_barrier = id_kind == P.KIND_BARRIER
        is_cond = id_kind == P.KIND_COND
        is_rwlock = id_kind == P.KIND_RWLOCK
        # A mutex id in r_value (condition waits) that can be routed.
        v_ni = r_value[P.ID_NI_SLICE]
        v_mutex_ok = Signal()
        v_cond_ok = Signal()
        self.comb += [
            v_mutex_ok.eq(
                r_value[P.ID_F_BIT]
                & (r_value[P.ID_KIND_SHIFT + 1 : P.ID_KIND_SHIFT + P.ID_KIND_BITS] == 0)
                & (v_ni < n_tiles)
            ),
            v_cond_ok.eq(
                r_value[P.ID_F_BIT]
                & (r_value[P.ID_KIND_SHIFT : P.ID_KIND_SHIFT + P.ID_KIND_BITS] == P.KIND_COND)
                & (v_ni < n_tiles)
            ),
        ]
        # Is the request valid for its op? (from the control word read in DECODE; registered as
        # ok_r and checked by the op states, so that DECODE's next state depends on r_op only:
        # the SPM read data then only feeds registers and the prefetch address, not the FSM's
        # next-state logic.)
        op_ok = Signal()
        ok_r = Signal()
        splice_r = Signal()
        self.comb += Case(
            r_op,
            {
                P.OP_FREE: op_ok.eq(id_ok),
                P.OP_LOCK: op_ok.eq(id_ok & is_mutex),
                P.OP_TRYLOCK: op_ok.eq(id_ok & is_mutex),
                P.OP_LOCK_FOR: op_ok.eq(id_ok & is_mutex),
                P.OP_UNLOCK: op_ok.eq(id_ok & is_mutex),
                P.OP_UNLOCK_FOR: op_ok.eq(id_ok & is_mutex),
                P.OP_WAIT_CHECK: op_ok.eq(id_ok & is_mutex & v_cond_ok),
                P.OP_BARRIER_WAIT: op_ok.eq(id_ok & is_barrier),
                P.OP_COND_WAIT: op_ok.eq(id_ok & is_cond & v_mutex_ok),
                P.OP_COND_ENQUEUE: op_ok.eq(id_ok & is_cond & v_mutex_ok),
                P.OP_COND_SIGNAL: op_ok.eq(id_ok & is_cond),
                P.OP_COND_BROADCAST: op_ok.eq(id_ok & is_cond),
                P.OP_BROADCAST_NEXT: op_ok.eq(id_ok & is_cond),
                **{op: op_ok.eq(id_ok & is_rwlock) for op in P.RWLOCK_OPS},
                "default": op_ok.eq(0),
            },
        )
        # Barrier: is this arrival the last of the round? (from the word being read in DECODE;
        # "remaining == 1" rather than "count + 1 == max": no carry chain on the read data)
        d_last = Signal()
        self.comb += d_last.eq(d_val[0:16] == 1)
        b_last = Signal()
        b_left_dec = Signal(16)
        self.comb += [b_last.eq(b_left == 1), b_left_dec.eq(b_left - 1)]
        # Ops whose DECODE prefetches the queue head instead of the first free element.
        needs_head = Signal()
        self.comb += needs_head.eq(
            (r_op == P.OP_UNLOCK)
            | (r_op == P.OP_UNLOCK_FOR)
            | (r_op == P.OP_COND_SIGNAL)
            | (r_op == P.OP_COND_BROADCAST)
            | (r_op == P.OP_BROADCAST_NEXT)
            | (r_op == P.OP_RWUNLOCK)
            | ((r_op == P.OP_BARRIER_WAIT) & d_last)
        )
        # Broadcast fast path: every waiter waits with the same mutex (the cond's value field holds
        # it, bit 31 cleared if the waiters used different mutexes) and that mutex is hosted here.
        d_splice = Signal()
        self.comb += d_splice.eq((d_head != QNIL) & d_val[P.ID_F_BIT] & (d_val[P.ID_NI_SLICE] == ni_id))
        qsel = Signal(8)
        self.comb += qsel.eq(Mux(needs_head, d_head, qfree_head))
        # Allocation.
        alloc_kind = Signal(P.ID_KIND_BITS)
        alloc_val = Signal(32)
        new_id = Signal(32)
        ni_id_value = C(ni_id, P.ID_NI_BITS) if isinstance(ni_id, int) else ni_id[: P.ID_NI_BITS]
        self.comb += [
            Case(
                r_op,
                {
                    P.OP_ALLOC_MUTEX: alloc_kind.eq(r_value[0]),
                    P.OP_ALLOC_BARRIER: alloc_kind.eq(P.KIND_BARRIER),
                    P.OP_ALLOC_RWLOCK: alloc_kind.eq(P.KIND_RWLOCK),
                    "default": alloc_kind.eq(P.KIND_COND),
                },
            ),
            # A barrier's count, twice (arrivals missing, count); for a mutex (r_value <= 1) an
            # owner that is neither locked nor released, for a cond a mutex id with no waiters:
            # both unused until overwritten; for a read-write lock (r_value = 0) no readers.
            alloc_val.eq(Cat(r_value[0:16], r_value[0:16])),
            new_id.eq(Cat(ctrl_free_head[0 : P.ID_INDEX_BITS], cw_gen, alloc_kind, ni_id_value, C(1, 1))),
        ]
        gen_inc = Signal(P.ID_GEN_BITS)
        self.comb += gen_inc.eq(cw_gen + 1)
        # Requests answered even when their reply flag is clear.
        want_reply = Signal()
        self.comb += Case(
            r_op,
            {
                **{op: want_reply.eq(r_reply) for op in P.POSTED_OPS},
                **{op: want_reply.eq(1) for op in P.OPS.values() if op not in P.POSTED_OPS},
                "default": want_reply.eq(r_reply),
            },
        )

        # Broadcast fast path: the waiters' mutex and the first waiter (below).
        bmutex = cw_val  # The waiters' mutex id.
        b_idx = bmutex[P.ID_INDEX_SHIFT : P.ID_INDEX_SHIFT + P.ID_INDEX_BITS]
        # The mutex's control word: only what the splice needs (its other fields are not
        # rewritten, see write_mutex).
        mw_empty = Signal()  # Its queue is empty (its tail goes to ``link``).
        mw_locked = Signal()

        # Read-write lock requests: a writer's, and whether the lock is the caller's at once (a
        # writer: nobody holds it; a reader: no writer holds it or waits for it).
        rw_write = Signal()
        rw_free = Signal()
        self.comb += [
            rw_write.eq((r_op == P.OP_WRLOCK) | (r_op == P.OP_TRYWRLOCK)),
            rw_free.eq(~locked & Mux(rw_write, readers == 0, cw_head == QNIL)),
        ]

        # INIT's word, from the last down to the first (see INIT).
        init_cnt = Signal(max=n_queue + n_ctrl, reset=n_queue + n_ctrl - 1)

        # Datapath -------------------------------------------------------------------------------
        # Every packet field and SPM write field is one multiplexer over its distinct sources,
        # chosen by name in the states (SourceSelect). Owner tags, packets' thread and core.
        self.who = who = SourceSelect(
            24,
            {
                "req": Cat(r_thread, r_core),
                "queue": Cat(qd_thread, qd_core),
            },
        )
        self.submodules += who
        output.add_datapath(
            who,
            sync_id={
                "req": r_sync,
                "new": new_id,
                "value": r_value,  # Engine-to-engine requests about the mutex/cond.
                "aux": qd_aux,  # Requeue onto the waiter's mutex.
            },
            value={
                "zero": 0,
                "req": r_sync,
                "new": new_id,
                "grant": Mux(grant_local, P.GRANT_LOCAL, 0),
                "ones": P.SERIAL_VALUE,
            },
        )
        # Control word ``idx`` is at ``cbase + idx`` (one adder behind the index's choice).
        w_idx = SourceSelect(P.ID_INDEX_BITS, {"id": id_idx, "free": ctrl_free_head, "mutex": b_idx})
        self.submodules += w_idx
        spm.add_write_datapath(
            adr={
                "qptr": qptr,
                "ctrl": cbase + w_idx.value,
                "link": link,
                "init": init_cnt,
            },
            byte0={
                "cw_head": cw_head,
                "nil": QNIL,
                "qd_next": qd_next,
                "qptr": qptr,
                "qfree_head": qfree_head,
            },
            byte1={
                "cw_tail": cw_tail,
                "nil": QNIL,
                "req_core": r_core,  # A queue element's core.
            },
            middle={  # gen, kind, alloc, 0 (a queue element: thread)
                "alloc": Cat(cw_gen, alloc_kind, C(1, 1), C(0, 1)),
                "free": Cat(gen_inc, cw_kind, C(0, 1), C(0, 1)),
                "req_thread": r_thread,
            },
            value={
                "cw": cw_val,
                "alloc": alloc_val,
                "free_list": ctrl_free_head,
                # Locked by ``who``; or free, released by ``who`` (its core: [55:48]).
                "owner": Cat(who.value, C(1, 1), C(0, 1)),
                "released": Cat(who.value, C(0, 1), C(1, 1)),
                "barrier": Cat(b_max, b_max),
                "req_value": r_value,
                # Read-write locks: one reader more or less; no holder; a queued writer's aux.
                "reader_in": Cat(readers + 1, C(0, 16)),
                "reader_out": Cat(readers - 1, C(0, 16)),
                "zero": 0,
                "rw_write": rw_write,  # A queued read-write lock waiter's aux: 1 for a writer.
            },
        )

        # FSM ------------------------------------------------------------------------------------
        self.fsm = fsm = FSM(reset_state="INIT")

        # The states in the order of their encoding (Migen numbers them as they are first named);
        # each family's method then gives them their actions.
        for state in (
            "INIT",
            "IDLE",
            "DECODE",
            "ALLOC",
            "FREE",
            "LOCK",
            "ENQ_LINK",
            "ENQ_CTRL",
            "UNLOCK",
            "FREE_ELEM",
            "BARRIER",
            "CWAIT",
            "WCHECK",
            "CENQ",
            "SIGNAL",
            "BC_DECIDE",
            "BC_BRANCH",
            "BC_GRANT",
            "BC_FREE_FIRST",
            "BC_TAKE",
            "BC_LINK",
            "BC_APPEND",
            "BC_END",
            "WALK",
            "RWLOCK",
            "RWUNLOCK",
            "RW_READ",
            "RW_NEXT",
            "ERROR",
        ):
            fsm.act(state)
        # What the families' states read and drive: the request, the latched control structure,
        # the decode and the datapath's named sources (above).
        dp = SimpleNamespace(
            WE_HEAD=WE_HEAD,
            WE_TAIL=WE_TAIL,
            WE_VALUE=WE_VALUE,
            accept=accept,
            b_idx=b_idx,
            b_last=b_last,
            b_left_dec=b_left_dec,
            b_max=b_max,
            bmutex=bmutex,
            can_emit=can_emit,
            cbase=cbase,
            ctrl_free_head=ctrl_free_head,
            cw_gen=cw_gen,
            cw_head=cw_head,
            cw_kind=cw_kind,
            cw_tail=cw_tail,
            cw_val=cw_val,
            d=d,
            d_alloc=d_alloc,
            d_gen=d_gen,
            d_head=d_head,
            d_kind=d_kind,
            d_splice=d_splice,
            d_val=d_val,
            enqueue=enqueue,
            err=err,
            error_inc=error_inc,
            free_ctrl=free_ctrl,
            free_queue=free_queue,
            grant_inc=grant_inc,
            id_idx=id_idx,
            init_cnt=init_cnt,
            link=link,
            lock_for=lock_for,
            locked=locked,
            me=me,
            mw_empty=mw_empty,
            mw_locked=mw_locked,
            n_ctrl=n_ctrl,
            ok_r=ok_r,
            op_ok=op_ok,
            owner=owner,
            qd_aux=qd_aux,
            qd_next=qd_next,
            qfree_head=qfree_head,
            qptr=qptr,
            qsel=qsel,
            r_op=r_op,
            r_reply=r_reply,
            r_value=r_value,
            rd=rd,
            readers=readers,
            reply=reply,
            request=request,
            rw_free=rw_free,
            rw_write=rw_write,
            send=send,
            silent_inc=silent_inc,
            splice_r=splice_r,
            status=status,
            take=take,
            want_reply=want_reply,
            write=write,
            write_ctrl=write_ctrl,
            write_cw=write_cw,
            write_next=write_next,
        )
        self._add_common_states(dp)
        self._add_allocation_states(dp)
        self._add_mutex_states(dp)
        self._add_barrier_states(dp)
        self._add_condition_states(dp)
        self._add_barrier_release_states(dp)
        self._add_rwlock_states(dp)
        self._add_error_states(dp)

        # Status and counters --------------------------------------------------------------------
        self.comb += [
            self.ready.eq(fsm.ongoing("IDLE") & ~request.pending),
            # The skid register holds a packet only while source holds one: source.valid covers it.
            self.idle.eq(fsm.ongoing("IDLE") & ~request.pending & ~source.valid),
        ]
        events.count(
            accept,
            request.next_op,
            output,
            spm,
            n_queue,
            request,
            status,
            busy=~fsm.ongoing("IDLE") & ~fsm.ongoing("INIT"),
        )

    def _add_common_states(self, dp):
        """INIT (the free lists), IDLE (take a request) and DECODE (latch its structure, go to its op)."""
        fsm = self.fsm
        # INIT: build both free lists, one word per cycle from the last word down, each word
        # pushed on its list (it links to the list's head so far, then heads it): the lists
        # leave INIT in address order with no logic of their own (the heads start at nil). r_core
        # and r_thread are still 0, so a free queue element's core and thread are 0 (its aux,
        # only ever read from a condition waiter's element, is whatever the value field is).
        fsm.act(
            "INIT",
            If(
                dp.init_cnt >= dp.cbase,
                dp.write("init", "nil", "nil", "req_thread", "free_list"),
                NextValue(dp.ctrl_free_head, dp.init_cnt - dp.cbase),
            ).Else(
                dp.write("init", "qfree_head", "req_core", "req_thread", "free_list"),
                NextValue(dp.qfree_head, dp.init_cnt),
            ),
            NextValue(dp.init_cnt, dp.init_cnt - 1),
            If(dp.init_cnt == 0, NextState("IDLE")),
        )

        # IDLE: take a request (a pending self request first) and read its control structure (or
        # the first free one, for an allocation).
        fsm.act(
            "IDLE",
            dp.take.eq(1),
            dp.rd.adr.eq(
                dp.cbase
                + Mux(
                    dp.request.next_alloc,
                    dp.ctrl_free_head,
                    dp.request.next_sync[P.ID_INDEX_SHIFT : P.ID_INDEX_SHIFT + P.ID_INDEX_BITS],
                )
            ),
            If(dp.accept, NextState("DECODE")),
        )

        # DECODE: the control word is in the read register. Latch it and the request's validity
        # (ok_r, checked first by every op state), prefetch the queue element the operation
        # needs (queue head or first free element) and go to the op's state, chosen from the op
        # code alone (allocation arguments are checked here: they are in registers).
        fsm.act(
            "DECODE",
            NextValue(dp.cw_head, dp.d_head),
            NextValue(dp.cw_tail, dp.d[8:16]),
            NextValue(dp.cw_gen, dp.d_gen),
            NextValue(dp.link, dp.d[8:16]),  # The tail an enqueue links to, a walk ends at.
            NextValue(dp.cw_kind, dp.d_kind),
            NextValue(dp.cw_val, dp.d_val),
            dp.rd.adr.eq(dp.qsel),
            NextValue(dp.qptr, dp.qsel),
            NextValue(dp.ok_r, dp.op_ok),
            NextValue(dp.splice_r, dp.d_splice),
            Case(
                dp.r_op,
                {
                    P.OP_ALLOC_MUTEX: If(dp.r_value > 1, *dp.err(P.EINVAL))
                    .Elif(dp.free_ctrl == 0, *dp.err(P.EAGAIN))
                    .Else(NextState("ALLOC")),
                    P.OP_ALLOC_BARRIER: If(
                        (dp.r_value == 0) | (dp.r_value > P.MAX_BARRIER), *dp.err(P.EINVAL)
                    )
                    .Elif(dp.free_ctrl == 0, *dp.err(P.EAGAIN))
                    .Else(NextState("ALLOC")),
                    P.OP_ALLOC_COND: If(dp.free_ctrl == 0, *dp.err(P.EAGAIN)).Else(NextState("ALLOC")),
                    P.OP_ALLOC_RWLOCK: If(dp.r_value != 0, *dp.err(P.EINVAL))
                    .Elif(dp.free_ctrl == 0, *dp.err(P.EAGAIN))
                    .Else(NextState("ALLOC")),
                    P.OP_FREE: NextState("FREE"),
                    P.OP_LOCK: NextState("LOCK"),
                    P.OP_TRYLOCK: NextState("LOCK"),
                    P.OP_LOCK_FOR: NextState("LOCK"),
                    P.OP_UNLOCK: NextState("UNLOCK"),
                    P.OP_UNLOCK_FOR: NextState("UNLOCK"),
                    P.OP_WAIT_CHECK: NextState("WCHECK"),
                    P.OP_BARRIER_WAIT: NextState("BARRIER"),
                    P.OP_COND_WAIT: NextState("CWAIT"),
                    P.OP_COND_ENQUEUE: NextState("CENQ"),
                    P.OP_COND_SIGNAL: NextState("SIGNAL"),
                    P.OP_COND_BROADCAST: NextState("SIGNAL"),
                    P.OP_BROADCAST_NEXT: NextState("SIGNAL"),
                    P.OP_RDLOCK: NextState("RWLOCK"),
                    P.OP_TRYRDLOCK: NextState("RWLOCK"),
                    P.OP_WRLOCK: NextState("RWLOCK"),
                    P.OP_TRYWRLOCK: NextState("RWLOCK"),
                    P.OP_RWUNLOCK: NextState("RWUNLOCK"),
                    "default": dp.err(P.EINVAL),
                },
            ),
        )

    def _add_allocation_states(self, dp):
        """Allocation: ALLOC and FREE of a control structure."""
        fsm = self.fsm
        # ALLOC: pop the first free control structure (its word was read at IDLE).
        fsm.act(
            "ALLOC",
            If(
                dp.can_emit,
                dp.write_ctrl("free", "nil", "nil", "alloc", "alloc"),
                dp.reply(0, value="new", sync_id="new"),
                NextValue(dp.ctrl_free_head, dp.cw_val[0:16]),
                NextValue(dp.free_ctrl, dp.free_ctrl - 1),
                NextState("IDLE"),
            ),
        )

        # FREE: refuse a structure in use (waiters; a mutex or read-write lock held: kinds 0, 1
        # and 4 have kind bit 1 clear); else bump its generation and push it on the free list.
        fsm.act(
            "FREE",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    (dp.cw_head != QNIL) | (~dp.cw_kind[1] & dp.locked) | (dp.cw_kind[2] & (dp.readers != 0)),
                    *dp.err(P.EBUSY),
                ).Elif(
                    dp.can_emit,
                    dp.write_ctrl("id", "nil", "nil", "free", "free_list"),
                    dp.reply(0),
                    NextValue(dp.ctrl_free_head, dp.id_idx),
                    NextValue(dp.free_ctrl, dp.free_ctrl + 1),
                    NextState("IDLE"),
                ),
            ),
        )

    def _add_mutex_states(self, dp):
        """Mutexes: LOCK (and TRYLOCK, LOCK_FOR), the enqueue tail every queue uses, UNLOCK and FREE_ELEM."""
        fsm = self.fsm
        # LOCK / TRYLOCK / LOCK_FOR (the requeue of a woken condition waiter: same semantics, the
        # grant goes to the waiter named in the packet).
        fsm.act(
            "LOCK",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    ~dp.locked,
                    If(
                        dp.can_emit,
                        dp.write_cw(value="owner"),
                        dp.reply(0, value="grant"),
                        dp.grant_inc.eq(1),
                        NextState("IDLE"),
                    ),
                )
                .Elif(
                    dp.r_op == P.OP_TRYLOCK,
                    *dp.err(P.EBUSY),
                )
                .Elif(
                    (dp.owner == dp.me) & (dp.cw_kind == P.KIND_MUTEX_EC),
                    *dp.err(P.EDEADLK),
                )
                .Elif(
                    dp.free_queue == 0,
                    *dp.err(P.EAGAIN),
                )
                .Else(
                    *dp.enqueue("req_value"),
                ),
            ),
        )

        # Enqueue tail: link the old tail (link) to the new element (qptr), then write the control
        # word.
        fsm.act(
            "ENQ_LINK",
            dp.write_next("link", "qptr"),
            NextState("ENQ_CTRL"),
        )
        fsm.act(
            "ENQ_CTRL",
            dp.write_cw(),
            NextState("IDLE"),
        )

        # UNLOCK / UNLOCK_FOR: only the owner may unlock (both mutex kinds). With waiters, hand
        # the mutex to the queue head (prefetched) and send it its grant.
        fsm.act(
            "UNLOCK",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    ~dp.locked | (dp.owner != dp.me),
                    *dp.err(P.EPERM),
                )
                .Elif(
                    dp.cw_head == QNIL,
                    If(
                        ~dp.r_reply | dp.can_emit,
                        # Free, released by this core (UNLOCK_FOR: the condition waiter's).
                        dp.write_cw(value="released"),
                        If(dp.r_reply, dp.reply(0)),
                        NextState("IDLE"),
                    ),
                )
                .Elif(
                    dp.can_emit,
                    dp.write_cw(value="owner", head="qd_next"),
                    dp.reply(0, who="queue"),
                    dp.grant_inc.eq(1),
                    NextState("FREE_ELEM"),
                ),
            ),
        )

        # Return element qptr to the free list. Then: the next step of a broadcast that has more
        # waiters (a self request), or the reply to a posted request that asked for one.
        is_bcast = Signal()
        more = Signal()
        self.comb += [
            is_bcast.eq((dp.r_op == P.OP_COND_BROADCAST) | (dp.r_op == P.OP_BROADCAST_NEXT)),
            more.eq(is_bcast & (dp.link != QNIL)),
        ]
        fsm.act(
            "FREE_ELEM",
            dp.request.load_cond.eq(more),
            If(
                ~(dp.r_reply | more) | dp.can_emit,
                dp.write_next("qptr", "qfree_head"),
                NextValue(dp.qfree_head, dp.qptr),
                NextValue(dp.free_queue, dp.free_queue + 1),
                If(
                    more,
                    # To this engine (r_sync is one of its structures): a self request.
                    dp.send(P.OP_BROADCAST_NEXT, reply=dp.r_reply),
                ).Elif(
                    dp.r_reply,
                    dp.reply(0),
                ),
                NextState("IDLE"),
            ),
        )

    def _add_barrier_states(self, dp):
        """Barriers: BARRIER (an arrival)."""
        fsm = self.fsm
        # BARRIER_WAIT: queue the arrival, or (last arrival) answer it with SERIAL_THREAD, splice
        # the whole queue onto the free list and walk it to release every waiter (replies go to
        # cores only, never to an engine, so waiting on source here cannot close a cycle).
        fsm.act(
            "BARRIER",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    dp.b_last,
                    If(
                        dp.can_emit,
                        dp.reply(0, value="ones"),
                        If(
                            dp.cw_head == QNIL,
                            dp.write_cw(value="barrier"),
                            NextState("IDLE"),
                        ).Else(
                            dp.write_next("link", "qfree_head"),
                            NextValue(dp.qfree_head, dp.cw_head),
                            NextValue(dp.cw_head, QNIL),
                            NextValue(dp.cw_tail, QNIL),
                            NextValue(dp.cw_val, Cat(dp.b_max, dp.b_max)),
                            NextState("WALK"),
                        ),
                    ),
                )
                .Elif(
                    dp.free_queue == 0,
                    *dp.err(P.EAGAIN),
                )
                .Else(
                    NextValue(dp.cw_val, Cat(dp.b_left_dec, dp.b_max)),
                    *dp.enqueue("req_value"),
                ),
            ),
        )

    def _add_condition_states(self, dp):
        """Condition variables: the wait at the cond's and at the mutex's host, signal, and broadcast (per waiter, or the splice of its fast path)."""
        fsm = self.fsm
        # COND_WAIT at the cond's host: check the mutex id and ask its host whether the caller
        # owns it (the waiter is enqueued only then, so every error leaves all state unchanged).
        fsm.act(
            "CWAIT",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    dp.can_emit,
                    dp.send(P.OP_WAIT_CHECK, sync_id="value", value="req"),
                    NextState("IDLE"),
                ),
            ),
        )

        # WAIT_CHECK at the mutex's host: the waiter keeps the mutex until it is enqueued.
        fsm.act(
            "WCHECK",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    dp.locked & (dp.owner == dp.me),
                    If(
                        dp.can_emit,
                        dp.send(P.OP_COND_ENQUEUE, sync_id="value", value="req"),
                        NextState("IDLE"),
                    ),
                ).Else(
                    *dp.err(P.EPERM),
                ),
            ),
        )

        # COND_ENQUEUE at the cond's host: enqueue the waiter (with its mutex), then release the
        # mutex on its behalf. The release reaches the mutex's host before any requeue of this
        # waiter (packets between two engines stay in order).
        fsm.act(
            "CENQ",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    dp.free_queue == 0,
                    *dp.err(P.EAGAIN),
                ).Elif(
                    dp.can_emit,
                    dp.send(P.OP_UNLOCK_FOR, sync_id="value", value="req"),
                    # Track the waiters' common mutex (for the broadcast fast path).
                    If(
                        dp.cw_head == QNIL,
                        NextValue(dp.cw_val, dp.r_value),
                    ).Elif(
                        dp.cw_val != dp.r_value,
                        NextValue(dp.cw_val[P.ID_F_BIT], 0),
                    ),
                    *dp.enqueue("req_value"),
                ),
            ),
        )

        m_ok = Signal()
        self.comb += m_ok.eq(
            (dp.b_idx < dp.n_ctrl)
            & dp.d_alloc
            & (dp.d_kind == dp.bmutex[P.ID_KIND_SHIFT : P.ID_KIND_SHIFT + P.ID_KIND_BITS])
            & (dp.d_gen == dp.bmutex[P.ID_GEN_SHIFT : P.ID_GEN_SHIFT + P.ID_GEN_BITS])
        )

        # COND_SIGNAL / COND_BROADCAST / BROADCAST_NEXT: dequeue the head waiter and requeue it
        # onto its mutex. A broadcast wakes one waiter per step: while waiters remain its next
        # step is a self request, served before any other request, so the broadcast is atomic
        # and never has more than 2 self requests pending (this step's LOCK_FOR, the next step).
        fsm.act(
            "SIGNAL",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            )
            .Elif(
                (dp.r_op == P.OP_COND_BROADCAST) & dp.splice_r,
                # Fast path (below): read the mutex's word (the first waiter's is read again
                # from BC_BRANCH on).
                dp.rd.adr.eq(dp.cbase + dp.b_idx),
                NextState("BC_DECIDE"),
            )
            .Elif(
                dp.cw_head == QNIL,
                If(
                    ~dp.r_reply | dp.can_emit,
                    If(dp.r_reply, dp.reply(0)),
                    NextState("IDLE"),
                ),
            )
            .Else(
                dp.request.load_mutex.eq(1),
                If(
                    dp.can_emit,
                    dp.write_cw(head="qd_next"),
                    dp.lock_for(),
                    NextValue(dp.link, dp.qd_next),
                    NextState("FREE_ELEM"),
                ),
            ),
        )

        # COND_BROADCAST fast path (TPDS'21 §V-B: "the broadcast state has to deal with only one
        # queue"): the waiters all wait with one mutex hosted here, so the whole cond queue is
        # requeued at once by splicing it onto the mutex's queue; if the mutex is free its new
        # head is granted it. Constant time whatever the number of waiters. Falls back to the
        # per-waiter steps if the mutex is no longer valid (each waiter then gets EINVAL).
        # The mutex's head and tail, and its value when named; its generation, kind and alloc bit
        # (and value, when not named) stay as the SPM holds them.
        def write_mutex(head, value=None):
            return dp.write_ctrl(
                "mutex",
                head,
                "cw_tail",
                None,
                value,
                we=(dp.WE_HEAD if head else 0) | dp.WE_TAIL | (dp.WE_VALUE if value else 0),
            )

        mok_r = Signal()
        fsm.act(
            "BC_DECIDE",
            # The mutex's word is in the read register: keep it and its validity.
            NextValue(dp.mw_empty, dp.d_head == QNIL),
            NextValue(dp.link, dp.d[8:16]),
            NextValue(dp.mw_locked, dp.d_val[24]),
            NextValue(mok_r, m_ok),
            NextState("BC_BRANCH"),
        )
        fsm.act(
            "BC_BRANCH",
            If(
                ~mok_r,
                dp.rd.adr.eq(dp.qptr),  # Re-read the first waiter for the slow path.
                NextValue(dp.splice_r, 0),
                NextState("SIGNAL"),
            )
            .Elif(
                ~dp.mw_locked,
                NextState("BC_GRANT"),
            )
            .Elif(
                dp.mw_empty,
                NextState("BC_TAKE"),
            )
            .Else(
                NextState("BC_LINK"),
            ),
        )
        # Free mutex: the first waiter owns it, the others become its queue.
        fsm.act(
            "BC_GRANT",
            If(
                dp.can_emit,
                # The first waiter's word is in the read register again (read from BC_BRANCH
                # on): it owns the mutex (its aux is the mutex's id), the rest are its queue.
                write_mutex("qd_next", "owner"),
                dp.reply(0, sync_id="aux", who="queue"),
                dp.grant_inc.eq(1),
                NextState("BC_FREE_FIRST"),
            ),
        )
        fsm.act(
            "BC_FREE_FIRST",
            dp.write_next("qptr", "qfree_head"),
            NextValue(dp.qfree_head, dp.qptr),
            NextValue(dp.free_queue, dp.free_queue + 1),
            NextState("BC_END"),
        )
        # Held mutex with an empty queue: the cond queue becomes its queue.
        fsm.act(
            "BC_TAKE",
            write_mutex("qptr"),
            NextState("BC_END"),
        )
        # Held mutex with waiters: append the cond queue behind them.
        fsm.act(
            "BC_LINK",
            dp.write_next("link", "qptr"),
            NextState("BC_APPEND"),
        )
        fsm.act(
            "BC_APPEND",
            write_mutex(None),
            NextState("BC_END"),
        )
        fsm.act(
            "BC_END",
            If(
                ~dp.r_reply | dp.can_emit,
                dp.write_cw(head="nil", tail="nil"),
                If(dp.r_reply, dp.reply(0)),
                NextState("IDLE"),
            ),
        )

    def _add_barrier_release_states(self, dp):
        """Barriers: WALK, the release of a round's waiters."""
        fsm = self.fsm
        # WALK (barrier release): one released waiter per cycle. The queue is already on the
        # free list: the walk stops at the old tail (its "next" now points into the free list),
        # and writes the emptied control word (idempotently).
        walk_end = Signal()
        self.comb += walk_end.eq(dp.qptr == dp.link)
        fsm.act(
            "WALK",
            dp.write_cw(),
            If(
                dp.can_emit,
                dp.reply(0, who="queue"),
                NextValue(dp.free_queue, dp.free_queue + 1),
                If(
                    walk_end,
                    NextState("IDLE"),
                ).Else(
                    dp.rd.adr.eq(dp.qd_next),
                    NextValue(dp.qptr, dp.qd_next),
                ),
            ),
        )

    def _add_rwlock_states(self, dp):
        """Read-write locks: RWLOCK, RWUNLOCK and the readers' release."""
        fsm = self.fsm
        # Read-write locks (writers preferred). RDLOCK / TRYRDLOCK: one reader more while no
        # writer holds the lock or waits for it; WRLOCK / TRYWRLOCK: the lock alone when nobody
        # holds it (then nobody waits). Else wait in the queue, aux 1 for a writer.
        fsm.act(
            "RWLOCK",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    dp.locked & (dp.owner == dp.me),
                    *dp.err(P.EDEADLK),
                )
                .Elif(
                    dp.rw_free,
                    If(
                        ~dp.rw_write & (dp.readers == P.MAX_READERS),
                        *dp.err(P.EAGAIN),
                    ).Elif(
                        dp.can_emit,
                        If(dp.rw_write, dp.write_cw(value="owner")).Else(dp.write_cw(value="reader_in")),
                        dp.reply(0),
                        dp.grant_inc.eq(1),
                        NextState("IDLE"),
                    ),
                )
                .Elif(
                    (dp.r_op == P.OP_TRYRDLOCK) | (dp.r_op == P.OP_TRYWRLOCK),
                    *dp.err(P.EBUSY),
                )
                .Elif(
                    dp.free_queue == 0,
                    *dp.err(P.EAGAIN),
                )
                .Else(
                    *dp.enqueue("rw_write"),
                ),
            ),
        )

        # RWUNLOCK: the writer's (only the owner's), or one reader's. The queue head (prefetched)
        # is granted the lock when a writer leaves it, or the last reader: a writer alone (as a
        # mutex's hand-over, FREE_ELEM ends it), or every reader up to the next writer (RW_READ).
        # Waiting readers are always behind a writer, so the last reader's head is a writer.
        fsm.act(
            "RWUNLOCK",
            If(
                ~dp.ok_r,
                *dp.err(P.EINVAL),
            ).Else(
                If(
                    dp.locked & (dp.owner != dp.me),
                    *dp.err(P.EPERM),
                )
                .Elif(
                    ~dp.locked & (dp.readers == 0),
                    *dp.err(P.EPERM),
                )
                .Elif(
                    (dp.cw_head == QNIL) | (~dp.locked & (dp.readers != 1)),
                    If(
                        ~dp.r_reply | dp.can_emit,
                        If(dp.locked, dp.write_cw(value="zero")).Else(dp.write_cw(value="reader_out")),
                        If(dp.r_reply, dp.reply(0)),
                        NextState("IDLE"),
                    ),
                )
                .Elif(
                    ~dp.locked | dp.qd_aux[0],
                    If(
                        dp.can_emit,
                        dp.write_cw(value="owner", head="qd_next"),
                        dp.reply(0, who="queue"),
                        dp.grant_inc.eq(1),
                        NextState("FREE_ELEM"),
                    ),
                )
                .Else(
                    NextValue(dp.cw_val, 0),
                    NextState("RW_READ"),
                ),
            ),
        )

        # RW_READ: grant the reader at the queue head (its word in the read register), free its
        # element, read the next one (RW_NEXT); RW_NEXT: another reader, or write the lock's word
        # (its readers, the rest of its queue) and answer the unlocker if it asked.
        fsm.act(
            "RW_READ",
            If(
                dp.can_emit,
                dp.reply(0, who="queue"),
                dp.grant_inc.eq(1),
                dp.write_next("qptr", "qfree_head"),
                NextValue(dp.qfree_head, dp.qptr),
                NextValue(dp.free_queue, dp.free_queue + 1),
                NextValue(dp.cw_val, Cat(dp.readers + 1, C(0, 16))),
                NextValue(dp.cw_head, dp.qd_next),
                NextValue(dp.qptr, dp.qd_next),
                dp.rd.adr.eq(dp.qd_next),
                NextState("RW_NEXT"),
            ),
        )
        fsm.act(
            "RW_NEXT",
            If(
                (dp.qptr == QNIL) | dp.qd_aux[0],
                If(
                    ~dp.r_reply | dp.can_emit,
                    dp.write_cw(),
                    If(dp.r_reply, dp.reply(0)),
                    NextState("IDLE"),
                ),
            ).Else(
                NextState("RW_READ"),
            ),
        )

    def _add_error_states(self, dp):
        """ERROR: the answer to a refused request."""
        fsm = self.fsm
        # ERROR: answer with the status, or count and latch it for a request without reply.
        fsm.act(
            "ERROR",
            If(
                dp.want_reply,
                If(
                    dp.can_emit,
                    dp.reply(dp.status),
                    dp.error_inc.eq(1),
                    NextState("IDLE"),
                ),
            ).Else(
                dp.error_inc.eq(1),
                dp.silent_inc.eq(1),
                NextState("IDLE"),
            ),
        )
