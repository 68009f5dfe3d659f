#
# Subutai-HW protocol: op codes, reply codes, synchronization-id layout, packet layouts.
#
"""Single source of truth of the Subutai-HW protocol.

Used by the gateware (:mod:`gateware.subutai.engine`), the Python reference model
(:mod:`gateware.subutai.model`), the tests, and exported to C (:func:`c_header`). Nothing here
depends on Migen, so software tools can import it cheaply.

Synchronization id (32 bits, what software holds in a ``pthread_*_t``)
======================================================================

Following TPDS'21 Fig. 6 (``F | NI id (7) | self pointer (24)``), the 24-bit "self pointer" is split
into kind, generation and control-structure index:

======= ========= =========================================================================
bits    field     meaning
======= ========= =========================================================================
31      ``F``     always 1 in an allocated id, so 0 (a static ``PTHREAD_*_INITIALIZER``)
                  is never valid and means "not allocated yet"
30:24   ``ni``    id of the hosting tile/NI: every NI routes a request by these bits alone
23:21   ``kind``  0 normal mutex, 1 error-checking mutex, 2 barrier, 3 condition variable,
                  4 read-write lock
20:10   ``gen``   generation of the control structure: incremented when it is freed, so a
                  stale id (used after FREE, or after the slot was re-allocated) is EINVAL
                  unless the slot went through exactly a multiple of 2048 allocations since
9:0     ``index`` control-structure index in the host's scratchpad (the "self pointer")
======= ========= =========================================================================

For the ALLOC_* requests the id is not a primitive yet: the library puts the chosen host tile in
bits 30:24 (``alloc_target(ni)``) so that every request is routed the same way; the engine ignores
the other bits.

Packets
=======

Request (core or engine -> engine, the three words of TPDS'21 Fig. 8 plus the ``reply`` flag):
``sync_id`` (32), ``op`` (8), ``core`` (8), ``thread`` (16), ``value`` (32), ``reply`` (1).
On the wire (NoC) the ``reply`` flag travels as bit 6 of the op byte (:data:`OP_FLAG_REPLY`); the
NI strips it into the separate field.

Output (engine -> NI): the same fields without ``reply``, plus ``dest`` (8), the tile the packet
goes to. A packet with ``op & OP_REPLY`` is a *reply* for the thread ``(core, thread)`` on tile
``dest`` (= ``core``); any other packet is an engine-to-engine *request* for the engine of tile
``dest``, which receives it with ``reply`` = 0.

Reply: ``op`` = ``OP_REPLY | status`` (status 0 or an errno value below 0x80), ``sync_id`` = the
primitive the engine worked on (a new id for allocations; the *mutex* id for a condition wait
completed by the mutex host, the cond id for one refused by the cond host), ``core``/``thread`` =
the thread the reply is for, ``value`` = result: the new id for ALLOC_*,
``PTHREAD_BARRIER_SERIAL_THREAD`` (-1) for exactly one barrier waiter per round, 0 otherwise.
"""

# Request ops (8 bits). Core requests 0x01..0x1f, engine-to-engine requests 0x20..0x3f. ------------

