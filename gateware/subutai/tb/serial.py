#
# Serialized driving of the bench (one request at a time) and fuzzing helpers.
#
"""One request at a time, compared with the whole-system model; request fuzzing; cleanup.

:class:`Serial` injects one core request, runs the bench until everything is quiet, and compares
the replies with :class:`gateware.subutai.model.SystemModel` (per thread, in order) besides the
per-engine replay check. With one request in flight the system's behaviour is deterministic, so
this is an end-to-end differential test (engine-to-engine chains included). The replies a
thread gets from one engine are compared in order; replies from different engines may arrive in
either order, as in any real network.

:func:`fuzz_request` draws random, mostly-plausible requests (valid, stale, malformed ids; all
ops, engine-only ones and unknown ones included; random owners). :func:`cleanup` drives any state
back to "everything free" using a model's view of the engines (unlock by the owner, broadcast,
complete barriers, free).
"""

import copy
from collections import defaultdict

from gateware.subutai import protocol as P
from gateware.subutai.model import SystemModel, request
from gateware.subutai.tb.checker import Replay, Mismatch, fmt_pkt


def by_thread(pairs):
    """{(core, thread, engine): [replies]}: the order that is deterministic."""
    d = defaultdict(list)
    for e, p in pairs:
        d[(p.core, p.thread, e)].append(p)
    return dict(d)


class Serial:
    def __init__(self, bench, spm_sizes, replay=None):
        self.bench = bench
        self.spm_sizes = list(spm_sizes)
        self.system = SystemModel(spm_sizes)
        if replay is None:
            replay = Replay(spm_sizes)
        else:
            # Continue from the state reached so far (e.g. after a concurrent run).
            self.system.engines = copy.deepcopy(replay.models)
        self.replay = replay
        self.requests = 0

    def do(self, engine, req):
        """Send ``req`` (a core request) to ``engine``; return the replies, in arrival order."""
        self.bench.inject(engine, req)
        self.replay.injected_request(engine, req)
        events, reason = self.bench.run(max_cycles=100_000, idle=4, until_reply=False)
        assert reason == "idle", f"bench not quiet after {fmt_pkt(req)}: {reason}"
        self.replay.events(events)
        self.replay.check_quiescent()
        # Replies as the engines sent them (the replay checked their delivery to the tiles).
        sent = [(ev[2], ev[3]) for ev in events if ev[0] == "O" and P.is_reply(ev[3].op)]
        self.system.submit(engine, req)
        exp = self.system.run_sources()
        if by_thread(sent) != by_thread(exp):
            raise Mismatch(
                f"request {fmt_pkt(req)} at engine {engine}:\nRTL replies:\n  "
                + "\n  ".join(f"engine {e}: {fmt_pkt(p)}" for e, p in sent)
                + "\nsystem model:\n  "
                + "\n  ".join(f"engine {e}: {fmt_pkt(p)}" for e, p in exp)
            )
        self.requests += 1
        return [ev[3] for ev in events if ev[0] == "Y"]

    def call(self, engine, req):
        """A request with exactly one reply, to the requester; returns (status, value, sync_id)."""
        reps = self.do(engine, req)
        mine = [p for p in reps if (p.core, p.thread) == (req.core, req.thread)]
        assert len(mine) == 1, f"{fmt_pkt(req)}: replies {list(map(fmt_pkt, reps))}"
        p = mine[0]
        return P.reply_status(p.op), p.value, p.sync_id

    def counters(self):
        rtl = self.bench.counters()
        self.replay.check_counters(rtl)
        return rtl


# Fuzzing -------------------------------------------------------------------------------------------

ALL_OPS = list(P.OPS.values())
ODD_OPS = [0x00, 0x12, 0x1F, 0x20, 0x25, 0x3F, 0x7F, 0x80, 0x8B, 0xFF]


