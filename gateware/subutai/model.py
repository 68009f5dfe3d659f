#
# Reference model of Subutai-HW engines (pure Python, no Migen).
#
"""Behavioural model of :class:`gateware.subutai.engine.SubutaiEngine` and of a system of them.

:class:`EngineModel` is a function of its input sequence: fed the requests one engine accepted,
in the order it accepted them, it emits exactly the packets the RTL emits (same order, same
fields, same ids: the allocator, its LIFO free list and the generations are reproduced). The
differential tests use it that way on the request order observed in the RTL.

:class:`SystemModel` connects N engine models with an ideal interconnect that delivers packets
in order per (source, destination) pair, and collects the replies per tile.
"""

from collections import deque, namedtuple

from gateware.subutai import protocol as P

Request = namedtuple("Request", "sync_id op core thread value reply")
Packet = namedtuple("Packet", "dest sync_id op core thread value")
# A request an engine queues for itself (carries the reply flag; never leaves the engine).
SelfPacket = namedtuple("SelfPacket", "dest sync_id op core thread value reply")


def request(sync_id, op, core, thread, value=0, reply=0):
    return Request(sync_id & 0xFFFFFFFF, op, core, thread, value & 0xFFFFFFFF, reply)


class _Ctrl:
    __slots__ = ("alloc", "kind", "gen", "locked", "owner", "count", "max", "queue", "wmutex", "released_by")

    def __init__(self):
        self.alloc, self.kind, self.gen = False, 0, 0
        self.locked, self.owner, self.count, self.max = False, (0, 0), 0, 0
        self.queue = deque()  # (core, thread, aux)
        # Cond: the mutex id its waiters wait with (bit 31 cleared: they used different ones).
        self.wmutex = 0
        # Mutex: the core that unlocked it last while it had no waiters (None: held or never).
        self.released_by = None


