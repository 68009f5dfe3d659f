#
# 5-port wormhole router of the Subutai mesh NoC.
#
"""5-port wormhole router with two virtual channels and XY routing.

Structure (one concern per module)::

    link in --> _InputPort (route computation as a flit arrives; a two-flit buffer per VC:
                            routing byte and route in registers, the rest in one payload
                            RAM of both VCs; drop of bad packets; the one flit the port
                            sends this cycle) --+
                                                                      |
    link out <-- _OutputPort (per VC: wormhole lock + round-robin     <+
                              over inputs; between VCs: priority with a starvation limit;
                              crossbar mux over the inputs; a register on the
                              links to neighbouring routers)

Latency: a flit written into an input buffer in cycle ``t`` is offered on the output link in
cycle ``t+1`` (allocation and the crossbar are combinational behind the buffer's head register,
which holds the route computed as the flit was written); an output to a neighbouring router
puts it through a register, so it is on that link in cycle ``t+2`` (``link_registers``, see
:class:`MeshRouter`: no path runs from one router into the next but through a register). An
uncontended head flit thus advances **one hop every two cycles**: injected into the source
router in cycle ``t``, it is delivered by the destination router in cycle ``t + 2*hops + 1``,
where ``hops`` is the Manhattan distance (the ``+1`` is the ejection through the destination
router, whose local output is not registered). Body flits follow at one flit per cycle.

Back-pressure: ``ready[v]`` of an input is computed from the buffer's fill level only, so it
never depends on ``valid`` (no combinational loop between routers): "not full" for the local
input, "fewer than ``buffer_depth`` flits" for an input from a neighbour, whose buffer keeps a
spare entry for the flit its neighbour's output register still sends. The outputs look at the
downstream ``ready`` before choosing what to send. A depth of 2 sustains one flit per cycle per
link and is the default: on a 4x4 mesh under uniform random traffic it saturates at 0.50
flits/cycle/tile against 0.56 with depth 4 (``make bench-noc``, before the link registers), far
above what synchronization traffic offers. Only the routing
byte, ``first``/``last`` and the route of a buffered flit are registers; its other 24 bits share one
distributed RAM per input port with the other VC's (:class:`_InputPort`), whose asynchronous
read selects VC and FIFO slot at once. That took the router from 1,776 to 1,201 LUT4 (1,778 to
1,383 LUT4 sites placed, ``make resources``) with the same behaviour cycle for cycle; storing
the route with the flit (:class:`_InputPort`) then cost 49 LUT4 and 68 flip-flops (1,250 LUT4,
1,432 sites) and raised the router's Fmax placed alone from 64.6 to 76.5 MHz. The link
registers (:class:`MeshRouter`) then took it to 1,447 LUT4 and 686 flip-flops (1,629 sites; the
spare entries and the output registers).

Routing is dimension-ordered (X first, then Y). Each VC is an independent XY network, which is
deadlock-free on a mesh; packets never change VC.

Arbitration at each output:

- per VC, an output VC is allocated to one input from head to tail (wormhole); a new packet is
  chosen round-robin among the inputs whose head flit asks for this output VC;
- between the two VCs of the output, a VC competes when it has a flit *and* the downstream
  ``ready`` of that VC is high; VC 1 (priority) wins, except that after ``starvation_limit``
  consecutive VC-1 grants while VC 0 was competing, VC 0 gets one grant.

One flit per cycle leaves an input port, so the crossbar multiplexes five inputs rather than ten
(input, VC) pairs, half of the router's largest part. When two outputs want both VCs of one input
in the same cycle, the VCs take turns (:class:`MeshRouter`); a VC then waits only while the other
VC moves, never on a blocked one, so the VCs stay independent networks.

Measured (tests/test_noc.py, Verilator): zero-load head latency ``2*hops + 1`` cycles on every
source/destination pair of 4x4 and 3x2 meshes. ECP5 (Yosys ``synth_ecp5 -nowidelut``, placed
alone with nextpnr-ecp5, ``make resources``): see ``results/noc_resources.md``.

Bad packets never hang the router: a head flit whose destination is outside the mesh (when the
mesh size is known) or whose XY route would leave through a port that is absent or an illegal
turn (a U-turn, or a Y-to-X turn) is consumed together with the rest of its packet and dropped;
``error`` (sticky) is set and ``dropped`` counts such packets.
"""

