#
# Verilator testbench of N Subutai-HW engines on an ideal interconnect.
#
"""Build and drive the closed-loop Verilator bench of :class:`SubutaiEngine`.

Top level (:class:`BenchTop`, Migen): N engines (engine ``i`` hosts tile ``i``'s primitives) and
an ideal interconnect:

- per engine, a request port ``req<e>_*`` driven by the C++ harness (requests of the cores);
- engine-to-engine packets go through one FIFO per (source, destination) pair (depth
  ``e2e_depth``: deep enough for one packet per blocked thread, so the bench cannot deadlock on
  buffering), merged round-robin with the request port into the destination's ``sink``;
- replies go through one small FIFO per (engine, tile) pair, merged round-robin into the tile's
  reply port ``rep<t>_*``;
- ``stall<e>`` gates engine e's ``source.ready`` (random back-pressure from the harness).

Every packet an engine accepts or emits is observable (``e<e>_in_*``, ``e<e>_out_*``), so the
tests can replay each engine's input order through :class:`gateware.subutai.model.EngineModel`.

``build(spm_sizes)`` generates ``bench.v`` and ``ports.h`` and builds ``Vbench`` under
``build/subutai_tb/<config>/``, reused while the hash of the gateware, the harness and this file
is unchanged. :class:`Bench` runs it as a co-process (text commands on stdin, events on stdout;
see ``tb.cpp``).
"""

import os
import subprocess
import sys

from gateware import fhdl_speed
from gateware.build import BUILD_DIR as _BUILD_ROOT, build_verilator_testbench, built_testbench, source_digest

TB_DIR = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(_BUILD_ROOT, "subutai_tb")

REQ_FIELDS = [("sync_id", 32), ("op", 8), ("core", 8), ("thread", 16), ("value", 32), ("reply", 1)]
PKT_FIELDS = [("dest", 8), ("sync_id", 32), ("op", 8), ("core", 8), ("thread", 16), ("value", 32)]


def source_hash(extra=""):
    """Hash of everything the bench depends on: Subutai gateware, harness, this builder."""
    return source_digest(["gateware/subutai"], extra)


# Gateware ------------------------------------------------------------------------------------------


