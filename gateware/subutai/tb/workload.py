#
# Closed-loop workloads for the Subutai-HW bench: simulated threads running random programs.
#
"""Simulated threads on the Verilator bench.

A thread is a Python generator that yields actions:

- ``(CALL, engine, Request)``  send a request and block until its reply; the reply
  (:class:`Reply`) is sent back into the generator;
- ``(POST, engine, Request)``  send a request that has no reply and continue;
- ``(THINK, cycles)``          delay the next request.

:class:`Driver` runs the threads against a :class:`gateware.subutai.tb.bench.Bench`: it injects
requests at the threads' core ports, runs the bench until a reply arrives, resumes the thread the
reply is for, and so on. Every event goes through a :class:`gateware.subutai.tb.checker.Replay`
(differential check against the model); :class:`World` holds the program-level checks (mutual
exclusion, barrier rounds, expected statuses).

The thread library (:func:`lock`, :func:`cond_wait`, ...) behaves like the PThreads library will:
it retries EAGAIN on locks, and handles a condition wait whose requeue onto the mutex failed
(reply from the mutex host with EAGAIN: the waiter was woken but does not own the mutex) by
locking the mutex itself.
"""

import random
from collections import defaultdict, deque, Counter

from gateware.subutai import protocol as P
from gateware.subutai.model import request
from gateware.subutai.tb.checker import fmt_pkt

CALL, POST, THINK = "call", "post", "think"

JANITOR = (0, 0xFFFF)


class Reply:
    __slots__ = ("status", "value", "sync_id", "cycle", "pkt")

    def __init__(self, pkt, cycle):
        self.pkt, self.cycle = pkt, cycle
        self.status = P.reply_status(pkt.op)
        self.value, self.sync_id = pkt.value, pkt.sync_id

    def __repr__(self):
        return f"Reply({fmt_pkt(self.pkt)} @{self.cycle})"


class Thread:
    def __init__(self, core, thread, rng):
        self.core, self.thread, self.rng = core, thread, rng
        self.me = (core, thread)
        self.gen = None
        self.time = 0  # cycle of its last reply
        self.delay = 0  # think time before its next request
        self.done = False
        self.waiting = None  # description of the blocking call

    def req(self, sync_id, op, value=0, reply=0):
        return request(sync_id, op, self.core, self.thread, value, reply)


class Barrier:
    def __init__(self, bid, members):
        self.id, self.members, self.count = bid, list(members), len(members)
        self.round = {m: 0 for m in members}  # next round of each member
        self.arrived = Counter()  # round -> arrivals (per the driver)
        self.released = Counter()  # round -> releases seen
        self.serial = Counter()  # round -> SERIAL_THREAD replies


class World:
    """Shared program state and the program-level checks."""

    def __init__(self, n, spm_sizes):
        from gateware.subutai.protocol import spm_geometry

        self.n = n
        self.geom = [spm_geometry(s) for s in spm_sizes]
        self.holder = {}  # mutex id -> thread (.me) or None
        self.mutexes = []  # shared mutex ids
        self.conds = []  # shared (cond id, its mutex id)
        self.barriers = {}  # id -> Barrier
        self.cond_waiters = defaultdict(set)
        self.slot_gen = {}  # (host, index) -> generation after the last FREE
        self.stale = deque(maxlen=64)  # freed ids
        self.next_host = 0
        self.alloc_hosts = list(range(n))  # hosts of new primitives, round-robin
        self.stats = Counter()

    def host_rr(self):
        h = self.alloc_hosts[self.next_host % len(self.alloc_hosts)]
        self.next_host += 1
        return h

    def acquired(self, m, me, how="lock"):
        h = self.holder.get(m)
        assert h is None, f"mutual exclusion violated: {me} got {P.format_id(m)} by {how} while {h} holds it"
        self.holder[m] = me
        self.stats["acquisitions"] += 1

    def released(self, m, me):
        assert self.holder.get(m) == me, f"{me} releases {P.format_id(m)} held by {self.holder.get(m)}"
        self.holder[m] = None

    def freed(self, sync_id):
        key = (P.id_ni(sync_id), P.id_index(sync_id))
        self.slot_gen[key] = (P.id_gen(sync_id) + 1) & P.GEN_MASK
        self.stale.append(sync_id)

    def stale_safe(self, sync_id):
        """A freed id that cannot have become valid again (its slot went through fewer than
        4096 - 128 generations since)."""
        key = (P.id_ni(sync_id), P.id_index(sync_id))
        d = (self.slot_gen.get(key, 0) - P.id_gen(sync_id)) & P.GEN_MASK
        return 1 <= d <= P.GEN_MASK + 1 - 128