from migen import *
from migen.genlib.fifo import SyncFIFO

from litex.gen import LiteXModule, Reduce

from gateware.fifo import RegisterFIFO
from gateware.noc.common import (
    N_VCS,
    PORTS,
    LOCAL,
    NORTH,
    EAST,
    SOUTH,
    WEST,
    PORT_OFFSETS,
    MAX_MESH_DIM,
    Link,
    link_layout,
    head_field,
    HEAD_FIELDS,
)

# Low bits of a flit that the routing looks at: dst_x and dst_y of a head flit.
ROUTE_BITS = max(HEAD_FIELDS[f][0] + HEAD_FIELDS[f][1] for f in ("dst_x", "dst_y"))

# Outputs an XY-routed flit may take, per input port: no U-turns, no turns from Y back to X.
LEGAL_TURNS = {
    LOCAL: {LOCAL, NORTH, EAST, SOUTH, WEST},
    WEST: {LOCAL, NORTH, EAST, SOUTH},  # Arrived from the west: travelling east.
    EAST: {LOCAL, NORTH, SOUTH, WEST},  # Travelling west.
    NORTH: {LOCAL, SOUTH},  # Travelling south.
    SOUTH: {LOCAL, NORTH},  # Travelling north.
}

# Round-robin arbiter ------------------------------------------------------------------------------


class RoundRobinComb(Module):
    """Round-robin arbiter with a combinational grant.

    ``grant`` (one-hot) is the first requester after the previous winner, in the same cycle as
    ``request`` (Migen's ``RoundRobin`` registers its grant, which would cost a cycle per hop).
    The previous winner is updated when ``ce`` is high (the grant was used).
    """

    def __init__(self, n):
        self.request = Signal(n)
        self.grant = Signal(n)
        self.ce = Signal()

        # # #

        if n == 1:
            self.comb += self.grant.eq(self.request)
            return
        last = Signal(max=n, reset=n - 1, name="rr_last")  # Requester 0 has priority after reset.
        cases = {}
        for prev in range(n):
            chain = []
            for t in reversed([(prev + 1 + k) % n for k in range(n)]):
                chain = [If(self.request[t], self.grant.eq(1 << t)).Else(*chain)]
            cases[prev] = chain
        self.comb += Case(last, cases)
        for t in range(n):
            self.sync += If(self.ce & self.grant[t], last.eq(t))


# Input port ---------------------------------------------------------------------------------------


class _OneFlitBuffer(Module):
    """Depth-1 stand-in for Migen's ``SyncFIFO`` (which needs depth >= 2): one register.

    ``writable`` is "empty", so a full buffer accepts nothing in the cycle it is read: depth 1
    halves the throughput of a link and exists only as the smallest configuration.
    """

    def __init__(self, width):
        self.din, self.we, self.writable = Signal(width), Signal(), Signal()
        self.dout, self.re, self.readable = Signal(width), Signal(), Signal()
        self.level = Signal()

        # # #

        self.comb += [
            self.writable.eq(~self.level),
            self.readable.eq(self.level),
        ]
        self.sync += [
            If(
                self.we & self.writable,
                self.dout.eq(self.din),
                self.level.eq(1),
            ).Elif(
                self.re & self.readable,
                self.level.eq(0),
            )
        ]


