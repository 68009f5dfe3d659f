"""Subutai-HW engine: unit tests of every operation and error path, and randomized differential
tests of the RTL (Verilator, 4 engines on an ideal interconnect) against the Python model.

The bench is built once per session (cached under build/subutai_tb/). ``SUBUTAI_LONG=1`` adds
a much longer randomized run.
"""

import os
import random
import subprocess
import sys
import time

import pytest

from gateware.subutai import protocol as P
from gateware.subutai.model import EngineModel, request
from gateware.subutai.tb.bench import Bench, build
from gateware.subutai.tb.checker import Replay
from gateware.subutai.tb.serial import Serial, Fuzzer, cleanup
from gateware.subutai.tb.workload import run_program

# Engines 0-2: the default 2 KiB SPM (64 control structures, 192 queue elements); engine 3:
# 256 bytes (8 control structures, 24 queue elements) so that exhaustion is easy to reach.
SPM = [2048, 2048, 2048, 256]
N = len(SPM)
TINY = 3
LONG = os.environ.get("SUBUTAI_LONG", "") not in ("", "0")


# Requests checked against the model in this run (core requests accepted by the RTL engines).
CHECKED = {"requests": 0}


@pytest.fixture(scope="module", autouse=True)
def report(request):
    t0 = time.time()
    yield
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    capman = request.config.pluginmanager.get_plugin("capturemanager")
    if tr is not None and capman is not None:
        with capman.global_and_fixture_disabled():
            tr.write_line(
                f"\nsubutai engine: {CHECKED['requests']} core requests checked "
                f"against the model in {time.time() - t0:.1f} s"
            )


@pytest.fixture(scope="session")
def tb_binary():
    return build(SPM, log=lambda m: print(m, file=sys.stderr))


@pytest.fixture
def bench(tb_binary):
    with Bench(tb_binary, N) as b:
        yield b


@pytest.fixture
def s(bench):
    s = Serial(bench, SPM)
    yield s
    CHECKED["requests"] += s.replay.core_requests


# Helpers ------------------------------------------------------------------------------------------


def alloc(s, host, op, value=0, core=0, thread=1):
    st, v, sid = s.call(host, request(P.alloc_target(host), op, core, thread, value))
    assert st == 0, P.STATUS_NAMES.get(st, st)
    assert v == sid
    return v


def call(s, sid, op, core=0, thread=1, value=0, reply=0, engine=None):
    """A request with exactly one reply to the requester: returns its status."""
    e = P.id_ni(sid) if engine is None else engine
    st, v, rsid = s.call(e, request(sid, op, core, thread, value, reply))
    return st


def post(s, sid, op, core=0, thread=1, value=0, reply=0, engine=None):
    """Returns all replies (Packet) caused by the request."""
    e = P.id_ni(sid) if engine is None else engine
    return s.do(e, request(sid, op, core, thread, value, reply))


def replies(pkts):
    """[(core, thread, status, value, sync_id)] of reply packets."""
    return [(p.core, p.thread, P.reply_status(p.op), p.value, p.sync_id) for p in pkts]


# Protocol -----------------------------------------------------------------------------------------


def test_id_layout():
    i = P.make_id(5, P.KIND_COND, 0x123, 77)
    assert (P.id_f(i), P.id_ni(i), P.id_kind(i), P.id_gen(i), P.id_index(i)) == (1, 5, P.KIND_COND, 0x123, 77)
    assert P.make_id(0, 0, 0, 0) == 0x80000000  # never 0
    assert P.host_of(P.alloc_target(9)) == 9
    assert P.spm_geometry(2048) == (256, 64, 192)
    assert P.spm_geometry(256) == (32, 8, 24)
    assert P.spm_geometry(4096) == (512, 257, 255)
    # All op codes distinct, below the reply bit and the wire reply flag.
    assert len(set(P.OPS.values())) == len(P.OPS)
    assert all(op < P.OP_FLAG_REPLY for op in P.OPS.values())