OP_ALLOC_MUTEX = 0x01  # value: 0 normal, 1 error-checking.        Reply: value = new id.
OP_ALLOC_BARRIER = 0x02  # value: count (1..65535).                   Reply: value = new id.
OP_ALLOC_COND = 0x03  #                                            Reply: value = new id.
OP_FREE = 0x04  # destroy; always replies.
OP_LOCK = 0x05  # blocks: reply (grant) when the mutex is the caller's.
OP_TRYLOCK = 0x06  # replies at once: 0 or EBUSY.
OP_UNLOCK = 0x07  # posted: replies only if reply=1.
OP_BARRIER_WAIT = 0x08  # blocks until the count-th arrival.
OP_COND_WAIT = 0x09  # value: mutex id. Blocks; returns with the mutex held.
OP_COND_SIGNAL = 0x0A  # posted.
OP_COND_BROADCAST = 0x0B  # posted.
# Read-write locks (Seed 003's legacy PThreads: pthread_rwlock_*). Writers are preferred: a reader
# waits while a writer holds the lock or waits for it; a releasing writer hands the lock to the
# next waiter, a writer alone or every reader up to the next writer together.
OP_ALLOC_RWLOCK = 0x0C  # value: 0.                                 Reply: value = new id.
OP_RDLOCK = 0x0D  # blocks: reply (grant) when the caller is one of the readers.
OP_TRYRDLOCK = 0x0E  # replies at once: 0 or EBUSY.
OP_WRLOCK = 0x0F  # blocks: reply (grant) when the lock is the caller's alone.
OP_TRYWRLOCK = 0x10  # replies at once: 0 or EBUSY.
OP_RWUNLOCK = 0x11  # posted: the writer's unlock (owner checked), or one reader's.

# Engine-to-engine ops (on behalf of the thread (core, thread) blocked in a condition wait).
OP_WAIT_CHECK = 0x21  # to the mutex host: does (core, thread) own mutex sync_id? value = cond.
OP_COND_ENQUEUE = 0x22  # to the cond host: enqueue the waiter on cond sync_id; value = mutex.
OP_UNLOCK_FOR = 0x23  # to the mutex host: unlock on behalf of the waiter; value = cond.
OP_LOCK_FOR = 0x24  # to the mutex host: lock on behalf of the woken waiter (requeue);
# the grant goes straight to the waiter; value = cond.
OP_BROADCAST_NEXT = 0x25  # engine-internal (a self request): next step of a COND_BROADCAST (wakes
# the next waiter); carries the broadcaster and its reply flag.

OP_REPLY = 0x80  # reply packets: op = OP_REPLY | status.
OP_FLAG_REPLY = 0x40  # wire encoding of the request's reply flag (NoC packets only).

OPS = {
    "ALLOC_MUTEX": OP_ALLOC_MUTEX,
    "ALLOC_BARRIER": OP_ALLOC_BARRIER,
    "ALLOC_COND": OP_ALLOC_COND,
    "FREE": OP_FREE,
    "LOCK": OP_LOCK,
    "TRYLOCK": OP_TRYLOCK,
    "UNLOCK": OP_UNLOCK,
    "BARRIER_WAIT": OP_BARRIER_WAIT,
    "COND_WAIT": OP_COND_WAIT,
    "COND_SIGNAL": OP_COND_SIGNAL,
    "COND_BROADCAST": OP_COND_BROADCAST,
    "ALLOC_RWLOCK": OP_ALLOC_RWLOCK,
    "RDLOCK": OP_RDLOCK,
    "TRYRDLOCK": OP_TRYRDLOCK,
    "WRLOCK": OP_WRLOCK,
    "TRYWRLOCK": OP_TRYWRLOCK,
    "RWUNLOCK": OP_RWUNLOCK,
    "WAIT_CHECK": OP_WAIT_CHECK,
    "COND_ENQUEUE": OP_COND_ENQUEUE,
    "UNLOCK_FOR": OP_UNLOCK_FOR,
    "LOCK_FOR": OP_LOCK_FOR,
    "BROADCAST_NEXT": OP_BROADCAST_NEXT,
}
OP_NAMES = {v: k for k, v in OPS.items()}

ALLOC_OPS = (OP_ALLOC_MUTEX, OP_ALLOC_BARRIER, OP_ALLOC_COND, OP_ALLOC_RWLOCK)
MUTEX_OPS = (OP_LOCK, OP_TRYLOCK, OP_UNLOCK, OP_WAIT_CHECK, OP_UNLOCK_FOR, OP_LOCK_FOR)
BARRIER_OPS = (OP_BARRIER_WAIT,)
COND_OPS = (OP_COND_WAIT, OP_COND_SIGNAL, OP_COND_BROADCAST, OP_COND_ENQUEUE, OP_BROADCAST_NEXT)
RWLOCK_OPS = (OP_RDLOCK, OP_TRYRDLOCK, OP_WRLOCK, OP_TRYWRLOCK, OP_RWUNLOCK)
# Posted ops: answered only when the request's reply flag is set (UNLOCK_FOR never is, by the
# engines). An unknown op is treated as posted: it is answered (EINVAL) only if reply = 1.
POSTED_OPS = (OP_UNLOCK, OP_COND_SIGNAL, OP_COND_BROADCAST, OP_UNLOCK_FOR, OP_BROADCAST_NEXT, OP_RWUNLOCK)