class EngineModel:
    """One engine: ``process(req)`` returns the list of packets it emits for ``req``."""

    def __init__(self, ni_id, n_tiles, spm_bytes=2048, n_ctrl=None):
        self.ni_id, self.n_tiles = ni_id, n_tiles
        self.depth, self.n_ctrl, self.n_queue = P.spm_geometry(spm_bytes, n_ctrl)
        self.ctrl = [_Ctrl() for _ in range(self.n_ctrl)]
        self.ctrl_free = list(range(self.n_ctrl - 1, -1, -1))  # LIFO, top = end: 0 first.
        self.free_queue = self.n_queue
        self.counters = {name: 0 for name in P.REQUEST_COUNTERS}
        self.counters.update({name: 0 for name, _ in P.COUNTERS})
        self.counters["free_queue"] = self.n_queue
        self.counters["free_ctrl"] = self.n_ctrl
        self.last_error = None  # (sync_id, op, status) of the last error without reply.

    # Helpers --------------------------------------------------------------------------------------

    def _lookup(self, sync_id):
        """The control structure named by ``sync_id``, or None if the id is not valid here."""
        idx = P.id_index(sync_id)
        if not P.id_f(sync_id) or P.id_ni(sync_id) != self.ni_id or idx >= self.n_ctrl:
            return None
        c = self.ctrl[idx]
        if not c.alloc or c.kind != P.id_kind(sync_id) or c.gen != P.id_gen(sync_id):
            return None
        return c

    def _routable(self, sync_id, kinds):
        return P.id_f(sync_id) and P.id_kind(sync_id) in kinds and P.id_ni(sync_id) < self.n_tiles

    @staticmethod
    def _reply(req, status=0, value=0, sync_id=None, core=None, thread=None):
        core = req.core if core is None else core
        thread = req.thread if thread is None else thread
        return Packet(
            core,
            req.sync_id if sync_id is None else sync_id,
            P.OP_REPLY | status,
            core,
            thread,
            value & 0xFFFFFFFF,
        )

    def _enqueue(self, c, req, aux=0):
        c.queue.append((req.core, req.thread, aux))
        self.free_queue -= 1
        used = self.n_queue - self.free_queue
        self.counters["queue_hwm"] = max(self.counters["queue_hwm"], used)

    # Processing -----------------------------------------------------------------------------------

    def process(self, req):
        """Process ``req`` and the requests it queues on the engine's own self queue (served
        before the next request, as in the RTL); return the packets sent on ``source``."""
        out = []
        selfq = deque([req])
        while selfq:
            for p in self._process_counted(selfq.popleft()):
                if not P.is_reply(p.op) and p.dest == self.ni_id:
                    self.counters["self_requests"] += 1
                    selfq.append(Request(p.sync_id, p.op, p.core, p.thread, p.value, getattr(p, "reply", 0)))
                else:
                    self.counters["replies" if P.is_reply(p.op) else "e2e"] += 1
                    out.append(Packet(*p[:6]))
            assert len(selfq) <= 2, "self queue overflow"
        self.counters["free_queue"] = self.free_queue
        self.counters["free_ctrl"] = len(self.ctrl_free)
        return out

    def _process_counted(self, req):
        name = "req_" + P.OP_NAMES[req.op].lower() if req.op in P.OP_NAMES else "req_other"
        self.counters[name] += 1
        out = []
        status = self._process(req, out)
        if status:
            self.counters["errors"] += 1
            want = req.reply if (req.op in P.POSTED_OPS or req.op not in P.OP_NAMES) else 1
            if want:
                out.append(self._reply(req, status))
            else:
                self.counters["silent_errors"] += 1
                self.last_error = (req.sync_id, req.op, status)
        return out

    def _process(self, req, out):
        """Checks the request, then runs the handler of its op (one method per operation, as
        the engine has one FSM state per operation); returns 0 or an error status."""
        if req.op in P.ALLOC_OPS:
            return self._alloc(req, out)
        status = self._check(req)
        if status:
            return status
        return self._handlers[req.op](self, req, self._lookup(req.sync_id), out)

    def _check(self, req):
        """EINVAL when the id does not name an allocated structure of the op's kind, or when a
        mutex/cond id carried in the value cannot be routed; else 0."""
        op, v = req.op, req.value
        if op not in P.OP_NAMES or self._lookup(req.sync_id) is None:
            return P.EINVAL
        kind = P.id_kind(req.sync_id)
        if op in P.MUTEX_OPS and not P.is_mutex_kind(kind):
            return P.EINVAL
        if op in P.BARRIER_OPS and kind != P.KIND_BARRIER:
            return P.EINVAL
        if op in P.COND_OPS and kind != P.KIND_COND:
            return P.EINVAL
        if op in P.RWLOCK_OPS and kind != P.KIND_RWLOCK:
            return P.EINVAL
        if op == P.OP_WAIT_CHECK and not self._routable(v, (P.KIND_COND,)):
            return P.EINVAL
        if op in (P.OP_COND_WAIT, P.OP_COND_ENQUEUE) and not self._routable(
            v, (P.KIND_MUTEX, P.KIND_MUTEX_EC)
        ):
            return P.EINVAL
        return 0

    def _alloc(self, req, out):
        op, v = req.op, req.value
        if op == P.OP_ALLOC_MUTEX and v > 1:
            return P.EINVAL
        if op == P.OP_ALLOC_BARRIER and (v == 0 or v > P.MAX_BARRIER):
            return P.EINVAL
        if op == P.OP_ALLOC_RWLOCK and v != 0:
            return P.EINVAL
        if not self.ctrl_free:
            return P.EAGAIN
        idx = self.ctrl_free.pop()
        c = self.ctrl[idx]
        c.alloc = True
        c.kind = {
            P.OP_ALLOC_MUTEX: v & 1,
            P.OP_ALLOC_BARRIER: P.KIND_BARRIER,
            P.OP_ALLOC_COND: P.KIND_COND,
            P.OP_ALLOC_RWLOCK: P.KIND_RWLOCK,
        }[op]
        c.locked, c.owner, c.count, c.queue, c.wmutex = False, (0, 0), 0, deque(), 0
        c.released_by = None
        c.max = v if op == P.OP_ALLOC_BARRIER else 0
        new_id = P.make_id(self.ni_id, c.kind, c.gen, idx)
        out.append(self._reply(req, 0, new_id, sync_id=new_id))
        return 0

    def _free(self, req, c, out):
        if c.queue or ((P.is_mutex_kind(c.kind) or c.kind == P.KIND_RWLOCK) and c.locked) or c.count:
            return P.EBUSY
        c.alloc = False
        c.gen = (c.gen + 1) & P.GEN_MASK
        self.ctrl_free.append(P.id_index(req.sync_id))
        out.append(self._reply(req))
        return 0

    def _lock(self, req, c, out):
        """LOCK, TRYLOCK and LOCK_FOR (the requeue of a woken condition waiter)."""
        me = (req.core, req.thread)
        if not c.locked:
            local = req.op != P.OP_LOCK_FOR and c.released_by == req.core
            c.locked, c.owner, c.released_by = True, me, None
            self.counters["grants"] += 1
            out.append(self._reply(req, value=P.GRANT_LOCAL if local else 0))
            return 0
        if req.op == P.OP_TRYLOCK:
            return P.EBUSY
        if c.owner == me and c.kind == P.KIND_MUTEX_EC:
            return P.EDEADLK
        if self.free_queue == 0:
            return P.EAGAIN
        self._enqueue(c, req)
        return 0

    def _unlock(self, req, c, out):
        """UNLOCK and UNLOCK_FOR: hand the mutex to the first waiter, if any."""
        if not c.locked or c.owner != (req.core, req.thread):
            return P.EPERM
        if not c.queue:
            c.locked, c.owner, c.released_by = False, (0, 0), req.core
        else:
            core, thread, _ = c.queue.popleft()
            self.free_queue += 1
            c.owner = (core, thread)
            self.counters["grants"] += 1
            out.append(self._reply(req, core=core, thread=thread))
        if req.reply:
            out.append(self._reply(req))
        return 0

    def _barrier_wait(self, req, c, out):
        if c.count + 1 == c.max:
            out.append(self._reply(req, 0, P.SERIAL_VALUE))
            for core, thread, _ in c.queue:
                out.append(self._reply(req, core=core, thread=thread))
            self.free_queue += len(c.queue)
            c.queue.clear()
            c.count = 0
            return 0
        if self.free_queue == 0:
            return P.EAGAIN
        c.count += 1
        self._enqueue(c, req)
        return 0

    def _cond_wait(self, req, c, out):
        """At the cond's host: ask the mutex's host whether the caller owns the mutex."""
        v = req.value
        out.append(Packet(P.id_ni(v), v, P.OP_WAIT_CHECK, req.core, req.thread, req.sync_id))
        return 0

    def _wait_check(self, req, c, out):
        """At the mutex's host: the caller must own it; then enqueue it at the cond's host."""
        if not (c.locked and c.owner == (req.core, req.thread)):
            return P.EPERM
        v = req.value
        out.append(Packet(P.id_ni(v), v, P.OP_COND_ENQUEUE, req.core, req.thread, req.sync_id))
        return 0

    def _cond_enqueue(self, req, c, out):
        """At the cond's host: enqueue the waiter, then release its mutex on its behalf."""
        v = req.value
        if self.free_queue == 0:
            return P.EAGAIN
        out.append(Packet(P.id_ni(v), v, P.OP_UNLOCK_FOR, req.core, req.thread, req.sync_id))
        if not c.queue:
            c.wmutex = v
        elif c.wmutex != v:
            c.wmutex &= ~(1 << P.ID_F_BIT)
        self._enqueue(c, req, aux=v)
        return 0

    def _cond_signal(self, req, c, out):
        """COND_SIGNAL, COND_BROADCAST and BROADCAST_NEXT."""
        op = req.op
        if (
            op == P.OP_COND_BROADCAST
            and c.queue
            and P.id_f(c.wmutex)
            and P.id_ni(c.wmutex) == self.ni_id
            and self._lookup(c.wmutex) is not None
        ):
            # Fast path: all waiters wait with one local mutex: splice the queue onto it.
            mc = self._lookup(c.wmutex)
            if not mc.locked:
                core, thread, _ = c.queue.popleft()
                self.free_queue += 1
                mc.locked, mc.owner, mc.released_by = True, (core, thread), None
                self.counters["grants"] += 1
                out.append(self._reply(req, sync_id=c.wmutex, core=core, thread=thread))
            mc.queue.extend(c.queue)
            c.queue.clear()
            if req.reply:
                out.append(self._reply(req))
            return 0
        # One waiter per step; a broadcast queues its next step (self queue) while waiters
        # remain, and answers (reply flag) after the last one.
        if c.queue:
            core, thread, mutex = c.queue.popleft()
            self.free_queue += 1
            out.append(Packet(P.id_ni(mutex), mutex, P.OP_LOCK_FOR, core, thread, req.sync_id))
            if op != P.OP_COND_SIGNAL and c.queue:
                out.append(
                    SelfPacket(
                        self.ni_id, req.sync_id, P.OP_BROADCAST_NEXT, req.core, req.thread, 0, req.reply
                    )
                )
                return 0
        if req.reply:
            out.append(self._reply(req))
        return 0

    # Read-write locks: ``locked`` and ``owner`` are the writer, ``count`` the readers; a queue
    # element's aux is 1 for a writer, 0 for a reader.

    def _rwlock(self, req, c, out):
        """RDLOCK, TRYRDLOCK, WRLOCK, TRYWRLOCK: a reader joins the readers while no writer holds
        the lock or waits for it; a writer takes the lock when nobody holds it."""
        write = req.op in (P.OP_WRLOCK, P.OP_TRYWRLOCK)
        if c.locked and c.owner == (req.core, req.thread):
            return P.EDEADLK
        if not c.locked and (c.count == 0 if write else not c.queue):
            if write:
                c.locked, c.owner = True, (req.core, req.thread)
            elif c.count == P.MAX_READERS:
                return P.EAGAIN
            else:
                c.count += 1
            self.counters["grants"] += 1
            out.append(self._reply(req))
            return 0
        if req.op in (P.OP_TRYRDLOCK, P.OP_TRYWRLOCK):
            return P.EBUSY
        if self.free_queue == 0:
            return P.EAGAIN
        self._enqueue(c, req, aux=int(write))
        return 0

    def _rwunlock(self, req, c, out):
        """The writer's unlock hands the lock to the next writer, or to every reader up to the
        next writer; the last reader's to the writer at the head of the queue."""
        if c.locked:
            if c.owner != (req.core, req.thread):
                return P.EPERM
            c.locked, c.owner = False, (0, 0)
            while c.queue and (c.count == 0 or not c.queue[0][2]):
                core, thread, writer = c.queue.popleft()
                self.free_queue += 1
                self.counters["grants"] += 1
                out.append(self._reply(req, core=core, thread=thread))
                if writer:
                    c.locked, c.owner = True, (core, thread)
                    break
                c.count += 1
        elif c.count:
            c.count -= 1
            if c.count == 0 and c.queue:
                core, thread, _ = c.queue.popleft()
                self.free_queue += 1
                c.locked, c.owner = True, (core, thread)
                self.counters["grants"] += 1
                out.append(self._reply(req, core=core, thread=thread))
        else:
            return P.EPERM
        if req.reply:
            out.append(self._reply(req))
        return 0

    _handlers = {
        P.OP_FREE: _free,
        P.OP_LOCK: _lock,
        P.OP_TRYLOCK: _lock,
        P.OP_LOCK_FOR: _lock,
        P.OP_UNLOCK: _unlock,
        P.OP_UNLOCK_FOR: _unlock,
        P.OP_BARRIER_WAIT: _barrier_wait,
        P.OP_COND_WAIT: _cond_wait,
        P.OP_WAIT_CHECK: _wait_check,
        P.OP_COND_ENQUEUE: _cond_enqueue,
        P.OP_COND_SIGNAL: _cond_signal,
        P.OP_COND_BROADCAST: _cond_signal,
        P.OP_BROADCAST_NEXT: _cond_signal,
        P.OP_RDLOCK: _rwlock,
        P.OP_TRYRDLOCK: _rwlock,
        P.OP_WRLOCK: _rwlock,
        P.OP_TRYWRLOCK: _rwlock,
        P.OP_RWUNLOCK: _rwunlock,
    }

    # Introspection (tests) ------------------------------------------------------------------------

    def live_ids(self):
        """Ids of all allocated control structures."""
        return [P.make_id(self.ni_id, c.kind, c.gen, i) for i, c in enumerate(self.ctrl) if c.alloc]

    def slot(self, sync_id):
        return self._lookup(sync_id)


class SystemModel:
    """N engines and an ideal interconnect (one global FIFO: in order per source/destination).

    ``submit(engine, req)`` queues a core request at ``engine``; ``run()`` processes everything
    pending and returns the replies (:class:`Packet`) in emission order.
    """

    def __init__(self, spm_sizes, n_ctrl=None):
        n = len(spm_sizes)
        self.engines = [EngineModel(i, n, s, n_ctrl) for i, s in enumerate(spm_sizes)]
        self.pending = deque()  # (engine, Request)

    def submit(self, engine, req):
        self.pending.append((engine, req))

    def run(self):
        return [p for _, p in self.run_sources()]

    def run_sources(self):
        """Like :meth:`run`, but returns (engine that sent it, reply) pairs. Replies from one
        engine keep their order in a real system; replies from different engines may not."""
        replies = []
        while self.pending:
            e, req = self.pending.popleft()
            for p in self.engines[e].process(req):
                if P.is_reply(p.op):
                    replies.append((e, p))
                else:
                    self.pending.append((p.dest, Request(p.sync_id, p.op, p.core, p.thread, p.value, 0)))
        return replies