class _InputVC(Module):
    """FIFO of one VC of an input port, with the route of the flit at its head.

    The FIFO holds the flit's routing byte (``dst_x``/``dst_y``, bits 7:0), its
    ``first``/``last`` and the route the input port computed as the flit arrived (``route_in``:
    one-hot over the outputs, all zero for a head that cannot be routed); the rest of the flit
    waits in the input port's payload RAM (see :class:`_InputPort`), written and read in step
    with this FIFO.

    ``valid``/``first``/``last``/``head``: flit at the head of the FIFO (first-word fall-through);
    ``request[o]``: the head flit is a well-formed head that asks for output ``o``;
    ``pop``: the head flit leaves (forwarded by an output, asserted by the router);
    ``push``/``popped``: a flit enters / leaves this VC this cycle (for the payload RAM).

    ``spare``: entries beyond ``depth`` for the flit a registered output of the neighbour still
    sends after ``ready`` went low (see :class:`MeshRouter`): ``ready`` is then "fewer than
    ``depth`` flits held", so a flit in flight always finds room.
    """

    def __init__(self, link, vc, depth, route_in, spare=0):
        self.valid = Signal()
        self.first = Signal()
        self.last = Signal()
        self.head = Signal(ROUTE_BITS)
        self.request = Signal(len(PORTS))
        self.pop = Signal()
        self.drop = Signal()  # A flit of a bad packet is consumed this cycle.
        self.dropped = Signal()  # The tail of a bad packet is consumed this cycle.
        self.push = Signal()
        self.popped = Signal()

        # # #

        route = Signal(len(PORTS), name="route")  # Route of the head flit (zero: unroutable).
        width = ROUTE_BITS + 2 + len(route)
        self.capacity = capacity = depth + spare
        if capacity == 1:
            fifo = _OneFlitBuffer(width)
        elif capacity <= 3:
            fifo = RegisterFIFO(width, capacity)
        else:
            fifo = SyncFIFO(width, capacity)
        self.fifo = fifo
        self.submodules += fifo
        self.comb += [
            fifo.din.eq(Cat(link.data[:ROUTE_BITS], link.first, link.last, route_in)),
            fifo.we.eq(link.valid & (link.vc == vc)),
            # Depends on the fill level only, never on valid (see the link protocol).
            link.ready[vc].eq(fifo.level < depth if spare else fifo.writable),
            self.valid.eq(fifo.readable),
            Cat(self.head, self.first, self.last, route).eq(fifo.dout),
            self.push.eq(fifo.we & fifo.writable),
            self.popped.eq(fifo.re & fifo.readable),
        ]

        # Dropping a bad packet: its head and every flit up to its tail are consumed here.
        dropping = Signal(name="dropping")
        self.comb += [
            self.drop.eq(self.valid & (dropping | (self.first & (route == 0)))),
            self.dropped.eq(self.drop & self.last),
            fifo.re.eq(self.pop | self.drop),
            If(self.valid & self.first & ~dropping, self.request.eq(route)),
        ]
        self.sync += If(self.drop, dropping.eq(~self.last))


