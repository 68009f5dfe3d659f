"""Cycles of every Subutai-HW engine operation, best and worst case, measured on the RTL.

Runs the Verilator bench of gateware/subutai/tb (4 engines, ideal interconnect, no back-pressure),
builds each scenario's state with ordinary requests, then sends the measured request and records,
from the cycle the engine accepts it (``sink`` transfer, cycle 0):

- **FSM**: cycles until the FSM is back in IDLE (it accepts the next request in that cycle), i.e.
  how long the request occupies the engine;
- **1st pkt**: cycle its first packet leaves ``source`` (reply, grant or engine-to-engine
  request), "-" if it sends none; **pkts**: packets sent.

Beside each row: the paper's Table III formula (TPDS'21 §V-B) for the same state evaluated for this
SPM (read/write latency m = 1 cycle, FSM cycle c = 1; n = control structures per engine,
rho = waiters), which excludes the paper's FSM entry (4 cycles: 3 flits + decision) and exit
(1 cycle). Writes results/bench_fsm.csv and results/bench_fsm.md.

Usage: python -m scripts.experiments fsm
"""

from gateware.subutai import protocol as P
from gateware.subutai.model import request
import json

from scripts.capture import parse_lines
from scripts.experiments.framework import Experiment, Run
from scripts.results import console_table, range_text, save_table, to_int
from gateware.subutai.tb.bench import Bench, build

SPM = [2048, 2048, 2048, 256]
M, C = 1, 1  # SPM latency and FSM cycle, in cycles
_, N_CTRL, N_QUEUE = P.spm_geometry(SPM[0])
#: Table III's formulas (and their cycles here) that several cases share.
COND_WAIT = ("5m+c + unlock (best)", 5 * M + C + 2 * M)
BROADCAST = ("18m+c (worst, any rho)", 18 * M + C)


class Meter:
    def __init__(self, bench):
        self.b = bench
        self.thread = 100

    def settle(self):
        events, reason = self.b.run(max_cycles=1_000_000, idle=4, until_reply=False)
        assert reason == "idle", reason
        return events

    def do(self, engine, req):
        """Send a setup request; return its replies."""
        self.b.inject(engine, req)
        return [ev[3] for ev in self.settle() if ev[0] == "Y"]

    def alloc(self, host, op, value=0):
        r = self.do(host, request(P.alloc_target(host), op, 0, 1, value))
        assert P.reply_status(r[0].op) == 0
        return r[0].value

    def fresh(self):
        self.thread += 1
        return (self.thread % 4, self.thread)

    def measure(self, engine, req):
        """Measure ``req`` at ``engine``: (FSM cycles, first packet cycle or None, packets,
        events of the run)."""
        self.b.inject(engine, req)
        events = self.settle()
        t0 = next(ev[1] for ev in events if ev[0] == "A" and ev[2] == engine and ev[3] == req)
        done = next(ev[1] for ev in events if ev[0] == "E" and ev[2] == engine and ev[1] > t0)
        outs = [
            ev[1] for ev in events if ev[0] == "O" and ev[2] == engine and t0 < ev[1] and (ev[1] <= done + 1)
        ]
        return done - t0, (outs[0] - t0 if outs else None), len(outs), events