def test_c_header_compiles(tmp_path):
    h = tmp_path / "subutai_protocol.h"
    h.write_text(P.c_header())
    c = tmp_path / "t.c"
    c.write_text(
        '#include "subutai_protocol.h"\n'
        '_Static_assert(SUBUTAI_OP_LOCK == %d, "op");\n'
        % P.OP_LOCK
        + '_Static_assert(SUBUTAI_ID_NI(0x85000000u) == 5, "ni");\n'
        "int main(void) { return 0; }\n"
    )
    gcc = "gcc"
    p = subprocess.run(
        [gcc, "-fsyntax-only", "-Wall", "-Werror", "-I", str(tmp_path), str(c)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr


# Migen simulation (one engine, back-pressured source) ---------------------------------------------


def test_migen_sim_single_engine():
    """The module in Migen's own simulator: a short sequence against the model, with a source
    that is not ready 50% of the time."""
    from migen import run_simulation
    from gateware.subutai.engine import SubutaiEngine

    dut = SubutaiEngine(ni_id=1, n_tiles=2, spm_bytes=128)
    model = EngineModel(1, 2, 128)
    rng = random.Random(7)
    m0 = P.make_id(1, 1, 0, 0)
    reqs = [
        request(P.alloc_target(1), P.OP_ALLOC_MUTEX, 0, 1, 1),
        request(m0, P.OP_LOCK, 0, 1),
        request(m0, P.OP_LOCK, 1, 2),
        request(m0, P.OP_LOCK, 1, 3),
        request(m0, P.OP_LOCK, 0, 1),  # EDEADLK
        request(m0, P.OP_UNLOCK, 1, 2, reply=1),  # EPERM
        request(m0, P.OP_UNLOCK, 0, 1, reply=1),  # hand-over to (1, 2)
        request(P.alloc_target(1), P.OP_ALLOC_BARRIER, 0, 1, 2),
        request(P.make_id(1, 2, 0, 1), P.OP_BARRIER_WAIT, 0, 1),
        request(P.make_id(1, 2, 0, 1), P.OP_BARRIER_WAIT, 0, 4),
        request(m0, P.OP_FREE, 0, 1),  # EBUSY
        request(m0 ^ (1 << P.ID_GEN_SHIFT), P.OP_TRYLOCK, 0, 1),  # EINVAL
    ]
    expected = [p for r in reqs for p in model.process(r)]
    got = []

    def driver():
        for r in reqs:
            yield dut.sink.valid.eq(1)
            for f in r._fields:
                yield getattr(dut.sink, f).eq(getattr(r, f))
            yield
            while not (yield dut.sink.ready):
                yield
        yield dut.sink.valid.eq(0)

    def receiver():
        for _ in range(600):
            ready = rng.random() < 0.5
            yield dut.source.ready.eq(ready)
            yield

    def monitor():
        for _ in range(600):
            if (yield dut.source.valid) and (yield dut.source.ready):
                pkt = []
                for f in ("dest", "sync_id", "op", "core", "thread", "value"):
                    pkt.append((yield getattr(dut.source, f)))
                got.append(tuple(pkt))
            yield

    run_simulation(dut, [driver(), receiver(), monitor()])
    assert got == [tuple(p) for p in expected]
    # Free counts after: 1 waiter left on the mutex.
    assert model.counters["free_queue"] == model.n_queue - 1


# Allocation ---------------------------------------------------------------------------------------


def test_alloc_exhaustion_generations_and_stale_ids(s):
    ids = [alloc(s, TINY, P.OP_ALLOC_MUTEX) for _ in range(8)]
    assert [P.id_index(i) for i in ids] == list(range(8))
    assert all(P.id_ni(i) == TINY and P.id_f(i) and P.id_gen(i) == 0 for i in ids)
    assert s.call(TINY, request(P.alloc_target(TINY), P.OP_ALLOC_COND, 0, 1))[0] == P.EAGAIN
    assert call(s, ids[5], P.OP_FREE) == 0
    assert call(s, ids[5], P.OP_FREE) == P.EINVAL  # double free
    c = alloc(s, TINY, P.OP_ALLOC_COND)  # LIFO: same slot, gen + 1
    assert (P.id_index(c), P.id_gen(c), P.id_kind(c)) == (5, 1, P.KIND_COND)
    assert call(s, ids[5], P.OP_LOCK) == P.EINVAL  # stale id
    assert (
        call(s, ids[5] ^ (P.KIND_COND << P.ID_KIND_SHIFT) ^ (1 << P.ID_GEN_SHIFT), P.OP_COND_SIGNAL, reply=1)
        == 0
    )  # = c, valid
    for i in ids[:5] + ids[6:] + [c]:
        assert call(s, i, P.OP_FREE) == 0
    cnt = s.counters()[TINY]
    assert (cnt["free_ctrl"], cnt["free_queue"]) == (8, 24)


def test_alloc_arguments(s):
    h = 1
    for op, v in (
        (P.OP_ALLOC_MUTEX, 2),
        (P.OP_ALLOC_MUTEX, 0xFFFFFFFF),
        (P.OP_ALLOC_BARRIER, 0),
        (P.OP_ALLOC_BARRIER, P.MAX_BARRIER + 1),
    ):
        assert s.call(h, request(P.alloc_target(h), op, 0, 1, v))[0] == P.EINVAL
    b = alloc(s, h, P.OP_ALLOC_BARRIER, P.MAX_BARRIER)
    assert P.id_kind(b) == P.KIND_BARRIER
    m = alloc(s, h, P.OP_ALLOC_MUTEX, 0)
    e = alloc(s, h, P.OP_ALLOC_MUTEX, 1)
    assert (P.id_kind(m), P.id_kind(e)) == (P.KIND_MUTEX, P.KIND_MUTEX_EC)
    # The other bits of an alloc request's sync id are ignored.
    st, v, _ = s.call(h, request(P.alloc_target(h) | 0x80123456 & 0x80FFFFFF, P.OP_ALLOC_COND, 0, 1))
    assert st == 0 and P.id_kind(v) == P.KIND_COND
    for i in (b, m, e, v):
        assert call(s, i, P.OP_FREE) == 0


# Invalid ids and ops ------------------------------------------------------------------------------


def test_invalid_ids(s):
    m = alloc(s, 0, P.OP_ALLOC_MUTEX)
    b = alloc(s, 0, P.OP_ALLOC_BARRIER, 2)
    c = alloc(s, 0, P.OP_ALLOC_COND)
    bad = [
        (m & 0x7FFFFFFF, P.OP_LOCK, 0),  # F bit clear
        (0, P.OP_LOCK, 0),  # static initializer
        (m, P.OP_LOCK, 1),  # NI id of another tile
        (P.make_id(0, 0, 0, 64), P.OP_TRYLOCK, 0),  # index >= n_ctrl
        (P.make_id(0, 0, 0, 1023), P.OP_FREE, 0),
        (P.make_id(0, 0, 0, 10), P.OP_LOCK, 0),  # never allocated
        (m ^ (1 << P.ID_GEN_SHIFT), P.OP_LOCK, 0),  # wrong generation
        (m | (1 << P.ID_KIND_SHIFT), P.OP_LOCK, 0),  # kind bits differ from slot
        (b, P.OP_LOCK, 0),
        (b, P.OP_UNLOCK, 0),
        (b, P.OP_COND_SIGNAL, 0),  # wrong kind for op
        (m, P.OP_BARRIER_WAIT, 0),
        (c, P.OP_TRYLOCK, 0),
        (m, P.OP_COND_BROADCAST, 0),
        (m, P.OP_RDLOCK, 0),
        (c, P.OP_WRLOCK, 0),
        (m, P.OP_RWUNLOCK, 0),
        (m, 0x12, 0),
        (m, 0x80, 0),
        (m, 0xFF, 0),
        (0, 0, 0),  # unknown ops
    ]
    for sid, op, e in bad:
        assert call(s, sid, op, reply=1, engine=e) == P.EINVAL, (hex(sid), hex(op), e)
    cnt = s.counters()[0]
    assert cnt["errors"] == len(bad) - 1 and cnt["silent_errors"] == 0
    # Without reply: nothing comes back; counted and latched.
    assert post(s, m ^ (1 << P.ID_GEN_SHIFT), P.OP_UNLOCK) == []
    assert post(s, c, 0x33, value=5) == []
    cnt = s.counters()[0]
    assert cnt["silent_errors"] == 2
    assert (cnt["last_err_sync"], cnt["last_err_op"], cnt["last_err_status"]) == (c, 0x33, P.EINVAL)
    for i in (m, b, c):
        assert call(s, i, P.OP_FREE) == 0


# Mutexes ------------------------------------------------------------------------------------------


def test_mutex_fifo_handover(s):
    m = alloc(s, 2, P.OP_ALLOC_MUTEX)
    A, B, C, D = (0, 1), (1, 1), (2, 7), (3, 9)
    assert call(s, m, P.OP_LOCK, *A) == 0
    for w in (B, C, D):
        assert post(s, m, P.OP_LOCK, *w) == []  # queued, no reply yet
    assert call(s, m, P.OP_TRYLOCK, 1, 5) == P.EBUSY
    assert call(s, m, P.OP_UNLOCK, *B, reply=1) == P.EPERM  # waiter is not the owner
    r = post(s, m, P.OP_UNLOCK, *A, reply=1)  # grant to B, then A's reply
    assert sorted(replies(r)) == sorted([(*B, 0, 0, m), (*A, 0, 0, m)])
    assert replies(post(s, m, P.OP_UNLOCK, *B)) == [(*C, 0, 0, m)]
    assert replies(post(s, m, P.OP_UNLOCK, *C)) == [(*D, 0, 0, m)]
    assert post(s, m, P.OP_UNLOCK, *D) == []
    assert call(s, m, P.OP_UNLOCK, *D, reply=1) == P.EPERM  # not locked
    assert call(s, m, P.OP_TRYLOCK, *C) == 0
    assert call(s, m, P.OP_FREE) == P.EBUSY
    assert post(s, m, P.OP_UNLOCK, *C) == []
    assert call(s, m, P.OP_FREE) == 0
    cnt = s.counters()[2]
    assert cnt["grants"] == 5 and cnt["queue_hwm"] == 3 and cnt["free_queue"] == 192


def test_grant_says_whether_this_core_released_last(s):
    """GRANT_LOCAL (skip the invalidation) only for a LOCK/TRYLOCK of a free mutex whose last
    unlock came from the same core, whatever its thread; never for a new mutex or a hand-over."""
    m = alloc(s, 1, P.OP_ALLOC_MUTEX)
    grant = lambda core, thread, op=P.OP_LOCK: replies(post(s, m, op, core, thread))
    assert grant(0, 1) == [(0, 1, 0, 0, m)]  # never released
    assert post(s, m, P.OP_UNLOCK, 0, 1) == []
    assert grant(0, 2) == [(0, 2, 0, P.GRANT_LOCAL, m)]  # same core, other thread
    assert post(s, m, P.OP_LOCK, 3, 1) == []  # queued
    assert replies(post(s, m, P.OP_UNLOCK, 0, 2)) == [(3, 1, 0, 0, m)]  # hand-over: invalidate
    assert post(s, m, P.OP_UNLOCK, 3, 1) == []
    assert grant(0, 1, P.OP_TRYLOCK) == [(0, 1, 0, 0, m)]  # core 3 released it last
    assert post(s, m, P.OP_UNLOCK, 0, 1) == []
    assert grant(0, 1, P.OP_TRYLOCK) == [(0, 1, 0, P.GRANT_LOCAL, m)]
    assert post(s, m, P.OP_UNLOCK, 0, 1) == []
    assert call(s, m, P.OP_FREE) == 0


def test_error_checking_and_normal_mutex_misuse(s):
    e = alloc(s, 1, P.OP_ALLOC_MUTEX, 1)
    n = alloc(s, 1, P.OP_ALLOC_MUTEX, 0)
    A, B = (0, 1), (2, 2)
    assert call(s, e, P.OP_LOCK, *A) == 0
    assert call(s, e, P.OP_LOCK, *A) == P.EDEADLK  # relock, error-checking
    assert call(s, e, P.OP_TRYLOCK, *A) == P.EBUSY
    assert call(s, e, P.OP_UNLOCK, *B, reply=1) == P.EPERM
    assert post(s, e, P.OP_UNLOCK, *B) == []  # silent EPERM
    cnt = s.counters()[1]
    assert cnt["silent_errors"] == 1
    assert (cnt["last_err_sync"], cnt["last_err_op"], cnt["last_err_status"]) == (e, P.OP_UNLOCK, P.EPERM)
    assert call(s, e, P.OP_UNLOCK, *A, reply=1) == 0
    # Normal mutex: unlock by a non-owner is refused too (EPERM); relock by the owner
    # self-deadlocks (queued behind itself) until it unlocks: then it is granted to itself.
    assert call(s, n, P.OP_LOCK, *A) == 0
    assert call(s, n, P.OP_UNLOCK, *B, reply=1) == P.EPERM
    assert post(s, n, P.OP_LOCK, *A) == []
    assert replies(post(s, n, P.OP_UNLOCK, *A)) == [(*A, 0, 0, n)]
    assert post(s, n, P.OP_UNLOCK, *A) == []
    for i in (e, n):
        assert call(s, i, P.OP_FREE) == 0


def test_queue_exhaustion_eagain(s):
    """Engine 3 has 24 queue elements: the 25th waiter gets EAGAIN, nothing hangs."""
    m = alloc(s, TINY, P.OP_ALLOC_MUTEX)
    b = alloc(s, TINY, P.OP_ALLOC_BARRIER, 3)
    c = alloc(s, TINY, P.OP_ALLOC_COND)
    assert call(s, m, P.OP_LOCK, 0, 1) == 0
    waiters = [(1 + k % 3, 100 + k) for k in range(24)]
    for w in waiters:
        assert post(s, m, P.OP_LOCK, *w) == []
    assert call(s, m, P.OP_LOCK, 2, 999) == P.EAGAIN
    assert call(s, m, P.OP_TRYLOCK, 2, 999) == P.EBUSY
    assert call(s, b, P.OP_BARRIER_WAIT, 2, 999) == P.EAGAIN  # not counted as an arrival
    # A cond wait that cannot be enqueued: EAGAIN from the cond's host, mutex still held.
    r = post(s, c, P.OP_COND_WAIT, 0, 1, value=m)
    assert replies(r) == [(0, 1, P.EAGAIN, 0, c)]
    assert s.counters()[TINY]["free_queue"] == 0
    # Hand the mutex down the queue: FIFO order.
    owner = (0, 1)
    for w in waiters:
        assert replies(post(s, m, P.OP_UNLOCK, *owner)) == [(*w, 0, 0, m)]
        owner = w
    assert post(s, m, P.OP_UNLOCK, *owner) == []
    for i in (m, b, c):
        assert call(s, i, P.OP_FREE) == 0
    cnt = s.counters()[TINY]
    assert (cnt["free_queue"], cnt["free_ctrl"], cnt["queue_hwm"]) == (24, 8, 24)


# Read-write locks ---------------------------------------------------------------------------------


def test_rwlock_readers_together_writers_alone(s):
    rw = alloc(s, 2, P.OP_ALLOC_RWLOCK)
    assert P.id_kind(rw) == P.KIND_RWLOCK
    R1, R2, R3, W1, W2 = (0, 1), (1, 1), (2, 7), (3, 9), (1, 4)
    assert call(s, rw, P.OP_RDLOCK, *R1) == 0
    assert call(s, rw, P.OP_RDLOCK, *R2) == 0  # readers together
    assert call(s, rw, P.OP_TRYWRLOCK, *W1) == P.EBUSY
    assert post(s, rw, P.OP_WRLOCK, *W1) == []  # waits for the readers
    # Writers preferred: a reader arriving behind a waiting writer waits too, a try fails.
    assert call(s, rw, P.OP_TRYRDLOCK, *R3) == P.EBUSY
    assert post(s, rw, P.OP_RDLOCK, *R3) == []
    assert post(s, rw, P.OP_WRLOCK, *W2) == []
    assert post(s, rw, P.OP_RDLOCK, 0, 2) == []
    assert call(s, rw, P.OP_FREE) == P.EBUSY
    assert post(s, rw, P.OP_RWUNLOCK, *R1) == []  # one reader left
    assert replies(post(s, rw, P.OP_RWUNLOCK, *R2, reply=1)) == [(*W1, 0, 0, rw), (*R2, 0, 0, rw)]
    assert call(s, rw, P.OP_RDLOCK, *W1) == P.EDEADLK
    assert call(s, rw, P.OP_WRLOCK, *W1) == P.EDEADLK
    assert call(s, rw, P.OP_RWUNLOCK, *R1, reply=1) == P.EPERM  # not the writer
    # The writer leaves: the reader behind it is granted, up to the next writer.
    assert replies(post(s, rw, P.OP_RWUNLOCK, *W1)) == [(*R3, 0, 0, rw)]
    assert replies(post(s, rw, P.OP_RWUNLOCK, *R3)) == [(*W2, 0, 0, rw)]
    assert replies(post(s, rw, P.OP_RWUNLOCK, *W2)) == [(0, 2, 0, 0, rw)]
    assert post(s, rw, P.OP_RWUNLOCK, 0, 2) == []
    assert call(s, rw, P.OP_RWUNLOCK, 0, 2, reply=1) == P.EPERM  # free
    assert call(s, rw, P.OP_TRYWRLOCK, *R3) == 0
    assert call(s, rw, P.OP_FREE) == P.EBUSY
    assert call(s, rw, P.OP_RWUNLOCK, *R3, reply=1) == 0
    assert call(s, rw, P.OP_FREE) == 0
    assert call(s, rw, P.OP_RDLOCK, *R1) == P.EINVAL  # freed
    cnt = s.counters()[2]
    assert cnt["grants"] == 7 and cnt["queue_hwm"] == 4 and cnt["free_queue"] == 192


def test_rwlock_writer_releases_every_reader_in_order(s):
    """A leaving writer grants the readers at the head of its queue in one request, in order,
    and stops at the next writer; the readers count (the next writer waits for all of them)."""
    rw = alloc(s, 0, P.OP_ALLOC_RWLOCK)
    W, W2 = (3, 1), (2, 2)
    readers = [(k % 4, 10 + k) for k in range(6)]
    assert call(s, rw, P.OP_WRLOCK, *W) == 0
    for r in readers:
        assert post(s, rw, P.OP_RDLOCK, *r) == []
    assert post(s, rw, P.OP_WRLOCK, *W2) == []
    assert post(s, rw, P.OP_RDLOCK, 0, 99) == []
    got = replies(post(s, rw, P.OP_RWUNLOCK, *W, reply=1))
    assert got == [(*r, 0, 0, rw) for r in readers] + [(*W, 0, 0, rw)]
    for r in readers[:-1]:
        assert post(s, rw, P.OP_RWUNLOCK, *r) == []
    assert replies(post(s, rw, P.OP_RWUNLOCK, *readers[-1])) == [(*W2, 0, 0, rw)]
    assert replies(post(s, rw, P.OP_RWUNLOCK, *W2)) == [(0, 99, 0, 0, rw)]
    assert post(s, rw, P.OP_RWUNLOCK, 0, 99) == []
    assert call(s, rw, P.OP_FREE) == 0


def test_rwlock_errors_and_exhaustion(s):
    rw = alloc(s, TINY, P.OP_ALLOC_RWLOCK)
    m = alloc(s, TINY, P.OP_ALLOC_MUTEX)
    c = alloc(s, TINY, P.OP_ALLOC_COND)
    st, _, _ = s.call(TINY, request(P.alloc_target(TINY), P.OP_ALLOC_RWLOCK, 0, 1, 1))
    assert st == P.EINVAL  # value must be 0
    assert call(s, rw, P.OP_LOCK) == P.EINVAL and call(s, m, P.OP_RDLOCK) == P.EINVAL
    # A condition wait with a read-write lock for its mutex is refused at the cond's host.
    assert replies(post(s, c, P.OP_COND_WAIT, 0, 1, value=rw)) == [(0, 1, P.EINVAL, 0, c)]
    assert call(s, rw, P.OP_WRLOCK, 0, 1) == 0
    waiters = [(1 + k % 3, 100 + k) for k in range(24)]
    for k, w in enumerate(waiters):
        assert post(s, rw, P.OP_RDLOCK if k % 2 else P.OP_WRLOCK, *w) == []
    assert call(s, rw, P.OP_RDLOCK, 2, 999) == P.EAGAIN
    assert call(s, rw, P.OP_WRLOCK, 2, 999) == P.EAGAIN
    # Turns alternate: each leaving writer grants the reader behind it, each leaving (last)
    # reader the writer behind it.
    owner = (0, 1)
    for w in waiters:
        assert replies(post(s, rw, P.OP_RWUNLOCK, *owner)) == [(*w, 0, 0, rw)]
        owner = w
    assert post(s, rw, P.OP_RWUNLOCK, *owner) == []
    for i in (rw, m, c):
        assert call(s, i, P.OP_FREE) == 0
    cnt = s.counters()[TINY]
    assert (cnt["free_queue"], cnt["free_ctrl"], cnt["queue_hwm"]) == (24, 8, 24)


# Barriers -----------------------------------------------------------------------------------------


def test_barrier_rounds(s):
    b = alloc(s, 1, P.OP_ALLOC_BARRIER, 3)
    for rnd in range(3):
        assert post(s, b, P.OP_BARRIER_WAIT, 0, 1) == []
        assert post(s, b, P.OP_BARRIER_WAIT, 2, 4) == []
        assert call(s, b, P.OP_FREE) == P.EBUSY
        r = post(s, b, P.OP_BARRIER_WAIT, 3, 3)
        # The last arrival gets SERIAL_THREAD (first), then the waiters in arrival order.
        assert replies(r) == [(3, 3, 0, P.SERIAL_VALUE, b), (0, 1, 0, 0, b), (2, 4, 0, 0, b)]
    one = alloc(s, 1, P.OP_ALLOC_BARRIER, 1)
    for _ in range(3):
        assert replies(post(s, one, P.OP_BARRIER_WAIT, 1, 1)) == [(1, 1, 0, P.SERIAL_VALUE, one)]
    for i in (b, one):
        assert call(s, i, P.OP_FREE) == 0
    assert s.counters()[1]["free_queue"] == 192


def test_barrier_release_of_a_full_queue(s):
    """24 waiters (all of engine 3's queue elements) and the 25th arrival releases them all."""
    b = alloc(s, TINY, P.OP_ALLOC_BARRIER, 25)
    for k in range(24):
        assert post(s, b, P.OP_BARRIER_WAIT, k % 4, k) == []
    r = replies(post(s, b, P.OP_BARRIER_WAIT, 0, 999))
    assert r[0] == (0, 999, 0, P.SERIAL_VALUE, b)
    assert r[1:] == [(k % 4, k, 0, 0, b) for k in range(24)]
    # The spliced queue is a usable free list again: fill it once more.
    for k in range(24):
        assert post(s, b, P.OP_BARRIER_WAIT, k % 4, k) == []
    assert len(post(s, b, P.OP_BARRIER_WAIT, 0, 999)) == 25
    assert call(s, b, P.OP_FREE) == 0
    assert s.counters()[TINY]["free_queue"] == 24


# Condition variables ------------------------------------------------------------------------------


@pytest.mark.parametrize("cond_host,mutex_host", [(0, 1), (2, 2)])
def test_cond_wait_signal_requeue(s, cond_host, mutex_host):
    """Wait releases the mutex; a signal requeues the waiter onto the mutex: it is granted the
    mutex (its wait returns) only when the signaller unlocks."""
    c = alloc(s, cond_host, P.OP_ALLOC_COND)
    m = alloc(s, mutex_host, P.OP_ALLOC_MUTEX, 1)
    W, S = (1, 1), (3, 2)
    assert call(s, m, P.OP_LOCK, *W) == 0
    assert post(s, c, P.OP_COND_WAIT, *W, value=m) == []  # blocked
    assert call(s, m, P.OP_LOCK, *S) == 0  # mutex released by the wait
    assert call(s, c, P.OP_FREE) == P.EBUSY  # has a waiter
    assert call(s, c, P.OP_COND_SIGNAL, *S, reply=1) == 0  # W requeued, no grant yet
    assert call(s, c, P.OP_COND_SIGNAL, *S, reply=1) == 0  # no waiter: nothing
    assert post(s, c, P.OP_COND_SIGNAL, *S) == []
    r = post(s, m, P.OP_UNLOCK, *S, reply=1)
    assert sorted(replies(r)) == sorted([(*W, 0, 0, m), (*S, 0, 0, m)])  # W's wait returns
    assert call(s, m, P.OP_UNLOCK, *W, reply=1) == 0
    for i in (c, m):
        assert call(s, i, P.OP_FREE) == 0
    cnt = s.counters()
    assert cnt[cond_host]["req_cond_enqueue"] == 1 and cnt[mutex_host]["req_wait_check"] == 1
    assert cnt[mutex_host]["req_unlock_for"] == 1 and cnt[mutex_host]["req_lock_for"] == 1


def test_cond_broadcast_no_thundering_herd(s):
    c = alloc(s, 0, P.OP_ALLOC_COND)
    m = alloc(s, 3, P.OP_ALLOC_MUTEX)
    ws = [(1, 1), (2, 1), (0, 2), (3, 5)]
    for w in ws:
        assert call(s, m, P.OP_LOCK, *w) == 0
        assert post(s, c, P.OP_COND_WAIT, *w, value=m) == []
    B = (2, 9)
    assert call(s, m, P.OP_LOCK, *B) == 0
    assert call(s, c, P.OP_COND_BROADCAST, *B, reply=1) == 0  # all requeued, none runs
    owner = B
    for w in ws:  # one at a time, FIFO
        assert replies(post(s, m, P.OP_UNLOCK, *owner)) == [(*w, 0, 0, m)]
        owner = w
    assert post(s, m, P.OP_UNLOCK, *owner) == []
    assert post(s, c, P.OP_COND_BROADCAST, *B) == []  # no waiters: nothing
    for i in (c, m):
        assert call(s, i, P.OP_FREE) == 0
    assert s.counters()[0]["free_queue"] == 192 and s.counters()[3]["free_queue"] == 24


@pytest.mark.parametrize("mode", ["splice-free", "splice-held", "splice-queued", "mixed", "stale-mutex"])
def test_local_broadcast_of_many_waiters(s, mode):
    """63 waiters on a cond whose mutex is on the same engine. The waits run through the
    engine's 2-entry self queue, never through its source (no deadlock on the NI's loop-back).
    One mutex for all waiters: the broadcast splices the cond queue onto the mutex queue in
    constant time (mutex free: the first waiter is granted it; held: all queue behind the
    owner and its waiters). Waiters with different mutexes ("mixed") or a mutex freed meanwhile:
    one requeue (LOCK_FOR) per waiter, through the self queue."""
    c = alloc(s, 1, P.OP_ALLOC_COND)
    m = alloc(s, 1, P.OP_ALLOC_MUTEX)
    m2 = alloc(s, 1, P.OP_ALLOC_MUTEX, 1)
    ws = [(k % N, 10 + k) for k in range(63)]
    for k, w in enumerate(ws):
        mx = m2 if mode == "mixed" and k == 5 else m
        assert call(s, mx, P.OP_LOCK, *w) == 0
        assert post(s, c, P.OP_COND_WAIT, *w, value=mx) == []
    B, Q = (0, 1), (2, 999)
    if mode == "stale-mutex":
        assert call(s, m, P.OP_FREE) == 0
        r = post(s, c, P.OP_COND_BROADCAST, *B, reply=1)
        assert sorted(replies(r)) == sorted([(*w, P.EINVAL, 0, m) for w in ws] + [(*B, 0, 0, c)])
        assert s.counters()[1]["req_lock_for"] == 63
        for i in (c, m2):
            assert call(s, i, P.OP_FREE) == 0
        return
    if mode in ("splice-held", "splice-queued"):
        assert call(s, m, P.OP_LOCK, *B) == 0
    if mode == "splice-queued":
        assert post(s, m, P.OP_LOCK, *Q) == []
    r = post(s, c, P.OP_COND_BROADCAST, *B, reply=1)
    order = ws[:]
    if mode == "mixed":
        # ws[5] waits with m2 (free): granted at once; the rest requeue on m one by one.
        order.remove(ws[5])
        assert sorted(replies(r)) == sorted([(*ws[0], 0, 0, m), (*ws[5], 0, 0, m2), (*B, 0, 0, c)])
        assert post(s, m2, P.OP_UNLOCK, *ws[5], reply=1) != []
    elif mode == "splice-free":
        assert sorted(replies(r)) == sorted([(*ws[0], 0, 0, m), (*B, 0, 0, c)])
    else:
        assert replies(r) == [(*B, 0, 0, c)]
        order = ([Q] if mode == "splice-queued" else []) + ws
        assert replies(post(s, m, P.OP_UNLOCK, *B)) == [(*order[0], 0, 0, m)]
    owner = order[0]
    for w in order[1:]:
        assert replies(post(s, m, P.OP_UNLOCK, *owner)) == [(*w, 0, 0, m)]
        owner = w
    assert post(s, m, P.OP_UNLOCK, *owner) == []
    cnt = s.counters()[1]
    assert cnt["e2e"] == 0 and cnt["free_queue"] == 192
    if mode == "mixed":
        assert cnt["req_broadcast_next"] == 62 and cnt["req_lock_for"] == 63
    else:
        assert cnt["req_broadcast_next"] == 0 and cnt["req_lock_for"] == 0
    for i in (c, m, m2):
        assert call(s, i, P.OP_FREE) == 0


def test_cond_wait_errors(s):
    c = alloc(s, 1, P.OP_ALLOC_COND)
    m = alloc(s, 2, P.OP_ALLOC_MUTEX, 1)
    b = alloc(s, 2, P.OP_ALLOC_BARRIER, 2)
    W = (1, 4)
    assert call(s, m, P.OP_LOCK, *W) == 0
    # Refused by the cond's host (sync id of the reply: the cond); the mutex stays held.
    for cid, mid in (
        (c ^ (1 << P.ID_GEN_SHIFT), m),
        (c, b),
        (c, c),
        (c, m & 0x7FFFFFFF),
        (c, P.make_id(N, 0, 0, 0)),
        (m, m),
    ):
        st, _, rsid = s.call(P.id_ni(cid), request(cid, P.OP_COND_WAIT, *W, mid))
        assert (st, rsid) == (P.EINVAL, cid), (hex(cid), hex(mid))
    # Refused by the mutex's host (reply sync id: the mutex): stale mutex, not the owner.
    st, _, rsid = s.call(1, request(c, P.OP_COND_WAIT, *W, m ^ (1 << P.ID_GEN_SHIFT)))
    assert (st, rsid) == (P.EINVAL, m ^ (1 << P.ID_GEN_SHIFT))
    st, _, rsid = s.call(1, request(c, P.OP_COND_WAIT, 0, 9, m))
    assert (st, rsid) == (P.EPERM, m)
    assert call(s, m, P.OP_UNLOCK, *W, reply=1) == 0  # W still held it
    # The mutex is freed while W waits on the cond: the requeue fails with EINVAL.
    assert call(s, m, P.OP_LOCK, *W) == 0
    assert post(s, c, P.OP_COND_WAIT, *W, value=m) == []
    assert call(s, m, P.OP_FREE) == 0
    r = post(s, c, P.OP_COND_SIGNAL, 0, 1)
    assert replies(r) == [(*W, P.EINVAL, 0, m)]
    for i in (c, b):
        assert call(s, i, P.OP_FREE) == 0


def test_cond_requeue_eagain(s):
    """Woken waiter whose mutex's host has no queue element: EAGAIN with the mutex's id (the
    library then locks the mutex itself)."""
    c = alloc(s, 0, P.OP_ALLOC_COND)
    m = alloc(s, TINY, P.OP_ALLOC_MUTEX)
    W = (2, 3)
    assert call(s, m, P.OP_LOCK, *W) == 0
    assert post(s, c, P.OP_COND_WAIT, *W, value=m) == []
    assert call(s, m, P.OP_LOCK, 0, 1) == 0
    for k in range(24):
        assert post(s, m, P.OP_LOCK, 1, 200 + k) == []
    assert replies(post(s, c, P.OP_COND_BROADCAST, 0, 1)) == [(*W, P.EAGAIN, 0, m)]
    owner = (0, 1)
    for k in range(24):
        assert replies(post(s, m, P.OP_UNLOCK, *owner)) == [(1, 200 + k, 0, 0, m)]
        owner = (1, 200 + k)
    assert post(s, m, P.OP_UNLOCK, *owner) == []
    for i in (c, m):
        assert call(s, i, P.OP_FREE) == 0


def test_engine_ops_sent_by_a_core(s):
    """Engine-to-engine ops are checked like any request (a core may send them)."""
    c = alloc(s, 0, P.OP_ALLOC_COND)
    m = alloc(s, 1, P.OP_ALLOC_MUTEX)
    assert call(s, m, P.OP_WAIT_CHECK, 0, 1, value=m) == P.EINVAL  # value is not a cond
    assert call(s, m, P.OP_WAIT_CHECK, 0, 1, value=c) == P.EPERM  # not the owner
    assert call(s, c, P.OP_COND_ENQUEUE, 0, 1, value=c) == P.EINVAL  # value is not a mutex
    assert post(s, m, P.OP_UNLOCK_FOR, 0, 1, value=c) == []  # silent EPERM
    assert s.counters()[1]["silent_errors"] == 1
    assert call(s, m, P.OP_LOCK_FOR, 2, 2, value=c) == 0  # a lock on 2.2's behalf
    assert post(s, m, P.OP_LOCK_FOR, 3, 3, value=c, reply=1) == []  # queued behind 2.2
    assert post(s, m, P.OP_UNLOCK, 3, 3) == []  # not the owner: silent
    r = post(s, m, P.OP_UNLOCK, 2, 2)
    assert replies(r) == [(3, 3, 0, 0, m)]
    assert post(s, m, P.OP_UNLOCK, 3, 3) == []
    for i in (c, m):
        assert call(s, i, P.OP_FREE) == 0


# Randomized differential tests --------------------------------------------------------------------

PROGRAMS = [
    # seed, source stall, reply-port stall (per mille), hosts of the shared mutexes and conds,
    # number of shared mutexes and conds, episodes per thread
    pytest.param(1, 0, 0, None, 6, 3, 1000, id="rr-nostall"),
    pytest.param(2, 300, 300, None, 6, 3, 800, id="rr-stalls"),
    pytest.param(3, 100, 50, [TINY], 4, 2, 800, id="tiny-exhaustion"),
    pytest.param(4, 0, 500, [0, TINY], 6, 3, 800, id="mixed-replystall"),
    pytest.param(5, 50, 0, [2], 3, 3, 600, id="one-host-hot"),
]


@pytest.mark.parametrize("seed,src_stall,rep_stall,hosts,n_mutex,n_cond,episodes", PROGRAMS)
def test_random_programs(tb_binary, seed, src_stall, rep_stall, hosts, n_mutex, n_cond, episodes):
    """32 threads on 4 tiles: locks, trylocks, cond waits/signals/broadcasts, barrier rounds,
    alloc/free churn with stale ids, invalid ids, misuse; every packet checked against the model,
    mutual exclusion and barrier rounds checked by the threads, free lists back to full."""
    with Bench(tb_binary, N, seed=seed, src_stall=src_stall, rep_stall=rep_stall) as bench:
        rp = Replay(SPM)
        drv, w = run_program(
            bench,
            rp,
            SPM,
            seed,
            episodes=episodes,
            rounds=max(4, episodes // 12),
            shared_hosts=hosts,
            n_mutex=n_mutex,
            n_cond=n_cond,
        )
        cnt = bench.counters()
        rp.check_counters(cnt)
        for e in range(N):
            _, n_ctrl, n_queue = P.spm_geometry(SPM[e])
            assert (cnt[e]["free_ctrl"], cnt[e]["free_queue"]) == (n_ctrl, n_queue), e
        assert drv.requests >= 2 * 32 * episodes
        CHECKED["requests"] += rp.core_requests
        assert w.stats["cond_wakes"] > 0 and w.stats["barrier_waits"] > 0
        if hosts == [TINY]:
            assert cnt[TINY]["queue_hwm"] == 24
            assert w.stats["lock_eagain"] + w.stats["cond_eagain_enqueue"] > 0
        print(
            f"\n{seed}: {drv.requests} requests, {rp.accepted} accepted, {bench.cycle} cycles,"
            f" {dict(w.stats)}"
        )


def _fuzz(s, fz, count, rng):
    for _ in range(count):
        e, req = fz.request()
        reps = s.do(e, req)
        if req.op == P.OP_FREE:
            if any(P.reply_status(p.op) == 0 and (p.core, p.thread) == (req.core, req.thread) for p in reps):
                fz.note_free(req.sync_id)


def cleanup_and_check_free_lists(s):
    """Release and free everything; every engine's free lists must be full again."""
    cleanup(s, s.system.engines)
    cnt = s.counters()
    for e in range(N):
        _, n_ctrl, n_queue = P.spm_geometry(SPM[e])
        assert (cnt[e]["free_ctrl"], cnt[e]["free_queue"]) == (n_ctrl, n_queue)
    return cnt


def test_fuzz_serialized(s):
    """Random (often nonsensical) requests one at a time; every reply compared with the
    whole-system model; then everything is released and freed: free lists back to full."""
    rng = random.Random(11)
    fz = Fuzzer(s.system.engines, rng)
    _fuzz(s, fz, 20000, rng)
    cnt = cleanup_and_check_free_lists(s)
    assert cnt[TINY]["req_alloc_mutex"] + cnt[TINY]["req_alloc_cond"] > 0
    assert s.requests > 20000


def test_fuzz_concurrent(tb_binary):
    """Random requests from many cores at once (bursts), with back-pressure; replay-checked;
    then cleaned up serially."""
    rng = random.Random(5)
    with Bench(tb_binary, N, seed=5, src_stall=200, rep_stall=200) as bench:
        rp = Replay(SPM)
        fz = Fuzzer(rp.models, rng, cores=4, threads=4)
        total = 0
        for burst in range(150):
            for _ in range(rng.randint(50, 300)):
                e, req = fz.request()
                bench.inject(e, req, at=bench.cycle + rng.randrange(200))
                rp.injected_request(e, req)
                total += 1
            events, reason = bench.run(max_cycles=200_000, idle=4, until_reply=False)
            assert reason == "idle"
            rp.events(events)
            rp.check_quiescent()
        rp.check_counters(bench.counters())
        s = Serial(bench, SPM, replay=rp)
        cleanup(s, s.system.engines)
        cnt = s.counters()
        for e in range(N):
            _, n_ctrl, n_queue = P.spm_geometry(SPM[e])
            assert (cnt[e]["free_ctrl"], cnt[e]["free_queue"]) == (n_ctrl, n_queue)
        assert total > 20000
        CHECKED["requests"] += rp.core_requests


def test_free_list_integrity_sweep(tb_binary):
    """After a random program: every control structure and every queue element of every engine
    can be allocated/filled exactly once (the free lists are intact), and released again."""
    with Bench(tb_binary, N, seed=9, src_stall=100) as bench:
        rp = Replay(SPM)
        run_program(bench, rp, SPM, seed=9, episodes=60)
        s = Serial(bench, SPM, replay=rp)
        for e in range(N):
            _, n_ctrl, n_queue = P.spm_geometry(SPM[e])
            ids = [alloc(s, e, P.OP_ALLOC_MUTEX) for _ in range(n_ctrl)]
            assert len(set(ids)) == n_ctrl and sorted(P.id_index(i) for i in ids) == list(range(n_ctrl))
            assert s.call(e, request(P.alloc_target(e), P.OP_ALLOC_COND, 0, 1))[0] == P.EAGAIN
            m = ids[0]
            assert call(s, m, P.OP_LOCK, 0, 1) == 0
            for k in range(n_queue):
                assert post(s, m, P.OP_LOCK, k % N, 1000 + k) == []
            assert call(s, m, P.OP_LOCK, 0, 2) == P.EAGAIN
            owner = (0, 1)
            for k in range(n_queue):
                assert replies(post(s, m, P.OP_UNLOCK, *owner)) == [(k % N, 1000 + k, 0, 0, m)]
                owner = (k % N, 1000 + k)
            assert post(s, m, P.OP_UNLOCK, *owner) == []
            for i in ids:
                assert call(s, i, P.OP_FREE) == 0
        cnt = s.counters()
        for e in range(N):
            _, n_ctrl, n_queue = P.spm_geometry(SPM[e])
            assert (cnt[e]["free_ctrl"], cnt[e]["free_queue"], cnt[e]["queue_hwm"]) == (
                n_ctrl,
                n_queue,
                n_queue,
            )
        CHECKED["requests"] += rp.core_requests


@pytest.mark.slow
@pytest.mark.skipif(not LONG, reason="set SUBUTAI_LONG=1 for the long randomized run")
@pytest.mark.parametrize("seed", range(100, 110))
def test_long_random_programs(tb_binary, seed):
    rng = random.Random(seed)
    src, rep = rng.choice([0, 100, 400]), rng.choice([0, 100, 400])
    hosts, n_mutex, n_cond = rng.choice([(None, 6, 3), ([TINY], 4, 2), ([0, TINY], 6, 3), ([1], 8, 4)])
    with Bench(tb_binary, N, seed=seed, src_stall=src, rep_stall=rep) as bench:
        rp = Replay(SPM)
        drv, w = run_program(
            bench,
            rp,
            SPM,
            seed,
            episodes=3000,
            rounds=200,
            shared_hosts=hosts,
            n_mutex=n_mutex,
            n_cond=n_cond,
        )
        rp.check_counters(bench.counters())
        s = Serial(bench, SPM, replay=rp)
        fz = Fuzzer(s.system.engines, rng)
        _fuzz(s, fz, 20000, rng)
        cleanup_and_check_free_lists(s)
        CHECKED["requests"] += rp.core_requests