def _top(spm_sizes, e2e_depth, reply_depth):
    from functools import reduce
    from operator import and_, or_
    from migen import Module, Signal, Array, Case, If, Mux
    from litex.soc.interconnect import stream
    from gateware.subutai.engine import SubutaiEngine

    class RRMerge(Module):
        """Round-robin merge of single-beat streams (the priority moves past each winner)."""

        def __init__(self, layout, n):
            self.sinks = [stream.Endpoint(layout) for _ in range(n)]
            self.source = stream.Endpoint(layout)
            grant = Signal(max=max(n, 2))
            ptr = Signal(max=max(n, 2))
            cases = {}
            for p in range(n):
                order = [(p + k) % n for k in range(n)]
                chain = If(self.sinks[order[0]].valid, grant.eq(order[0]))
                for i in order[1:]:
                    chain = chain.Elif(self.sinks[i].valid, grant.eq(i))
                cases[p] = chain
            self.comb += Case(ptr, cases)
            self.comb += self.source.valid.eq(Array(s.valid for s in self.sinks)[grant])
            for name, _ in layout:
                self.comb += getattr(self.source, name).eq(Array(getattr(s, name) for s in self.sinks)[grant])
            for i, s in enumerate(self.sinks):
                self.comb += s.ready.eq(self.source.ready & (grant == i))
            self.sync += If(self.source.valid & self.source.ready, ptr.eq(Mux(grant == n - 1, 0, grant + 1)))

    n = len(spm_sizes)
    top = Module()
    ios = set()

    def io(name, width):
        s = Signal(width, name_override=name)
        ios.add(s)
        return s

    engines = [SubutaiEngine(i, n, spm_bytes=s) for i, s in enumerate(spm_sizes)]
    for i, e in enumerate(engines):
        setattr(top.submodules, f"engine{i}", e)
    merges = [RRMerge(REQ_FIELDS, 1 + n) for _ in range(n)]  # sink of engine d
    rmerges = [RRMerge(PKT_FIELDS, n) for _ in range(n)]  # reply port of tile t
    for i in range(n):
        setattr(top.submodules, f"merge{i}", merges[i])
        setattr(top.submodules, f"rmerge{i}", rmerges[i])

    dbits = max(1, (n - 1).bit_length())
    quiet_terms = []
    bad_dest = io("bad_dest", 1)
    bad_terms = []
    for d in range(n):
        # Request port of engine d from the harness.
        m = merges[d].sinks[0]
        top.comb += m.valid.eq(io(f"req{d}_valid", 1))
        top.comb += io(f"req{d}_ready", 1).eq(m.ready)
        for f, w in REQ_FIELDS:
            top.comb += getattr(m, f).eq(io(f"req{d}_{f}", w))
        top.comb += merges[d].source.connect(engines[d].sink)

    for s, e in enumerate(engines):
        src = e.source
        stall = io(f"stall{s}", 1)
        is_rep = src.op[7]
        readies_e2e, readies_rep = [], []
        for d in range(n):
            f = stream.SyncFIFO(REQ_FIELDS, e2e_depth)
            setattr(top.submodules, f"e2e_{s}_{d}", f)
            top.comb += [
                f.sink.valid.eq(src.valid & ~stall & ~is_rep & (src.dest == d)),
                f.sink.sync_id.eq(src.sync_id),
                f.sink.op.eq(src.op),
                f.sink.core.eq(src.core),
                f.sink.thread.eq(src.thread),
                f.sink.value.eq(src.value),
                f.sink.reply.eq(0),
                f.source.connect(merges[d].sinks[1 + s]),
            ]
            readies_e2e.append(f.sink.ready)
            quiet_terms.append(~f.source.valid)
            r = stream.SyncFIFO(PKT_FIELDS, reply_depth)
            setattr(top.submodules, f"rep_{s}_{d}", r)
            top.comb += [
                r.sink.valid.eq(src.valid & ~stall & is_rep & (src.dest == d)),
                r.sink.dest.eq(src.dest),
                r.sink.sync_id.eq(src.sync_id),
                r.sink.op.eq(src.op),
                r.sink.core.eq(src.core),
                r.sink.thread.eq(src.thread),
                r.sink.value.eq(src.value),
                r.source.connect(rmerges[d].sinks[s]),
            ]
            readies_rep.append(r.sink.ready)
            quiet_terms.append(~r.source.valid)
        bad = Signal()
        top.comb += [
            bad.eq(src.valid & (src.dest >= n)),
            # A packet to a tile that does not exist is flagged and dropped (never expected).
            src.ready.eq(
                bad
                | (
                    ~stall
                    & Mux(is_rep, Array(readies_rep)[src.dest[:dbits]], Array(readies_e2e)[src.dest[:dbits]])
                )
            ),
        ]
        bad_terms.append(bad)
        quiet_terms.append(e.idle)
        quiet_terms.append(~e.sink.valid)
        # Observation.
        top.comb += io(f"e{s}_in_fire", 1).eq(e.sink.valid & e.sink.ready)
        for f, w in REQ_FIELDS:
            top.comb += io(f"e{s}_in_{f}", w).eq(getattr(e.sink, f))
        top.comb += io(f"e{s}_out_fire", 1).eq(src.valid & src.ready)
        for f, w in PKT_FIELDS:
            top.comb += io(f"e{s}_out_{f}", w).eq(getattr(src, f))
        top.comb += io(f"e{s}_idle", 1).eq(e.ready)
        for name, sig in e.counters.items():
            top.comb += io(f"e{s}_ev_{name}", 32).eq(sig)
        top.comb += [
            io(f"e{s}_ev_last_err_sync", 32).eq(e.last_err_sync),
            io(f"e{s}_ev_last_err_op", 32).eq(e.last_err_op),
            io(f"e{s}_ev_last_err_status", 32).eq(e.last_err_status),
        ]

    for t in range(n):
        m = rmerges[t].source
        top.comb += [io(f"rep{t}_valid", 1).eq(m.valid), m.ready.eq(io(f"rep{t}_ready", 1))]
        for f, w in PKT_FIELDS:
            top.comb += io(f"rep{t}_{f}", w).eq(getattr(m, f))
        quiet_terms.append(~m.valid)

    quiet = io("quiet", 1)
    top.comb += quiet.eq(reduce(and_, quiet_terms))
    top.comb += bad_dest.eq(reduce(or_, bad_terms))
    counter_names = list(engines[0].counters) + ["last_err_sync", "last_err_op", "last_err_status"]
    return top, ios, counter_names