def scenarios(m):
    """Yield (operation, case, paper formula, paper cycles, (FSM, first packet, packets))."""
    e = 0
    me = (0, 1)

    def lock_with(mid, k):
        """Lock mid by `me` and queue k other waiters."""
        m.do(e, request(mid, P.OP_LOCK, *me))
        ws = []
        for _ in range(k):
            w = m.fresh()
            m.do(e, request(mid, P.OP_LOCK, *w))
            ws.append(w)
        return ws

    def drain(mid, owner, ws):
        for w in [owner] + ws:
            m.do(e, request(mid, P.OP_UNLOCK, *w))

    # Allocation / deallocation.
    r = m.measure(e, request(P.alloc_target(e), P.OP_ALLOC_MUTEX, *me, 0))
    yield ("Allocation", "free structure available", "4m+c (best)", 4 * M + C, r[:3])
    mid = [ev[3].value for ev in r[3] if ev[0] == "Y"][0]
    ids = [m.alloc(3, P.OP_ALLOC_COND) for _ in range(8)]
    r = m.measure(3, request(P.alloc_target(3), P.OP_ALLOC_COND, *me))
    worst = ("(n*m)+(3m+c) (worst, n=%d)" % N_CTRL, N_CTRL * M + 3 * M + C)
    yield ("Allocation", "no free structure (EAGAIN)", *worst, r[:3])
    for i in ids:
        m.do(3, request(i, P.OP_FREE, *me))
    tmp = m.alloc(e, P.OP_ALLOC_COND)
    r = m.measure(e, request(tmp, P.OP_FREE, *me))
    yield ("Deallocation", "free", "3m", 3 * M, r[:3])
    ws = lock_with(mid, 1)
    r = m.measure(e, request(mid, P.OP_FREE, *me))
    yield ("Deallocation", "in use (EBUSY)", "3m", 3 * M, r[:3])
    drain(mid, me, ws)

    # Mutex.
    r = m.measure(e, request(mid, P.OP_LOCK, *me))
    yield ("Mutex lock", "free: granted", "2m+c (best)", 2 * M + C, r[:3])
    w = m.fresh()
    r = m.measure(e, request(mid, P.OP_LOCK, *w))
    yield ("Mutex lock", "owned, empty queue: queued", "11m (worst)", 11 * M, r[:3])
    w2 = m.fresh()
    r = m.measure(e, request(mid, P.OP_LOCK, *w2))
    yield ("Mutex lock", "owned, waiters: queued at tail", "11m (worst)", 11 * M, r[:3])
    r = m.measure(e, request(mid, P.OP_TRYLOCK, *m.fresh()))
    yield ("Mutex trylock", "owned (EBUSY)", "-", "-", r[:3])
    r = m.measure(e, request(mid, P.OP_UNLOCK, *me))
    yield ("Mutex unlock", "waiters: hand-over + grant", "10m+c (worst)", 10 * M + C, r[:3])
    r = m.measure(e, request(mid, P.OP_UNLOCK, *w, 0, 1))
    yield ("Mutex unlock", "waiters, reply requested", "10m+c (worst)", 10 * M + C, r[:3])
    r = m.measure(e, request(mid, P.OP_UNLOCK, *w2))
    yield ("Mutex unlock", "no waiters (posted)", "2m (best)", 2 * M, r[:3])
    m.do(e, request(mid, P.OP_LOCK, *me))
    r = m.measure(e, request(mid, P.OP_UNLOCK, *me, 0, 1))
    yield ("Mutex unlock", "no waiters, reply requested", "2m (best)", 2 * M, r[:3])
    r = m.measure(e, request(mid, P.OP_UNLOCK, *me, 0, 1))
    yield ("Mutex unlock", "not owner (EPERM reply)", "-", "-", r[:3])
    r = m.measure(e, request(mid ^ (1 << P.ID_GEN_SHIFT), P.OP_LOCK, *me))
    yield ("Any op", "invalid id (EINVAL reply)", "-", "-", r[:3])

    # Barrier.
    for rho in (0, 1, 7, 63):
        b = m.alloc(e, P.OP_ALLOC_BARRIER, rho + 1)
        for _ in range(rho):
            m.do(e, request(b, P.OP_BARRIER_WAIT, *m.fresh()))
        r = m.measure(e, request(b, P.OP_BARRIER_WAIT, *me))
        paper = (
            ("(m+c)+rho(11m+3c) (worst)", (M + C) + rho * (11 * M + 3 * C)) if rho else ("7m (best)", 7 * M)
        )
        yield ("Barrier wait", f"last arrival, rho={rho} waiters", *paper, r[:3])
        m.do(e, request(b, P.OP_FREE, *me))
    b = m.alloc(e, P.OP_ALLOC_BARRIER, 4)
    r = m.measure(e, request(b, P.OP_BARRIER_WAIT, *m.fresh()))
    yield ("Barrier wait", "not last, empty queue", "7m (best)", 7 * M, r[:3])
    r = m.measure(e, request(b, P.OP_BARRIER_WAIT, *m.fresh()))
    yield ("Barrier wait", "not last, waiters", "7m (best)", 7 * M, r[:3])

    # Read-write locks (not in the paper: "-").
    rw = m.alloc(e, P.OP_ALLOC_RWLOCK)
    r = m.measure(e, request(rw, P.OP_RDLOCK, *me))
    yield ("Rwlock rdlock", "no writer: granted", "-", "-", r[:3])
    w = m.fresh()
    r = m.measure(e, request(rw, P.OP_WRLOCK, *w))
    yield ("Rwlock wrlock", "readers: queued", "-", "-", r[:3])
    r = m.measure(e, request(rw, P.OP_RWUNLOCK, *me))
    yield ("Rwlock unlock", "last reader: writer granted", "-", "-", r[:3])
    for n in (1, 4):
        readers = [m.fresh() for _ in range(n)]
        for rd in readers:
            m.do(e, request(rw, P.OP_RDLOCK, *rd))
        r = m.measure(e, request(rw, P.OP_RWUNLOCK, *w))
        yield ("Rwlock unlock", f"writer, {n} readers waiting: all granted", "-", "-", r[:3])
        for rd in readers:
            m.do(e, request(rw, P.OP_RWUNLOCK, *rd))
        m.do(e, request(rw, P.OP_WRLOCK, *w))
    m.do(e, request(rw, P.OP_RWUNLOCK, *w))
    m.do(e, request(rw, P.OP_FREE, *me))

    # Condition variables: the cond on engine 0, the mutex on engine 0 (local: the whole chain
    # runs through self requests) or on engine 1 (remote: four requests on two engines).
    cid = m.alloc(e, P.OP_ALLOC_COND)
    mx_remote = m.alloc(1, P.OP_ALLOC_MUTEX)
    for host, mx in ((0, mid), (1, mx_remote)):
        where = "local mutex" if host == 0 else "remote mutex"
        m.do(host, request(mx, P.OP_LOCK, *me))
        req = request(cid, P.OP_COND_WAIT, *me, mx)
        m.b.inject(e, req)
        events = m.settle()
        t0 = next(ev[1] for ev in events if ev[0] == "A" and ev[3] == req)
        if host == 0:
            done = next(ev[1] for ev in events if ev[0] == "E" and ev[2] == e and ev[1] > t0)
            yield (
                "Cond wait",
                "COND_WAIT..UNLOCK_FOR, local mutex (self requests)",
                *COND_WAIT,
                (done - t0, None, 0),
            )
        else:
            last = t0
            for op, eng in (
                (P.OP_COND_WAIT, e),
                (P.OP_WAIT_CHECK, host),
                (P.OP_COND_ENQUEUE, e),
                (P.OP_UNLOCK_FOR, host),
            ):
                a = next(ev[1] for ev in events if ev[0] == "A" and ev[2] == eng and ev[3].op == op)
                d = next(ev[1] for ev in events if ev[0] == "E" and ev[2] == eng and ev[1] > a)
                o = [ev[1] for ev in events if ev[0] == "O" and ev[2] == eng and a < ev[1] <= d]
                last = d
                yield (
                    "Cond wait step",
                    f"{P.OP_NAMES[op]} at the " + ("cond's" if eng == e else "mutex's") + " host",
                    "-",
                    "-",
                    (d - a, (o[0] - a) if o else None, len(o)),
                )
            yield (
                "Cond wait",
                "COND_WAIT..UNLOCK_FOR, remote mutex (3 hops)",
                *COND_WAIT,
                (last - t0, None, 2),
            )
        # Signal with one waiter: requeued onto the (free) mutex, granted at once.
        r = m.measure(e, request(cid, P.OP_COND_SIGNAL, *m.fresh()))
        case = "dequeue + LOCK_FOR (granted)" if host == 0 else "dequeue, LOCK_FOR sent"
        yield ("Cond signal", f"1 waiter, {where}: {case}", "29m+2c (worst)", 29 * M + 2 * C, r[:3])
        if host != 0:
            ev = r[3]
            a = next(x[1] for x in ev if x[0] == "A" and x[2] == host and x[3].op == P.OP_LOCK_FOR)
            d = next(x[1] for x in ev if x[0] == "E" and x[2] == host and x[1] > a)
            yield ("Cond signal", "LOCK_FOR at the mutex's host (granted)", "-", "-", (d - a, d - a, 1))
        m.do(host, request(mx, P.OP_UNLOCK, *me))
    r = m.measure(e, request(cid, P.OP_COND_SIGNAL, *me))
    yield ("Cond signal", "no waiters (posted)", "m (best)", M, r[:3])
    r = m.measure(e, request(cid, P.OP_COND_BROADCAST, *me))
    yield ("Cond broadcast", "no waiters (posted)", "m (best)", M, r[:3])

    def waiters(host, mx, rho):
        for _ in range(rho):
            w = m.fresh()
            m.do(host, request(mx, P.OP_LOCK, *w))
            m.do(e, request(cid, P.OP_COND_WAIT, *w, mx))

    def release(host, mx, owners):
        while owners:
            o = owners.pop(0)
            owners += [(p.core, p.thread) for p in m.do(host, request(mx, P.OP_UNLOCK, *o))]

    # Local mutex: the queue is spliced onto the mutex's queue (constant time).
    for rho in (1, 63):
        for case in ("free", "held", "held+queue"):
            waiters(0, mid, rho)
            owners = []
            if case != "free":
                m.do(e, request(mid, P.OP_LOCK, *me))
                owners = [me]
            if case == "held+queue":
                q = m.fresh()
                m.do(e, request(mid, P.OP_LOCK, *q))
            r = m.measure(e, request(cid, P.OP_COND_BROADCAST, *me))
            what = {
                "free": "free mutex: 1st waiter granted",
                "held": "held mutex, empty queue",
                "held+queue": "held mutex with waiters",
            }[case]
            yield ("Cond broadcast", f"rho={rho}, local mutex, splice: {what}", *BROADCAST, r[:3])
            owners += [(x[3].core, x[3].thread) for x in r[3] if x[0] == "Y"]
            release(0, mid, owners)
    # Remote mutex: one LOCK_FOR per waiter (per-waiter step as a self request).
    for rho in (1, 7, 63):
        waiters(1, mx_remote, rho)
        m.do(1, request(mx_remote, P.OP_LOCK, *me))
        r = m.measure(e, request(cid, P.OP_COND_BROADCAST, *me))
        yield ("Cond broadcast", f"rho={rho}, remote mutex: one LOCK_FOR per waiter", *BROADCAST, r[:3])
        release(1, mx_remote, [me])