class _InputPort(Module):
    """An input port: one :class:`_InputVC` per virtual channel behind one link, and the one
    flit the port sends this cycle (``data``/``first``/``last``: the head of VC 1 when
    ``send_vc1``, else of VC 0).

    One flit per cycle leaves an input port, so the crossbar multiplexes inputs, not (input,
    VC) pairs: half the crossbar of the router (the router's largest part on an FPGA). The router
    settles the rare cycle where two outputs want both VCs of one input (see
    :class:`MeshRouter`).

    The flits' payload (bits 31:8, which no routing decision looks at) of both VCs is one
    distributed RAM of ``2*depth`` words (``{vc, slot}``), written with the link's flit and read
    asynchronously at the head of the VC the port sends: the RAM's read is the VC multiplexer and
    the FIFO's head choice at once, where registers need a LUT4 per bit for each (an ECP5
    ``DPR16X4`` holds 4 bits of up to 16 words in six LUT4 sites). Only the routing byte,
    ``first``/``last`` and the route stay in registers, where every cycle's allocation reads
    them for both VCs.

    The XY route (and whether the head is bad) is computed once per port from the flit on the
    link and stored with it, not at the head of each VC's buffer: the path of a hop then starts
    at the stored route, not at comparators behind the buffer (on a 4-tile ECP5 build that path,
    buffered head -> route -> round-robin -> crossbar -> the next router's payload RAM, was the
    critical path, 14 logic levels); the comparators move behind the previous router's crossbar,
    in front of a register rather than a distributed RAM. Both VCs share them.
    """

    def __init__(self, link, x, y, port, depth, outputs, mesh_x, mesh_y, spare=0):
        # XY route of the flit on the link, stored with it (meaningful for a head flit): computed
        # once for both VCs as the flit arrives, so the path from a buffered head through
        # allocation and the crossbar into the next router starts at the stored route.
        dst_x = head_field(link.data, "dst_x")
        dst_y = head_field(link.data, "dst_y")
        xy = Signal(len(PORTS), name="xy")
        self.comb += [
            xy[EAST].eq(dst_x > x),
            xy[WEST].eq(dst_x < x),
            xy[NORTH].eq((dst_x == x) & (dst_y < y)),
            xy[SOUTH].eq((dst_x == x) & (dst_y > y)),
            xy[LOCAL].eq((dst_x == x) & (dst_y == y)),
        ]
        # A head is bad (route zero) if its route is not an existing legal output, or its
        # destination is outside the mesh (dropped at the first router instead of at the mesh
        # edge).
        allowed = [o for o in sorted(LEGAL_TURNS[port]) if o in outputs]
        in_mesh = Signal(name="in_mesh")
        self.comb += in_mesh.eq(1)
        if mesh_x is not None and mesh_x < MAX_MESH_DIM:
            self.comb += If(dst_x >= mesh_x, in_mesh.eq(0))
        if mesh_y is not None and mesh_y < MAX_MESH_DIM:
            self.comb += If(dst_y >= mesh_y, in_mesh.eq(0))
        route_in = Signal(len(PORTS), name="route_in")
        for o in allowed:
            self.comb += route_in[o].eq(xy[o] & in_mesh)

        self.vcs = [_InputVC(link, vc, depth, route_in, spare) for vc in range(N_VCS)]
        self.submodules += self.vcs
        self.send_vc1 = Signal()
        self.data = Signal(len(link.data))
        self.first = Signal()
        self.last = Signal()

        # # #

        vc0, vc1 = self.vcs
        self.comb += If(
            self.send_vc1,
            self.data[:ROUTE_BITS].eq(vc1.head),
            self.first.eq(vc1.first),
            self.last.eq(vc1.last),
        ).Else(
            self.data[:ROUTE_BITS].eq(vc0.head),
            self.first.eq(vc0.first),
            self.last.eq(vc0.last),
        )

        # Payload RAM: slot ``wp``/``rp`` of VC ``v`` is word ``{v, slot}``; each VC's pointers
        # follow its FIFO's pushes and pops, so the RAM word of a FIFO's head is at ``rp``.
        capacity = vc0.capacity
        slots = 1 << bits_for(max(capacity, 2) - 1)
        wp = [Signal(max=slots, name=f"wp{vc}") for vc in range(N_VCS)]
        rp = [Signal(max=slots, name=f"rp{vc}") for vc in range(N_VCS)]
        for vc, ivc in enumerate(self.vcs):
            self.sync += [
                If(ivc.push, wp[vc].eq(Mux(wp[vc] == capacity - 1, 0, wp[vc] + 1))),
                If(ivc.popped, rp[vc].eq(Mux(rp[vc] == capacity - 1, 0, rp[vc] + 1))),
            ]
        self.specials.payload = payload = Memory(len(link.data) - ROUTE_BITS, N_VCS * slots, name="payload")
        wr = payload.get_port(write_capable=True)
        rd = payload.get_port(async_read=True)
        self.specials += wr, rd
        in_vc = link.vc
        self.comb += [
            wr.adr.eq(Cat(Array(wp)[in_vc], in_vc)),
            wr.dat_w.eq(link.data[ROUTE_BITS:]),
            wr.we.eq(vc0.push | vc1.push),
            rd.adr.eq(Cat(Array(rp)[self.send_vc1], self.send_vc1)),
            self.data[ROUTE_BITS:].eq(rd.dat_r),
        ]


# Output port --------------------------------------------------------------------------------------