def generate(spm_sizes, e2e_depth=64, reply_depth=2):
    """Return (verilog, ports.h text, counter names)."""
    from migen.fhdl.verilog import convert

    top, ios, counter_names = _top(spm_sizes, e2e_depth, reply_depth)
    fhdl_speed.install()
    verilog = str(convert(top, ios=ios, name="bench"))
    n = len(spm_sizes)
    L = [
        f"#define N_ENG {n}",
        f"#define N_COUNTERS {len(counter_names)}",
        "static const char *counter_names[N_COUNTERS] = {"
        + ", ".join(f'"{c}"' for c in counter_names)
        + "};",
        "static void bind_ports(Vbench *top, ReqPort *req, RepPort *rep, InObs *in, OutObs *out,"
        " CData **stall, CData **idle, IData *(*counters)[N_COUNTERS]) {",
    ]
    for e in range(n):
        L.append(
            f"    req[{e}] = ReqPort{{&top->req{e}_valid, &top->req{e}_ready, "
            f"&top->req{e}_sync_id, &top->req{e}_op, &top->req{e}_core, &top->req{e}_thread, "
            f"&top->req{e}_value, &top->req{e}_reply}};"
        )
        L.append(
            f"    rep[{e}] = RepPort{{&top->rep{e}_valid, &top->rep{e}_ready, "
            f"&top->rep{e}_sync_id, &top->rep{e}_op, &top->rep{e}_core, &top->rep{e}_thread, "
            f"&top->rep{e}_value}};"
        )
        L.append(
            f"    in[{e}] = InObs{{&top->e{e}_in_fire, &top->e{e}_in_sync_id, "
            f"&top->e{e}_in_op, &top->e{e}_in_core, &top->e{e}_in_thread, &top->e{e}_in_value, "
            f"&top->e{e}_in_reply}};"
        )
        L.append(
            f"    out[{e}] = OutObs{{&top->e{e}_out_fire, &top->e{e}_out_dest, "
            f"&top->e{e}_out_sync_id, &top->e{e}_out_op, &top->e{e}_out_core, "
            f"&top->e{e}_out_thread, &top->e{e}_out_value}};"
        )
        L.append(f"    stall[{e}] = &top->stall{e};")
        L.append(f"    idle[{e}] = &top->e{e}_idle;")
        for k, c in enumerate(counter_names):
            L.append(f"    counters[{e}][{k}] = &top->e{e}_ev_{c};")
    L.append("}")
    return verilog, "\n".join(L) + "\n", counter_names


def config_name(spm_sizes):
    return "e" + "-".join(str(s) for s in spm_sizes)