# Reply status: 0 or POSIX errno values (newlib/Linux numbering). ---------------------------------

OK = 0
EPERM = 1
EAGAIN = 11
EBUSY = 16
EINVAL = 22
EDEADLK = 35
STATUS_NAMES = {
    OK: "OK",
    EPERM: "EPERM",
    EAGAIN: "EAGAIN",
    EBUSY: "EBUSY",
    EINVAL: "EINVAL",
    EDEADLK: "EDEADLK",
}

PTHREAD_BARRIER_SERIAL_THREAD = -1
SERIAL_VALUE = 0xFFFFFFFF  # PTHREAD_BARRIER_SERIAL_THREAD as the 32-bit reply value.
# Reply value of a LOCK or TRYLOCK grant of a free mutex that this same core released last: no
# other core can have written anything ordered before this acquire, so the caller may skip its
# data-cache invalidation (docs/architecture.md, coherence rule). Every other grant (hand-over at
# an unlock, a condition wake-up's requeue, a mutex never released yet) has value 0.
GRANT_LOCAL = 1

# Primitive kinds (id bits 23:21). -----------------------------------------------------------------

KIND_MUTEX = 0  # normal mutex (PTHREAD_MUTEX_NORMAL / DEFAULT)
KIND_MUTEX_EC = 1  # error-checking mutex (PTHREAD_MUTEX_ERRORCHECK)
KIND_BARRIER = 2
KIND_COND = 3
KIND_RWLOCK = 4  # read-write lock
KIND_NAMES = {
    KIND_MUTEX: "mutex",
    KIND_MUTEX_EC: "mutex-ec",
    KIND_BARRIER: "barrier",
    KIND_COND: "cond",
    KIND_RWLOCK: "rwlock",
}

# Synchronization id layout. -----------------------------------------------------------------------

ID_F_BIT = 31
ID_NI_SHIFT = 24
ID_NI_BITS = 7
ID_KIND_SHIFT = 21
ID_KIND_BITS = 3
ID_GEN_SHIFT = 10
ID_GEN_BITS = 11
ID_INDEX_SHIFT = 0
ID_INDEX_BITS = 10
# The host (NI) field as a slice of a gateware signal: sync_id[ID_NI_SLICE].
ID_NI_SLICE = slice(ID_NI_SHIFT, ID_NI_SHIFT + ID_NI_BITS)

MAX_TILES = 1 << ID_NI_BITS  # 128
MAX_CTRL = 1 << ID_INDEX_BITS  # control structures per engine (index field)
GEN_MASK = (1 << ID_GEN_BITS) - 1
MAX_BARRIER = 0xFFFF  # largest barrier count (16-bit field of the control word)
MAX_READERS = 0xFFFF  # most readers of a read-write lock at once (EAGAIN beyond)


def make_id(ni, kind, gen, index):
    return (
        (1 << ID_F_BIT)
        | (ni << ID_NI_SHIFT)
        | (kind << ID_KIND_SHIFT)
        | ((gen & GEN_MASK) << ID_GEN_SHIFT)
        | (index << ID_INDEX_SHIFT)
    )


def id_ni(sync_id):
    return (sync_id >> ID_NI_SHIFT) & ((1 << ID_NI_BITS) - 1)


def id_kind(sync_id):
    return (sync_id >> ID_KIND_SHIFT) & ((1 << ID_KIND_BITS) - 1)