# Thread library ------------------------------------------------------------------------------------


def expect(rep, status, what, value=None):
    assert rep.status == status, f"{what}: expected {P.STATUS_NAMES.get(status, status)}, got {rep}"
    if value is not None:
        assert rep.value == value, f"{what}: expected value {value:#x}, got {rep}"


def alloc(w, t, op, value=0, host=None):
    """Returns the new id, or None when the host is out of control structures (EAGAIN)."""
    h = w.host_rr() if host is None else host
    rep = yield (CALL, h, t.req(P.alloc_target(h), op, value))
    if rep.status == P.EAGAIN:
        w.stats["alloc_eagain"] += 1
        return None
    expect(rep, 0, f"alloc op {op:#x} value {value}")
    sid = rep.value
    assert rep.sync_id == sid and P.id_ni(sid) == h and P.id_f(sid)
    kind = {P.OP_ALLOC_MUTEX: value, P.OP_ALLOC_BARRIER: P.KIND_BARRIER, P.OP_ALLOC_COND: P.KIND_COND}[op]
    assert P.id_kind(sid) == kind, f"alloc returned {P.format_id(sid)}, kind {kind} expected"
    if op == P.OP_ALLOC_MUTEX:
        w.holder[sid] = None
    return sid


def free(w, t, sid, expect_status=0):
    rep = yield (CALL, P.host_of(sid), t.req(sid, P.OP_FREE))
    expect(rep, expect_status, f"free {P.format_id(sid)}")
    if expect_status == 0:
        w.freed(sid)
        w.holder.pop(sid, None)


def lock(w, t, m):
    while True:
        t.waiting = ("lock", m)
        rep = yield (CALL, P.host_of(m), t.req(m, P.OP_LOCK))
        t.waiting = None
        if rep.status == 0:
            w.acquired(m, t.me)
            return
        expect(rep, P.EAGAIN, f"lock {P.format_id(m)}")
        w.stats["lock_eagain"] += 1
        yield (THINK, t.rng.randint(10, 80))


def unlock(w, t, m, reply=False):
    # Like the library: an error-checking mutex is always unlocked with a reply (the unlock may
    # fail with EPERM), so the caller's next request cannot overtake its unlock.
    reply = reply or P.id_kind(m) == P.KIND_MUTEX_EC
    w.released(m, t.me)
    if reply:
        rep = yield (CALL, P.host_of(m), t.req(m, P.OP_UNLOCK, reply=1))
        expect(rep, 0, f"unlock {P.format_id(m)}")
    else:
        yield (POST, P.host_of(m), t.req(m, P.OP_UNLOCK))


def trylock(w, t, m):
    rep = yield (CALL, P.host_of(m), t.req(m, P.OP_TRYLOCK))
    if rep.status == 0:
        w.acquired(m, t.me, "trylock")
        return True
    expect(rep, P.EBUSY, f"trylock {P.format_id(m)}")
    return False