def build(spm_sizes, jobs=2, log=None):
    """Build (or reuse) the bench for engines with the given SPM sizes; return the binary path."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    spm_sizes = list(spm_sizes)
    name = config_name(spm_sizes)
    outdir = os.path.join(BUILD_DIR, name)
    digest = source_hash(repr(spm_sizes))
    binary = built_testbench(outdir, "bench", digest)
    if binary:
        return binary
    verilog, ports, _ = generate(spm_sizes)
    return build_verilator_testbench(
        outdir,
        "bench",
        {"bench.v": verilog, "ports.h": ports},
        os.path.join(TB_DIR, "tb.cpp"),
        digest,
        jobs=jobs,
        cxx_opt=("-O2", "-O1", "-O2"),
        log=log,
        tag=f"subutai_tb {name}",
    )


# Co-process ----------------------------------------------------------------------------------------


class Bench:
    """A running bench. Commands are buffered until :meth:`run` / :meth:`counters` flush them.

    Events returned by :meth:`run` (tuples, ints):

    - ``("A", cycle, engine, Request)``  engine accepted a request (its sink)
    - ``("O", cycle, engine, Packet)``   engine emitted a packet (its source)
    - ``("Y", cycle, tile, Packet)``     a reply reached tile's reply port
    - ``("E", cycle, engine)``           engine's FSM returned to IDLE (only with ``trace_idle``)
    """

    def __init__(self, binary, n, seed=1, src_stall=0, rep_stall=0, trace_idle=False):
        self.n = n
        self.proc = subprocess.Popen(
            [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1 << 16
        )
        self.cmds = []
        self.cycle = 0
        self.configure(seed, src_stall, rep_stall, trace_idle)

    def configure(self, seed=1, src_stall=0, rep_stall=0, trace_idle=False):
        """Stall probabilities in 1/1000 per cycle (engine sources, tile reply ports)."""
        self.cmds.append(f"P {int(src_stall)} {int(rep_stall)} {int(seed)} {int(trace_idle)}")

    def inject(self, engine, req, at=0):
        """Queue a core request for ``engine``'s request port, offered at or after cycle ``at``
        (in order per (core, engine))."""
        self.cmds.append(
            f"I {at} {engine} {req.sync_id:x} {req.op} {req.core} {req.thread} {req.value:x} {req.reply}"
        )

    def _flush(self):
        self.proc.stdin.write("\n".join(self.cmds) + "\n")
        self.proc.stdin.flush()
        self.cmds = []

    def run(self, max_cycles=1_000_000, idle=8, until_reply=True):
        """Simulate until a reply reaches a tile (if ``until_reply``), or ``idle`` quiet cycles
        with nothing left to inject, or ``max_cycles``. Returns (events, reason)."""
        from gateware.subutai.model import Request, Packet

        self.cmds.append(f"R {max_cycles} {idle} {int(until_reply)}")
        self._flush()
        events = []
        readline = self.proc.stdout.readline
        while True:
            line = readline()
            if not line:
                raise RuntimeError("bench process died")
            w = line.split()
            tag = w[0]
            if tag == "A":
                events.append(
                    (
                        "A",
                        int(w[1]),
                        int(w[2]),
                        Request(int(w[3], 16), int(w[4]), int(w[5]), int(w[6]), int(w[7], 16), int(w[8])),
                    )
                )
            elif tag == "O" or tag == "Y":
                events.append(
                    (
                        tag,
                        int(w[1]),
                        int(w[2]),
                        Packet(int(w[3]), int(w[4], 16), int(w[5]), int(w[6]), int(w[7]), int(w[8], 16)),
                    )
                )
            elif tag == "E":
                events.append(("E", int(w[1]), int(w[2])))
            elif tag == "X":
                raise AssertionError(f"engine {w[2]} emitted a packet to a missing tile: {line}")
            elif tag == "D":
                self.cycle = int(w[1])
                return events, w[2]
            else:
                raise RuntimeError(f"bad bench output: {line!r}")

    def counters(self):
        """{engine: {name: value}} of every engine's event counters."""
        self.cmds.append("S")
        self._flush()
        res = {}
        while True:
            w = self.proc.stdout.readline().split()
            if w[0] == "D":
                return res
            res.setdefault(int(w[1]), {})[w[2]] = int(w[3])

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("Q\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=2)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                # E.g. a failed test left the harness blocked on output nobody reads.
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()