class _OutputVC(Module):
    """Allocation of one VC of an output port to the inputs (wormhole, round-robin).

    ``select`` (one-hot over ``inputs``): the input whose flit this VC would send now;
    ``candidate``: this VC has a flit to send and the downstream VC is ready;
    ``go`` (from the VC arbiter): the flit is sent this cycle; ``last``: it is a tail.
    """

    def __init__(self, link, vc, requests, valids):
        n = len(requests)
        self.select = Signal(n)
        self.candidate = Signal()
        self.go = Signal()
        self.last = Signal()

        # # #

        locked = Signal(name="locked")  # Allocated to input ``owner`` from head to tail.
        owner = Signal(n, name="owner")  # One-hot.
        self.rr = rr = RoundRobinComb(n)
        self.submodules += rr
        has_flit = Signal(name="has_flit")
        self.comb += [
            rr.request.eq(Cat(*requests)),
            If(
                locked,
                self.select.eq(owner),
                has_flit.eq((owner & Cat(*valids)) != 0),
            ).Else(
                self.select.eq(rr.grant),
                has_flit.eq(rr.request != 0),
            ),
            self.candidate.eq(has_flit & link.ready[vc]),
            rr.ce.eq(self.go & ~locked),
        ]
        self.sync += If(
            self.go,
            locked.eq(~self.last),
            If(~locked, owner.eq(rr.grant)),
        )


class _OutputPort(Module):
    """An output port: per-VC allocation, VC arbitration and the crossbar multiplexer.

    ``inputs``: list of ``(port, _InputPort)`` that may be routed to this output.
    ``want[vc][i]``: this output would send input ``i``'s flit on ``vc`` now; ``veto[vc][i]``
    (driven by the router): it may not, the input sends its other VC elsewhere this cycle;
    ``grants[vc][i]``: it does (the flit is popped).

    ``registered``: the flit chosen in a cycle (on the downstream ``ready`` of that cycle) goes
    through a register and is on ``link`` in the next cycle (see :class:`MeshRouter`).
    """

    def __init__(self, link, port, inputs, starvation_limit, registered=False):
        assert starvation_limit >= 1
        n = len(inputs)
        self.go = Signal(N_VCS)  # Flit sent on VC v this cycle (for counters).
        self.sources = [port for port, _ in inputs]

        # # #

        ovcs = []
        for vc in range(N_VCS):
            ovc = _OutputVC(
                link,
                vc,
                requests=[ip.vcs[vc].request[port] for _, ip in inputs],
                valids=[ip.vcs[vc].valid for _, ip in inputs],
            )
            ovcs.append(ovc)
        self.ovcs = ovcs
        self.submodules += ovcs

        # VC arbitration: priority to VC 1, one VC-0 grant after ``starvation_limit`` VC-1 grants
        # that made a competing VC 0 wait.
        starve = Signal(max=starvation_limit + 1, name="starve")
        starved = Signal(name="starved")
        choose1 = Signal(name="choose1")
        choose0 = Signal(name="choose0")
        c0, c1 = ovcs[0].candidate, ovcs[1].candidate
        self.comb += [
            starved.eq(starve >= starvation_limit),
            choose1.eq(c1 & ~(c0 & starved)),
            choose0.eq(c0 & ~choose1),
        ]
        self.want = [[Signal(name=f"want_vc{vc}_{i}") for i in range(n)] for vc in range(N_VCS)]
        self.veto = [[Signal(name=f"veto_vc{vc}_{i}") for i in range(n)] for vc in range(N_VCS)]
        self.grants = grants = [[Signal(name=f"grant_vc{vc}_{i}") for i in range(n)] for vc in range(N_VCS)]
        for vc, choose in enumerate([choose0, choose1]):
            for i in range(n):
                self.comb += [
                    self.want[vc][i].eq(choose & ovcs[vc].select[i]),
                    grants[vc][i].eq(self.want[vc][i] & ~self.veto[vc][i]),
                ]
        go = [Reduce("OR", grants[vc]) for vc in range(N_VCS)]
        self.comb += [
            ovcs[0].go.eq(go[0]),
            ovcs[1].go.eq(go[1]),
            self.go.eq(Cat(*go)),
        ]
        self.sync += [If(go[0], starve.eq(0)).Elif(go[1] & c0 & ~starved, starve.eq(starve + 1))]

        # Crossbar: AND-OR multiplexer over the inputs' flits (each input offers one), into the
        # link or into the output register.
        sent = [grants[0][i] | grants[1][i] for i in range(n)]
        flit = Record([f for f in link_layout() if f[0] != "ready"], name="flit")
        self.comb += [
            flit.valid.eq(go[0] | go[1]),
            flit.vc.eq(go[1]),
            flit.data.eq(
                Reduce("OR", [Replicate(g, len(ip.data)) & ip.data for g, (_, ip) in zip(sent, inputs)])
            ),
            flit.first.eq(Reduce("OR", [g & ip.first for g, (_, ip) in zip(sent, inputs)])),
            flit.last.eq(Reduce("OR", [g & ip.last for g, (_, ip) in zip(sent, inputs)])),
            ovcs[0].last.eq(flit.last),
            ovcs[1].last.eq(flit.last),
        ]
        fields = flit.connect(link)  # The forward fields.
        if registered:
            self.sync += fields
        else:
            self.comb += fields