NOTES = f"""
Measured on the RTL (Verilator, `gateware/subutai/tb`), SPM {SPM[0]} bytes: n = {N_CTRL} control
structures, {N_QUEUE} queue elements; m = {M} cycle (SPM read latency: synchronous BRAM read
port, address in cycle t, word in t+1), c = {C} cycle. Cycle 0 = the cycle the engine accepts the
request. "FSM cycles": until the FSM accepts its next request (accept + decode cycles included).
"1st pkt": cycle the first packet leaves the engine (an output register: one cycle after the FSM
state that sends it). Table III (TPDS'21 §V-B) counts neither the FSM entry (4 cycles in Table IV)
nor the exit (1 cycle); its "n" term is a linear search for a free structure, which the free list
avoids. A condition wait is a chain of requests (COND_WAIT at the cond's host, WAIT_CHECK at the
mutex's host, COND_ENQUEUE at the cond's host, UNLOCK_FOR at the mutex's host, until the mutex is
released): with both on one engine the chain runs as self requests; with a remote
mutex the total includes the bench's ideal interconnect (1 cycle FIFO per hop; a real NoC adds
its hop latency three times). A broadcast whose waiters all use one mutex hosted on the same
engine splices the cond queue onto the mutex queue (constant time); otherwise it requeues one
waiter per step (a self-queue chain of BROADCAST_NEXT requests, each one LOCK_FOR).
"""
HEADER = ["operation", "case", "FSM cycles", "1st pkt", "pkts", "Table III formula", "Table III cycles"]