def id_gen(sync_id):
    return (sync_id >> ID_GEN_SHIFT) & GEN_MASK


def id_index(sync_id):
    return (sync_id >> ID_INDEX_SHIFT) & ((1 << ID_INDEX_BITS) - 1)


def id_f(sync_id):
    return (sync_id >> ID_F_BIT) & 1


def alloc_target(ni):
    """Sync-id word of an ALLOC_* request for host ``ni`` (routing bits only, F = 0)."""
    return ni << ID_NI_SHIFT


def is_mutex_kind(kind):
    return kind in (KIND_MUTEX, KIND_MUTEX_EC)


def host_of(sync_id):
    """Tile that hosts ``sync_id`` (also the routing target of an ALLOC_* request)."""
    return id_ni(sync_id)


def format_id(sync_id):
    if not id_f(sync_id):
        return f"0x{sync_id:08x}"
    return f"{KIND_NAMES.get(id_kind(sync_id), f'kind{id_kind(sync_id)}')}@{id_ni(sync_id)}#{id_index(sync_id)}.g{id_gen(sync_id)}"


# Packet layouts (LiteX stream payloads). ----------------------------------------------------------

REQUEST_LAYOUT = [
    ("sync_id", 32),
    ("op", 8),
    ("core", 8),
    ("thread", 16),
    ("value", 32),
    ("reply", 1),
]

PACKET_LAYOUT = [
    ("dest", 8),
    ("sync_id", 32),
    ("op", 8),
    ("core", 8),
    ("thread", 16),
    ("value", 32),
]


def is_reply(op):
    return bool(op & OP_REPLY)


def reply_status(op):
    return op & 0x7F


# Event counters of an engine (names shared by the gateware, the model and the NI). ----------------

COUNTERS = [
    # (name, description)
    ("grants", "mutex grants (immediate or by hand-over at unlock/requeue)"),
    ("replies", "reply packets sent"),
    ("e2e", "engine-to-engine packets sent to other engines (source)"),
    ("self_requests", "engine-to-engine requests to itself (self requests, never on source)"),
    ("errors", "requests that ended with a non-zero status"),
    ("silent_errors", "errors of requests without reply (posted, reply = 0)"),
    ("queue_hwm", "high-water mark of queue elements in use"),
    ("free_queue", "free queue elements (now)"),
    ("free_ctrl", "free control structures (now)"),
    ("busy_cycles", "cycles the FSM was not idle"),
]
REQUEST_COUNTERS = ["req_" + name.lower() for name in OPS] + ["req_other"]