# Router -------------------------------------------------------------------------------------------


class MeshRouter(LiteXModule):
    """5-port wormhole router at position ``(x, y)`` of a mesh (see the module docstring).

    Parameters:

    - ``x``, ``y``: coordinates of the router (its local port is tile ``y*X + x``): ints, or
      Signals for a router generated once for every position (in a tile module of its own,
      :mod:`soc.tile_block`), which then builds all its ports (the mesh ties off those at its
      edges; the same cycles, as no packet turns towards the outside of the mesh);
    - ``buffer_depth``: flits per input FIFO, one FIFO per input and VC (>= 2 for full rate);
    - ``starvation_limit``: VC-1 grants in a row after which a waiting VC-0 flit goes first;
    - ``mesh_x``, ``mesh_y``: size of the mesh, if known. Ports that would face the outside of
      the mesh are then not built (their input never accepts, their output never sends) and
      packets for destinations outside the mesh are dropped at the first router;
    - ``with_counters``: add ``flits[v]``, 32-bit counts of flits forwarded per VC (all outputs),
      and ``dropped``, a 16-bit count of dropped packets (wraps);
    - ``link_registers``: the outputs to the neighbouring routers (north, east, south, west) go
      through a register, and the inputs from them keep one spare entry per VC beyond
      ``buffer_depth`` (see below). The local ports, inside the tile, are never registered.

    Link registers. Between two routers the path of a hop (the sender's buffered head flit,
    its output allocation, the crossbar, the link, the receiver's route computation and buffer)
    crosses the wires between two tiles; on an 8-tile ECP5 build it was the critical path
    (26 ns, 22.6 of it routing). With ``link_registers`` the flit an output chooses in cycle
    ``t`` (on the downstream ``ready`` of cycle ``t``) is on the link in cycle ``t+1``: a hop
    costs two cycles instead of one, and no path crosses from one router into another but
    through a register, except ``ready``, which leaves a register of the receiver through one
    LUT. A flit is thus still in flight when ``ready`` goes low, so the receiver's ``ready`` is
    "fewer than ``buffer_depth`` flits held" and its buffer has one more entry for that flit:
    the link keeps one flit per cycle per VC at the default depth 2 (three entries per input VC,
    the spare entry in registers, :class:`gateware.fifo.RegisterFIFO`).

    Attributes: ``inputs`` and ``outputs``, dicts of :class:`Link` by port name (``"local"``,
    ``"north"``, ``"east"``, ``"south"``, ``"west"``); ``error`` (sticky: a packet was dropped).
    """

    def __init__(
        self,
        x,
        y,
        buffer_depth=2,
        starvation_limit=8,
        mesh_x=None,
        mesh_y=None,
        with_counters=False,
        link_registers=True,
    ):
        assert buffer_depth >= 1
        positioned = isinstance(x, int) and isinstance(y, int)
        assert not positioned or (0 <= x < MAX_MESH_DIM and 0 <= y < MAX_MESH_DIM)
        self.x, self.y = x, y
        self.inputs = {p: Link(name=f"{p}_in") for p in PORTS}
        self.outputs = {p: Link(name=f"{p}_out") for p in PORTS}
        self.error = Signal()

        # # #

        # Ports that exist: all of them, minus those facing outside a known mesh.
        present = []
        for i, p in enumerate(PORTS):
            dx, dy = PORT_OFFSETS[p]
            nx, ny = (x + dx, y + dy) if positioned else (0, 0)
            if (
                nx < 0
                or ny < 0
                or (mesh_x is not None and nx >= mesh_x)
                or (mesh_y is not None and ny >= mesh_y)
            ):
                continue
            present.append(i)

        # Input ports.
        input_ports = {}
        # Ports to and from the neighbouring routers, whose links are registered.
        neighbours = [i for i in present if i != LOCAL] if link_registers else []
        self.registered_outputs = [PORTS[o] for o in neighbours]
        for i in present:
            ip = _InputPort(
                self.inputs[PORTS[i]],
                x,
                y,
                i,
                buffer_depth,
                present,
                mesh_x,
                mesh_y,
                spare=int(i in neighbours),
            )
            setattr(self.submodules, f"in_{PORTS[i]}", ip)
            input_ports[i] = ip

        # Output ports, each fed by the inputs that may legally turn into it.
        output_ports = {}
        for o in present:
            sources = [(i, input_ports[i]) for i in present if o in LEGAL_TURNS[i]]
            op = _OutputPort(self.outputs[PORTS[o]], o, sources, starvation_limit, registered=o in neighbours)
            setattr(self.submodules, f"out_{PORTS[o]}", op)
            output_ports[o] = op

        # One flit per cycle leaves an input. When two outputs want both of its VCs in one cycle
        # (different outputs: an output sends one VC per cycle), the VCs take turns: the other
        # output sends nothing this cycle and the loser goes first at the next such conflict. A
        # VC thus only waits while the other VC of its input moves, never on a blocked one, and
        # the two VCs stay independent networks (deadlock freedom, docs/architecture.md).
        for i, ip in input_ports.items():
            users = [(op, op.sources.index(i)) for op in output_ports.values() if i in op.sources]
            want = [Reduce("OR", [op.want[vc][k] for op, k in users]) if users else 0 for vc in range(N_VCS)]
            conflict = Signal(name=f"conflict_{PORTS[i]}")
            vc0_turn = Signal(name=f"vc0_turn_{PORTS[i]}")
            self.comb += [
                conflict.eq(want[0] & want[1]),
                ip.send_vc1.eq(want[1] & ~(conflict & vc0_turn)),
            ]
            self.sync += If(conflict, vc0_turn.eq(~vc0_turn))
            for op, k in users:
                self.comb += [
                    op.veto[0][k].eq(conflict & ~vc0_turn),
                    op.veto[1][k].eq(conflict & vc0_turn),
                ]
            # Each input VC pops when the output allocated to its packet sends its flit.
            for vc, ivc in enumerate(ip.vcs):
                pops = [op.grants[vc][k] for op, k in users]
                self.comb += ivc.pop.eq(Reduce("OR", pops) if pops else 0)

        # Absent ports.
        for i, p in enumerate(PORTS):
            if i not in present:
                self.comb += [
                    self.inputs[p].ready.eq(0),
                    self.outputs[p].valid.eq(0),
                ]

        # Errors.
        drops = [ivc.dropped for ip in input_ports.values() for ivc in ip.vcs]
        self.sync += If(Reduce("OR", drops), self.error.eq(1))

        # Event counters (a 16-bit adder of 10 inputs is 7 % of the router on an FPGA).
        if with_counters:
            self.dropped = Signal(16)
            self.sync += self.dropped.eq(self.dropped + Reduce("ADD", drops))
            self.flits = [Signal(32, name=f"flits_vc{vc}") for vc in range(N_VCS)]
            for vc in range(N_VCS):
                sent = [op.go[vc] for op in output_ports.values()]
                self.sync += self.flits[vc].eq(self.flits[vc] + Reduce("ADD", sent))