class Fuzzer:
    """Random requests against engines whose state is known through ``models``."""

    def __init__(self, models, rng, cores=4, threads=3):
        self.models, self.rng = models, rng
        self.n = len(models)
        self.me = [(c, th) for c in range(min(cores, self.n)) for th in range(1, threads + 1)]
        self.freed = []

    def _live(self):
        ids = [i for m in self.models for i in m.live_ids()]
        return ids

    def _id(self, kinds=None):
        rng = self.rng
        live = [i for i in self._live() if kinds is None or P.id_kind(i) in kinds]
        x = rng.random()
        if live and x < 0.8:
            return rng.choice(live)
        if self.freed and x < 0.9:
            return rng.choice(self.freed)
        if x < 0.95:
            return rng.getrandbits(32)
        return P.make_id(rng.randrange(self.n), rng.randrange(5), rng.randrange(4), rng.randrange(70))

    def request(self):
        """Returns (engine, Request)."""
        rng = self.rng
        core, thread = rng.choice(self.me)
        x = rng.random()
        if x < 0.12:
            op = rng.choice(P.ALLOC_OPS)
            h = rng.randrange(self.n)
            value = {
                P.OP_ALLOC_MUTEX: rng.choice([0, 1, 0, 1, 2, 0xFFFFFFFF]),
                P.OP_ALLOC_BARRIER: rng.choice([1, 2, 2, 3, 4, 0, P.MAX_BARRIER + 1]),
                P.OP_ALLOC_COND: rng.getrandbits(32),
                P.OP_ALLOC_RWLOCK: rng.choice([0, 0, 0, 1, 0xFFFFFFFF]),
            }[op]
            return h, request(
                P.alloc_target(h) | rng.getrandbits(24) * (rng.random() < 0.2),
                op,
                core,
                thread,
                value,
                rng.getrandbits(1),
            )
        if x < 0.97:
            op = rng.choice(ALL_OPS)
        else:
            op = rng.choice(ODD_OPS)
        if op in P.MUTEX_OPS:
            sid = self._id((P.KIND_MUTEX, P.KIND_MUTEX_EC))
        elif op in P.COND_OPS:
            sid = self._id((P.KIND_COND,))
        elif op in P.BARRIER_OPS:
            sid = self._id((P.KIND_BARRIER,))
        elif op in P.RWLOCK_OPS:
            sid = self._id((P.KIND_RWLOCK,))
        else:
            sid = self._id()
        if op in (P.OP_COND_WAIT, P.OP_COND_ENQUEUE):
            value = self._id((P.KIND_MUTEX, P.KIND_MUTEX_EC))
        elif op in (P.OP_WAIT_CHECK, P.OP_UNLOCK_FOR, P.OP_LOCK_FOR):
            value = self._id((P.KIND_COND,))
        else:
            value = rng.getrandbits(32) if rng.random() < 0.2 else 0
        engine = P.id_ni(sid) if P.id_ni(sid) < self.n and rng.random() < 0.95 else rng.randrange(self.n)
        return engine, request(sid, op, core, thread, value, rng.getrandbits(1))

    def note_free(self, sid):
        self.freed.append(sid)
        if len(self.freed) > 64:
            self.freed.pop(0)


def cleanup_requests(models, n_helper=0x8000):
    """Next round of requests (engine, Request) that moves every primitive towards "free"."""
    reqs = []
    helper = n_helper
    for e, m in enumerate(models):
        for sid in m.live_ids():
            c = m.slot(sid)
            if P.is_mutex_kind(c.kind):
                if c.locked:
                    reqs.append((e, request(sid, P.OP_UNLOCK, c.owner[0], c.owner[1])))
                    continue
            elif c.kind == P.KIND_COND:
                if c.queue:
                    reqs.append((e, request(sid, P.OP_COND_BROADCAST, 0, 1)))
                    continue
            elif c.kind == P.KIND_RWLOCK:
                # The writer's unlock, or one reader's: the queue is granted on the way.
                if c.locked:
                    reqs.append((e, request(sid, P.OP_RWUNLOCK, c.owner[0], c.owner[1])))
                    continue
                if c.count:
                    reqs.append((e, request(sid, P.OP_RWUNLOCK, 0, 1)))
                    continue
            elif c.queue:
                # Complete the round with helper threads (each needs a queue element except the
                # last one).
                for _ in range(c.max - c.count):
                    reqs.append((e, request(sid, P.OP_BARRIER_WAIT, 0, helper)))
                    helper += 1
                continue
            reqs.append((e, request(sid, P.OP_FREE, 0, 1)))
    return reqs


def cleanup(serial, models, max_rounds=200):
    """Drive everything back to free, one request at a time (``serial``: a :class:`Serial`)."""
    for _ in range(max_rounds):
        reqs = cleanup_requests(models)
        if not reqs:
            return
        for e, req in reqs:
            serial.do(e, req)
    raise AssertionError("cleanup did not converge")