def cond_wait(w, t, c, m):
    """pthread_cond_wait: returns with m held (retrying a failed requeue like the library)."""
    w.released(m, t.me)
    w.cond_waiters[c].add(t.me)
    t.waiting = ("cond", c)
    rep = yield (CALL, P.host_of(c), t.req(c, P.OP_COND_WAIT, m))
    t.waiting = None
    w.cond_waiters[c].discard(t.me)
    if rep.status == 0:
        assert rep.sync_id == m, f"cond wait woken with a grant for {P.format_id(rep.sync_id)}"
        w.acquired(m, t.me, "cond wake")
        w.stats["cond_wakes"] += 1
    elif rep.status == P.EAGAIN and rep.sync_id == c:
        # Not enqueued (no queue element at the cond's host): the mutex was never released.
        w.acquired(m, t.me, "cond wait refused")
        w.stats["cond_eagain_enqueue"] += 1
    elif rep.status == P.EAGAIN and rep.sync_id == m:
        # Woken, but the mutex's host could not queue the requeue: lock it ourselves.
        w.stats["cond_eagain_requeue"] += 1
        yield from lock(w, t, m)
    else:
        raise AssertionError(f"cond wait {P.format_id(c)} / {P.format_id(m)}: {rep}")


def barrier_wait(w, t, b):
    bar = w.barriers[b]
    while True:
        r = bar.round[t.me]
        bar.arrived[r] += 1
        t.waiting = ("barrier", b)
        rep = yield (CALL, P.host_of(b), t.req(b, P.OP_BARRIER_WAIT))
        t.waiting = None
        if rep.status == P.EAGAIN:
            bar.arrived[r] -= 1
            w.stats["barrier_eagain"] += 1
            yield (THINK, t.rng.randint(10, 80))
            continue
        expect(rep, 0, f"barrier {P.format_id(b)}")
        assert bar.arrived[r] == bar.count, (
            f"barrier {P.format_id(b)} round {r} released "
            f"{t.me} after {bar.arrived[r]} of {bar.count} arrivals"
        )
        bar.released[r] += 1
        if rep.value == P.SERIAL_VALUE:
            bar.serial[r] += 1
        else:
            assert rep.value == 0, rep
        bar.round[t.me] = r + 1
        w.stats["barrier_waits"] += 1
        return


# Episodes ------------------------------------------------------------------------------------------


def ep_lock(w, t):
    m = t.rng.choice(w.mutexes)
    yield from lock(w, t, m)
    yield (THINK, t.rng.randint(0, 20))
    yield from unlock(w, t, m, reply=t.rng.random() < 0.3)


def ep_trylock(w, t):
    m = t.rng.choice(w.mutexes)
    if (yield from trylock(w, t, m)):
        yield (THINK, t.rng.randint(0, 10))
        yield from unlock(w, t, m, reply=t.rng.random() < 0.3)


def ep_cond_wait(w, t):
    c, m = t.rng.choice(w.conds)
    yield from lock(w, t, m)
    yield from cond_wait(w, t, c, m)
    if t.rng.random() < 0.3:
        yield (POST, P.host_of(c), t.req(c, P.OP_COND_SIGNAL))
    yield (THINK, t.rng.randint(0, 10))
    yield from unlock(w, t, m, reply=t.rng.random() < 0.2)


def ep_signal(w, t):
    c, m = t.rng.choice(w.conds)
    held = t.rng.random() < 0.8
    if held:
        yield from lock(w, t, m)
    op = P.OP_COND_SIGNAL if t.rng.random() < 0.6 else P.OP_COND_BROADCAST
    if t.rng.random() < 0.3:
        rep = yield (CALL, P.host_of(c), t.req(c, op, reply=1))
        expect(rep, 0, f"signal {P.format_id(c)}")
    else:
        yield (POST, P.host_of(c), t.req(c, op))
    if held:
        yield from unlock(w, t, m)