def c_header(prefix="SUBUTAI"):
    """C header text with the op codes, statuses and id layout (for the software library)."""
    lines = [
        "/* Generated from gateware/subutai/protocol.py: do not edit. */",
        f"#ifndef {prefix}_PROTOCOL_H",
        f"#define {prefix}_PROTOCOL_H",
        "",
    ]
    for name, op in OPS.items():
        lines.append(f"#define {prefix}_OP_{name:<16} 0x{op:02x}")
    lines += [
        f"#define {prefix}_OP_REPLY            0x{OP_REPLY:02x}",
        f"#define {prefix}_OP_FLAG_REPLY       0x{OP_FLAG_REPLY:02x}",
        "",
    ]
    for name, k in (
        ("MUTEX", KIND_MUTEX),
        ("MUTEX_EC", KIND_MUTEX_EC),
        ("BARRIER", KIND_BARRIER),
        ("COND", KIND_COND),
        ("RWLOCK", KIND_RWLOCK),
    ):
        lines.append(f"#define {prefix}_KIND_{name:<10} {k}")
    lines += [
        "",
        f"#define {prefix}_ID_F            (1u << {ID_F_BIT})",
        f"#define {prefix}_ID_NI(id)       (((id) >> {ID_NI_SHIFT}) & 0x{(1 << ID_NI_BITS) - 1:x})",
        f"#define {prefix}_ID_KIND(id)     (((id) >> {ID_KIND_SHIFT}) & 0x{(1 << ID_KIND_BITS) - 1:x})",
        f"#define {prefix}_ID_GEN(id)      (((id) >> {ID_GEN_SHIFT}) & 0x{GEN_MASK:x})",
        f"#define {prefix}_ID_INDEX(id)    (((id) >> {ID_INDEX_SHIFT}) & 0x{(1 << ID_INDEX_BITS) - 1:x})",
        f"#define {prefix}_ALLOC_TARGET(ni) ((unsigned)(ni) << {ID_NI_SHIFT})",
        f"#define {prefix}_MAX_BARRIER     {MAX_BARRIER}",
        f"#define {prefix}_REPLY_STATUS(op) ((op) & 0x7f)",
        "/* Reply value of the one barrier waiter that gets PTHREAD_BARRIER_SERIAL_THREAD. */",
        f"#define {prefix}_SERIAL_VALUE    0x{SERIAL_VALUE:08x}u",
        "/* Reply value of a lock grant of a mutex this core released last (no invalidation). */",
        f"#define {prefix}_GRANT_LOCAL     {GRANT_LOCAL}u",
        "/* What the driver's barrier wait returns to that waiter (PTHREAD_BARRIER_SERIAL_THREAD). */",
        f"#define {prefix}_BARRIER_SERIAL_THREAD ({PTHREAD_BARRIER_SERIAL_THREAD})",
        "",
    ]
    lines.append(f"#endif /* {prefix}_PROTOCOL_H */")
    return "\n".join(lines) + "\n"


def c_status_header(prefix="SUBUTAI"):
    """C header text with the reply statuses (the hardware's own numbering, not the C library's
    errno values) and which ops are posted."""
    lines = [
        "/* Generated from gateware/subutai/protocol.py: do not edit. */",
        f"#ifndef {prefix}_STATUS_H",
        f"#define {prefix}_STATUS_H",
        "",
    ]
    for code, name in sorted(STATUS_NAMES.items()):
        lines.append(f"#define {prefix}_STATUS_{name:<8} {code}")
    # Ops answered only when a reply is asked for.
    posted = " || ".join(f"(op) == 0x{op:02x}" for op in POSTED_OPS)
    lines += ["", f"#define {prefix}_OP_IS_POSTED(op) ({posted})", "", f"#endif /* {prefix}_STATUS_H */"]
    return "\n".join(lines) + "\n"


# Scratchpad geometry (shared by the gateware and the model). ---------------------------------------

SPM_WORD_BYTES = 8  # the SPM is 64 bits wide: one word per control structure / queue element
QUEUE_NIL = 0xFF  # "no element" in 8-bit queue pointers
CTRL_NIL = 0xFFFF  # "no control structure" in the control free list
MAX_QUEUE = 255  # queue elements per engine (8-bit pointers, 0xff = nil)


def spm_geometry(spm_bytes, n_ctrl=None):
    """Return ``(depth, n_ctrl, n_queue)`` of an engine's scratchpad.

    ``depth`` 64-bit words; queue elements occupy words ``[0, n_queue)``, control structures
    ``[n_queue, n_queue + n_ctrl)`` (so a queue pointer is a word address, engine.py). Default split: a quarter of the words for control structures,
    the rest for queue elements, at most :data:`MAX_QUEUE` of them (any excess goes to control
    structures, at most :data:`MAX_CTRL`).
    """
    depth = spm_bytes // SPM_WORD_BYTES
    assert spm_bytes % SPM_WORD_BYTES == 0 and depth >= 2, "spm_bytes: a multiple of 8, >= 16"
    if n_ctrl is None:
        n_ctrl = max(1, depth // 4, depth - MAX_QUEUE)
    n_ctrl = min(n_ctrl, MAX_CTRL, depth - 1)
    n_queue = min(depth - n_ctrl, MAX_QUEUE)
    assert n_ctrl >= 1 and n_queue >= 1
    return depth, n_ctrl, n_queue
