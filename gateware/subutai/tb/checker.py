#
# Differential checking of the bench against the reference model.
#
"""Replay checker: the RTL against :class:`gateware.subutai.model.EngineModel`.

The order in which an engine accepts requests depends on cycle-level timing, which the model
does not reproduce; everything else is a function of that order. So every request an engine
accepts (``A`` event) is fed to that engine's model, and every packet the engine emits (``O``)
must be the next packet the model emitted — same op, status, ids, values, destination, order.

The interconnect is checked too: each engine-to-engine packet must be accepted by its
destination in order per (source, destination) pair, each reply must reach its tile in order per
(engine, tile) pair, and each core request must be accepted exactly once, in order per
(core, engine) pair.
"""

from collections import deque, defaultdict

from gateware.subutai import protocol as P
from gateware.subutai.model import EngineModel, Request


class Mismatch(AssertionError):
    pass


def fmt_pkt(p):
    op = p.op
    if op & P.OP_REPLY:
        opn = "REPLY/" + P.STATUS_NAMES.get(op & 0x7F, str(op & 0x7F))
    else:
        opn = P.OP_NAMES.get(op, hex(op))
    return f"{opn} {P.format_id(p.sync_id)} core={p.core} thread={p.thread} value={p.value:#x}" + (
        f" dest={p.dest}" if hasattr(p, "dest") else ""
    )


class Replay:
    def __init__(self, spm_sizes, log_tail=64):
        self.n = n = len(spm_sizes)
        self.models = [EngineModel(i, n, s) for i, s in enumerate(spm_sizes)]
        self.expected = [deque() for _ in range(n)]  # model output not yet seen
        self.e2e = defaultdict(deque)  # (src, dst) -> Request in flight
        self.rep = defaultdict(deque)  # (engine, tile) -> Packet in flight
        self.injected = defaultdict(deque)  # (core, engine) -> Request
        self.history = [deque(maxlen=log_tail) for _ in range(n)]
        self.accepted = 0  # requests accepted, all engines
        self.core_requests = 0  # of them: from cores

    def injected_request(self, engine, req):
        self.injected[(req.core, engine)].append(req)

    def _fail(self, e, msg):
        hist = "\n".join(self.history[e]) if e is not None else ""
        raise Mismatch(f"{msg}\nrecent history of engine {e}:\n{hist}")

    def _pop_head(self, fifos, dest, item):
        """Take item off the head of the first FIFO (source, dest) of fifos that has it there;
        False when none has (packets from one source to one destination keep their order)."""
        for src in range(self.n):
            q = fifos.get((src, dest))
            if q and q[0] == item:
                q.popleft()
                return True
        return False

    def event(self, ev):
        tag = ev[0]
        if tag == "A":
            _, cyc, e, req = ev
            self.accepted += 1
            self.history[e].append(f"{cyc:8d} A {fmt_pkt(req)} reply={req.reply}")
            # Which input did it come from? An engine-to-engine FIFO or the core port.
            if not self._pop_head(self.e2e, e, req):
                q = self.injected.get((req.core, e))
                if not q or q[0] != req:
                    self._fail(
                        e,
                        f"cycle {cyc}: engine {e} accepted an unexpected request "
                        f"{fmt_pkt(req)} (next injected: {q[0] if q else None})",
                    )
                q.popleft()
                self.core_requests += 1
            for p in self.models[e].process(req):
                self.expected[e].append(p)
        elif tag == "O":
            _, cyc, e, pkt = ev
            self.history[e].append(f"{cyc:8d} O {fmt_pkt(pkt)}")
            if not self.expected[e]:
                self._fail(e, f"cycle {cyc}: engine {e} emitted {fmt_pkt(pkt)}; the model expected nothing")
            exp = self.expected[e].popleft()
            if exp != pkt:
                self._fail(e, f"cycle {cyc}: engine {e} emitted\n  {fmt_pkt(pkt)}\nmodel:\n  {fmt_pkt(exp)}")
            if P.is_reply(pkt.op):
                self.rep[(e, pkt.dest)].append(pkt)
            else:
                if pkt.dest == e:
                    self._fail(
                        e,
                        f"cycle {cyc}: engine {e} sent a request to itself on its "
                        f"source (it must use its self queue): {fmt_pkt(pkt)}",
                    )
                self.e2e[(e, pkt.dest)].append(
                    Request(pkt.sync_id, pkt.op, pkt.core, pkt.thread, pkt.value, 0)
                )
        elif tag == "Y":
            _, cyc, t, pkt = ev
            if not self._pop_head(self.rep, t, pkt):
                raise Mismatch(
                    f"cycle {cyc}: tile {t} received a reply no engine sent in that order: {fmt_pkt(pkt)}"
                )

    def events(self, evs):
        for ev in evs:
            self.event(ev)

    def check_quiescent(self):
        """Nothing may be outstanding once the bench is idle."""
        for e in range(self.n):
            if self.expected[e]:
                self._fail(e, f"engine {e} did not emit: " + "; ".join(fmt_pkt(p) for p in self.expected[e]))
        for k, q in list(self.e2e.items()) + list(self.rep.items()):
            if q:
                raise Mismatch(f"packets {k} never delivered: {[fmt_pkt(p) for p in q]}")
        for k, q in self.injected.items():
            if q:
                raise Mismatch(f"core requests {k} never accepted: {[fmt_pkt(p) for p in q]}")

    def check_counters(self, rtl):
        """Compare the RTL event counters with the models' (all but busy_cycles)."""
        for e, m in enumerate(self.models):
            for name, val in m.counters.items():
                if name == "busy_cycles":
                    continue
                if rtl[e][name] != val:
                    raise Mismatch(f"engine {e}: counter {name} = {rtl[e][name]}, model {val}")
            le = m.last_error or (0, 0, 0)
            got = (rtl[e]["last_err_sync"], rtl[e]["last_err_op"], rtl[e]["last_err_status"])
            if got != le:
                raise Mismatch(f"engine {e}: last error {got}, model {le}")