def ep_churn(w, t):
    """Allocate a private primitive, use it, free it, then use the stale id."""
    rng = t.rng
    k = rng.randrange(4)
    if k <= 1:
        m = yield from alloc(w, t, P.OP_ALLOC_MUTEX, k)
        if m is None:
            return
        for _ in range(rng.randint(1, 3)):
            yield from lock(w, t, m)
            if k == P.KIND_MUTEX_EC and rng.random() < 0.5:
                rep = yield (CALL, P.host_of(m), t.req(m, P.OP_LOCK))
                expect(rep, P.EDEADLK, "relock of an error-checking mutex")
            if rng.random() < 0.5:
                yield from free(w, t, m, P.EBUSY)
            yield from unlock(w, t, m, reply=rng.random() < 0.5)
        sid = m
    elif k == 2:
        b = yield from alloc(w, t, P.OP_ALLOC_BARRIER, 1)
        if b is None:
            return
        for _ in range(rng.randint(1, 3)):
            rep = yield (CALL, P.host_of(b), t.req(b, P.OP_BARRIER_WAIT))
            expect(rep, 0, "barrier of 1", P.SERIAL_VALUE)
        sid = b
    else:
        c = yield from alloc(w, t, P.OP_ALLOC_COND)
        if c is None:
            return
        for op in (P.OP_COND_SIGNAL, P.OP_COND_BROADCAST):
            rep = yield (CALL, P.host_of(c), t.req(c, op, reply=1))
            expect(rep, 0, "signal without waiters")
        sid = c
    yield from free(w, t, sid)
    # The id is stale now.
    op = {0: P.OP_LOCK, 1: P.OP_TRYLOCK, 2: P.OP_BARRIER_WAIT, 3: P.OP_COND_SIGNAL}[k]
    if w.stale_safe(sid):
        rep = yield (CALL, P.host_of(sid), t.req(sid, op, reply=1))
        expect(rep, P.EINVAL, f"stale id {P.format_id(sid)}")
    yield from ep_stale(w, t)


def ep_stale(w, t):
    """Reuse some older freed id (probably re-allocated by now)."""
    if not w.stale:
        return
    sid = t.rng.choice(w.stale)
    if not w.stale_safe(sid):
        return
    op = t.rng.choice(
        [
            P.OP_FREE,
            P.OP_LOCK,
            P.OP_TRYLOCK,
            P.OP_UNLOCK,
            P.OP_BARRIER_WAIT,
            P.OP_COND_SIGNAL,
            P.OP_COND_BROADCAST,
        ]
    )
    rep = yield (CALL, P.host_of(sid), t.req(sid, op, reply=1))
    expect(rep, P.EINVAL, f"stale id {P.format_id(sid)} op {op:#x}")
    w.stats["stale_einval"] += 1


def ep_invalid(w, t):
    """Malformed ids: all EINVAL, whatever the state."""
    rng, n = t.rng, w.n
    k = rng.randrange(7)
    e = rng.randrange(n)
    if k == 0:  # F bit clear
        sid, op = rng.getrandbits(31), rng.choice([P.OP_LOCK, P.OP_FREE, P.OP_BARRIER_WAIT])
    elif k == 1:  # Sent to the wrong engine (its NI field names another tile).
        sid = rng.choice(w.mutexes)
        e = (P.host_of(sid) + rng.randrange(1, n)) % n if n > 1 else e
        op = P.OP_LOCK
        if n == 1:
            sid = P.make_id(0, 0, 0, 0) | (1 << P.ID_NI_SHIFT)
    elif k == 2:  # Index beyond the control structures.
        n_ctrl = w.geom[e][1]
        sid = P.make_id(e, rng.randrange(4), 0, rng.randrange(n_ctrl, P.MAX_CTRL))
        op = P.OP_TRYLOCK
    elif k == 3:  # Wrong kind in the id.
        m = rng.choice(w.mutexes)
        sid = (m & ~(3 << P.ID_KIND_SHIFT)) | (P.KIND_COND << P.ID_KIND_SHIFT)
        e, op = P.host_of(m), P.OP_COND_SIGNAL
    elif k == 4:  # Right kind, wrong generation.
        m = rng.choice(w.mutexes)
        sid = m ^ (rng.randrange(1, P.GEN_MASK + 1) << P.ID_GEN_SHIFT)
        e, op = P.host_of(m), P.OP_TRYLOCK
    elif k == 5:  # Operation of another primitive kind.
        b = rng.choice(list(w.barriers))
        sid, e, op = b, P.host_of(b), rng.choice([P.OP_LOCK, P.OP_UNLOCK, P.OP_COND_SIGNAL])
    else:  # Cond wait with something that is not a mutex.
        c, _ = rng.choice(w.conds)
        other = rng.choice([rng.choice(list(w.barriers)), c, rng.getrandbits(31)])
        rep = yield (CALL, P.host_of(c), t.req(c, P.OP_COND_WAIT, other))
        expect(rep, P.EINVAL, "cond wait on a non-mutex")
        assert rep.sync_id == c
        return
    rep = yield (CALL, e, t.req(sid, op, reply=1))
    expect(rep, P.EINVAL, f"invalid id {sid:#x} op {op:#x} at engine {e}")
    w.stats["invalid_einval"] += 1