class EngineFsm(Experiment):
    name = "fsm"
    title = "Subutai-HW operation latency (m = c = 1)"
    command = "make bench-fsm"
    # The engine's RTL and its testbench.
    measures = ("gateware/subutai",)
    results = ("bench_fsm",)

    def result_name(self, args):
        return "bench_fsm"

    def runs(self, args):
        # One run: the scenarios build on each other's state in one bench.
        return [Run.of("every engine operation, best and worst case", spm=tuple(SPM))]

    def execute(self, run, model, image, args):
        binary = build(SPM)
        lines = []
        with Bench(binary, len(SPM), trace_idle=True) as b:
            for op, case, formula, paper, (fsm, first, pkts) in scenarios(Meter(b)):
                row = [op, case, fsm, "-" if first is None else first, pkts, formula, paper]
                lines.append("@subutai " + json.dumps({"program": "fsm", "row": row}))
        return lines

    def report(self, lines, args, results_dir):
        rows = [r["row"] for r in parse_lines(lines) if r.get("program") == "fsm"]
        title = "Subutai-HW engine: cycles per operation (RTL)"
        save_table("bench_fsm", HEADER, rows, title, NOTES, results_dir)
        return console_table(HEADER, rows) + "\n" + NOTES, []

    def headlines(self, results):
        rows = results.rows("bench_fsm")

        def cycles(match):
            found = [to_int(r["FSM cycles"]) for r in rows if match(r["operation"], r["case"])]
            if not found:
                raise ValueError(f"results/bench_fsm.csv lacks a case of the figure: run `{self.command}`")
            return range_text(found, str)

        mutex = cycles(lambda op, case: op.startswith("Mutex"))
        barrier = cycles(lambda op, case: op == "Barrier wait" and "rho=63" in case)
        splice = cycles(lambda op, case: op == "Cond broadcast" and "rho=63" in case and "splice" in case)
        return [
            (
                "Subutai-HW operation latency (m = c = 1)",
                f"mutex lock, trylock, unlock {mutex} engine cycles; barrier release of 63 waiters {barrier}; "
                f"cond broadcast of 63 waiters onto a local mutex {splice} (one splice)",
                self.command,
            )
        ]


EXPERIMENT = EngineFsm()