def ep_misuse(w, t):
    """Error-checking paths with a deterministic answer."""
    rng = t.rng
    k = rng.randrange(8)
    m = rng.choice(w.mutexes)
    if k == 0:  # Unlock of a mutex we do not hold: EPERM (answered or silent).
        if rng.random() < 0.5:
            rep = yield (CALL, P.host_of(m), t.req(m, P.OP_UNLOCK, reply=1))
            expect(rep, P.EPERM, "unlock by a non-owner")
        else:
            yield (POST, P.host_of(m), t.req(m, P.OP_UNLOCK))
    elif k == 1:  # Cond wait without the mutex: EPERM from the mutex's host.
        c, _ = rng.choice(w.conds)
        w.cond_waiters[c].add(t.me)
        rep = yield (CALL, P.host_of(c), t.req(c, P.OP_COND_WAIT, m))
        w.cond_waiters[c].discard(t.me)
        assert rep.sync_id == m, rep
        if P.id_kind(m) == P.KIND_MUTEX_EC or rep.status != 0:
            expect(rep, P.EPERM, "cond wait without the mutex")
        else:
            # Normal mutex (undefined behaviour in POSIX): our own posted unlock of m may still
            # be in flight, so the mutex host can see us as the owner; the wait then proceeds
            # normally and returns with m held.
            w.acquired(m, t.me, "cond wait without the mutex")
            w.stats["cond_wait_race"] += 1
            yield from unlock(w, t, m)
    elif k == 2:  # Held mutex: trylock EBUSY, free EBUSY, (error-checking) lock EDEADLK.
        yield from lock(w, t, m)
        rep = yield (CALL, P.host_of(m), t.req(m, P.OP_TRYLOCK))
        expect(rep, P.EBUSY, "trylock by the owner")
        rep = yield (CALL, P.host_of(m), t.req(m, P.OP_FREE))
        expect(rep, P.EBUSY, "free of a locked mutex")
        if P.id_kind(m) == P.KIND_MUTEX_EC:
            rep = yield (CALL, P.host_of(m), t.req(m, P.OP_LOCK))
            expect(rep, P.EDEADLK, "relock")
        yield from unlock(w, t, m)
    elif k == 3:  # Bad allocation arguments.
        h = w.host_rr()
        op, v = rng.choice(
            [
                (P.OP_ALLOC_MUTEX, 2),
                (P.OP_ALLOC_MUTEX, 0x80000000),
                (P.OP_ALLOC_BARRIER, 0),
                (P.OP_ALLOC_BARRIER, P.MAX_BARRIER + 1),
            ]
        )
        rep = yield (CALL, h, t.req(P.alloc_target(h), op, v))
        expect(rep, P.EINVAL, f"alloc {op:#x} value {v}")
    elif k == 4:  # Unknown op.
        op = rng.choice([0, 0x12, 0x1F, 0x20, 0x25, 0x7F, 0x80, 0xFF])
        e = rng.randrange(w.n)
        if rng.random() < 0.5:
            rep = yield (CALL, e, t.req(m, op, reply=1))
            expect(rep, P.EINVAL, f"unknown op {op:#x}")
        else:
            yield (POST, e, t.req(m, op))
    elif k == 5:  # Posted ops on invalid ids without reply: silent.
        c, _ = rng.choice(w.conds)
        bad = c ^ (1 << P.ID_GEN_SHIFT)
        yield (
            POST,
            P.host_of(c),
            t.req(bad, rng.choice([P.OP_COND_SIGNAL, P.OP_COND_BROADCAST, P.OP_UNLOCK])),
        )
    elif k == 6:  # Free of a barrier/cond id of the wrong kind bits.
        b = rng.choice(list(w.barriers))
        bad = (b & ~(3 << P.ID_KIND_SHIFT)) | (P.KIND_MUTEX << P.ID_KIND_SHIFT)
        rep = yield (CALL, P.host_of(b), t.req(bad, P.OP_FREE))
        expect(rep, P.EINVAL, "free with wrong kind")
    else:  # Signal of a cond with the mutex held, reply requested.
        c, cm = rng.choice(w.conds)
        yield from lock(w, t, cm)
        rep = yield (CALL, P.host_of(c), t.req(c, P.OP_COND_BROADCAST, reply=1))
        expect(rep, 0, "broadcast")
        yield from unlock(w, t, cm)
    w.stats["misuse"] += 1


EPISODES = [
    (ep_lock, 30),
    (ep_trylock, 10),
    (ep_cond_wait, 14),
    (ep_signal, 14),
    (ep_churn, 10),
    (ep_stale, 3),
    (ep_invalid, 6),
    (ep_misuse, 8),
]


def worker(w, t, episodes, barrier_plan):
    """``barrier_plan``: sorted list of (episode index, barrier id) of this thread's arrivals."""
    fns, weights = zip(*EPISODES)
    plan = deque(barrier_plan)
    for ep in range(episodes):
        while plan and plan[0][0] <= ep:
            yield from barrier_wait(w, t, plan.popleft()[1])
        fn = t.rng.choices(fns, weights)[0]
        yield from fn(w, t)
        if t.rng.random() < 0.5:
            yield (THINK, t.rng.randint(0, 30))
    while plan:
        yield from barrier_wait(w, t, plan.popleft()[1])


# Driver --------------------------------------------------------------------------------------------


class Deadlock(AssertionError):
    pass


class Driver:
    def __init__(self, bench, replay, world, janitor_period=20000):
        self.bench, self.replay, self.world = bench, replay, world
        self.threads = {}
        self.ready = deque()
        self.blocked = {}
        self.requests = 0
        self.replies = 0
        self.janitor_period = janitor_period
        self.last_janitor = 0

    def spawn(self, t, gen):
        t.gen = gen
        t.done = False
        self.threads[t.me] = t
        self.ready.append((t, None))

    def _advance(self, t, val):
        while True:
            try:
                act = t.gen.send(val)
            except StopIteration:
                t.done = True
                return
            val = None
            if act[0] == THINK:
                t.delay += act[1]
                continue
            kind, engine, req = act
            at = t.time + 1 + t.delay
            t.delay = 0
            self.bench.inject(engine, req, at)
            self.replay.injected_request(engine, req)
            self.requests += 1
            if kind == CALL:
                self.blocked[t.me] = t
                return

    def _janitor(self):
        """Wake condition waiters nobody signals (broadcast without the mutex, as POSIX allows)."""
        conds = [c for c, ws in self.world.cond_waiters.items() if ws]
        if not conds:
            return False
        if JANITOR in self.threads and not self.threads[JANITOR].done:
            return True

        def janitor(t):
            for c in conds:
                rep = yield (CALL, P.host_of(c), t.req(c, P.OP_COND_BROADCAST, reply=1))
                expect(rep, 0, "janitor broadcast")
            self.world.stats["janitor_broadcasts"] += len(conds)

        t = Thread(*JANITOR, None)
        t.time = self.bench.cycle
        self.spawn(t, janitor(t))
        self.last_janitor = self.bench.cycle
        return True

    def run(self, max_cycles=50_000_000):
        bench, replay = self.bench, self.replay
        while True:
            while self.ready:
                t, val = self.ready.popleft()
                self._advance(t, val)
            if bench.cycle - self.last_janitor > self.janitor_period:
                self._janitor()
                self.last_janitor = bench.cycle
                continue
            events, reason = bench.run(max_cycles=200_000, idle=4)
            replay.events(events)
            for ev in events:
                if ev[0] == "Y":
                    _, cyc, tile, pkt = ev
                    key = (pkt.core, pkt.thread)
                    assert pkt.dest == tile == pkt.core
                    t = self.blocked.pop(key, None)
                    assert t is not None, f"cycle {cyc}: reply for a thread not waiting: {fmt_pkt(pkt)}"
                    t.time = cyc
                    self.replies += 1
                    self.ready.append((t, Reply(pkt, cyc)))
            if reason == "max":
                raise Deadlock(f"no reply and no quiet for 200000 cycles at {bench.cycle}")
            if reason == "idle" and not self.ready:
                replay.check_quiescent()
                if not self.blocked:
                    if all(t.done for t in self.threads.values()):
                        return
                    raise Deadlock("idle with threads neither blocked nor done")
                if not self._janitor():
                    raise Deadlock(
                        "deadlock: blocked threads: "
                        + ", ".join(f"{k}:{t.waiting}" for k, t in sorted(self.blocked.items()))
                    )
            if bench.cycle > max_cycles:
                raise Deadlock(f"run exceeded {max_cycles} cycles")


def setup_world(w, t, n_mutex, n_cond, groups):
    """Program of the setup thread: allocate the shared primitives (round-robin hosts)."""
    for i in range(n_mutex):
        m = yield from alloc(w, t, P.OP_ALLOC_MUTEX, i % 2)
        assert m is not None
        w.mutexes.append(m)
    for i in range(n_cond):
        c = yield from alloc(w, t, P.OP_ALLOC_COND)
        assert c is not None
        w.conds.append((c, w.mutexes[i % len(w.mutexes)]))
    for members in groups:
        b = yield from alloc(w, t, P.OP_ALLOC_BARRIER, len(members))
        assert b is not None
        w.barriers[b] = Barrier(b, members)


def teardown_world(w, t):
    for b in list(w.barriers):
        yield from free(w, t, b)
    for c, _ in w.conds:
        yield from free(w, t, c)
    for m in w.mutexes:
        yield from free(w, t, m)


def run_program(
    bench,
    replay,
    spm_sizes,
    seed,
    threads_per_tile=8,
    episodes=100,
    rounds=4,
    n_mutex=6,
    n_cond=3,
    shared_hosts=None,
):
    """A whole random program: setup, workers, teardown. Returns (driver, world).

    ``shared_hosts``: tiles that host the shared primitives (default: all, round-robin); putting
    them all on a small engine exercises queue exhaustion (EAGAIN paths)."""
    n = len(spm_sizes)
    rng = random.Random(seed)
    w = World(n, spm_sizes)
    drv = Driver(bench, replay, w)
    # Setup (one thread), so that all workers start with the primitives allocated.
    st = Thread(0, 0xFFFE, random.Random(rng.random()))
    if shared_hosts is not None:
        w.alloc_hosts = list(shared_hosts)
    drv.spawn(st, setup_world(w, st, n_mutex, n_cond, []))
    drv.run()
    w.alloc_hosts = list(range(n))
    members = [(c, th) for c in range(n) for th in range(1, threads_per_tile + 1)]
    rng.shuffle(members)
    # Barrier groups of 2..4 threads (each thread in at most one group), rounds each.
    groups, i = [], 0
    while i + 2 <= len(members) // 2:
        k = rng.randint(2, 4)
        groups.append(members[i : i + k])
        i += k
    drv.spawn(st, setup_world(w, st, 0, 0, groups))
    drv.run()
    plans = defaultdict(list)
    for b, bar in w.barriers.items():
        for m in bar.members:
            for ep in sorted(rng.sample(range(episodes), min(rounds, episodes))):
                plans[m].append((ep, b))
    for me in members:
        t = Thread(me[0], me[1], random.Random(rng.random()))
        drv.spawn(t, worker(w, t, episodes, sorted(plans[me], key=lambda x: x[0])))
    drv.run()
    # Barrier rounds: complete, exactly one SERIAL_THREAD each.
    for b, bar in w.barriers.items():
        for r in range(rounds):
            assert bar.released[r] == bar.count, (P.format_id(b), r, bar.released[r])
            assert bar.serial[r] == 1, (P.format_id(b), r, bar.serial[r])
    assert all(h is None for h in w.holder.values()), "a mutex is still held at the end"
    drv.spawn(st, teardown_world(w, st))
    drv.run()
    return drv, w
