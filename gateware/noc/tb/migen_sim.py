#
# Cycle-accurate drivers for one MeshRouter in Migen's simulator (single-router corner cases).
#
"""Drive a :class:`MeshRouter` with Migen's ``run_simulation``.

``simulate_router(router, sends, ready, cycles)``:

- ``sends``: ``{port: [(vc, [words...], earliest_cycle), ...]}`` packets offered at the input
  ``port``, in order, one flit at a time, each flit held until accepted (the plain way of driving a
  link: ``valid`` is set without looking at ``ready``);
- ``ready``: ``{port: f(cycle) -> ready bits}`` for the outputs (default: always ready);
- returns ``(deliveries, injections)``: ``deliveries`` lists ``(cycle, port, vc, first, last,
  data)`` of every flit leaving an output, ``injections`` lists ``(cycle, port, vc, first,
  data)`` of every flit entering an input. Cycle numbers are those of the transfer.
- ``extra``: more generators to run alongside (e.g. to read status signals).

Links between routers are registered (``router.registered_outputs``, see
:class:`gateware.noc.router.MeshRouter`): the sender offers in cycle ``c`` a flit it chose on the
``ready`` of cycle ``c - 1``, and the receiver takes every flit offered. The sink of a registered
output takes it so (and fails if a flit comes that ``ready`` did not allow); the driver of an
input from a neighbour (the same port names) sends so.
"""

from migen import run_simulation, passive


def simulate_router(router, sends, ready=None, cycles=100, extra=()):
    return simulate_links(
        router,
        router.inputs,
        router.outputs,
        sends,
        ready,
        cycles,
        extra,
        registered=router.registered_outputs,
    )  # The same ports in and out.


def simulate_links(dut, inputs, outputs, sends, ready=None, cycles=100, extra=(), registered=()):
    """Like :func:`simulate_router` for any module: ``inputs``/``outputs`` map names to links
    (e.g. ``dict(enumerate(mesh.local_inputs))``); ``registered``: the ports whose links are
    registered (outputs and inputs)."""
    ready = ready or {}
    deliveries, injections = [], []

    def driver(port, packets):
        link = inputs[port]
        flits = []
        for vc, words, earliest in packets:
            for k, w in enumerate(words):
                flits.append((vc, k == 0, k == len(words) - 1, w, earliest))
        # Each loop iteration runs at a clock edge: it reads the values of the cycle that this
        # edge ends (``cycle - 1``) and writes those of the cycle it starts (``cycle``).
        i, cycle = 0, 0
        offered = False
        while (i < len(flits) or offered) and cycle < cycles:  # Never outlive the run.
            ready = yield link.ready  # Of the cycle this edge ends.
            if offered and (port in registered or (ready >> (yield link.vc)) & 1):
                injections.append((cycle - 1, port, (yield link.vc), (yield link.first), (yield link.data)))
                i += 1
            offered = False
            # A registered sender offers only what the last cycle's ready allowed.
            allowed = port not in registered or (cycle > 0 and i < len(flits) and (ready >> flits[i][0]) & 1)
            if i < len(flits) and flits[i][4] <= cycle and allowed:
                vc, first, last, w, _ = flits[i]
                yield link.valid.eq(1)
                yield link.vc.eq(vc)
                yield link.first.eq(first)
                yield link.last.eq(last)
                yield link.data.eq(w)
                offered = True
            else:
                yield link.valid.eq(0)
            yield
            cycle += 1
        yield link.valid.eq(0)

    @passive
    def sink(port):
        link = outputs[port]
        f = ready.get(port, lambda c: 3)
        cycle = 0
        yield link.ready.eq(f(0))
        while True:
            yield
            if (yield link.valid):
                vc = yield link.vc
                if port in registered:
                    allowed = (f(cycle - 1) >> vc) & 1 if cycle > 0 else 0
                    if not allowed:
                        raise AssertionError(
                            f"registered output {port} sent a flit on VC {vc} "
                            f"in cycle {cycle} that ready did not allow in cycle {cycle - 1}"
                        )
                else:
                    allowed = ((yield link.ready) >> vc) & 1
                if allowed:
                    deliveries.append(
                        (cycle, port, vc, (yield link.first), (yield link.last), (yield link.data))
                    )
            cycle += 1
            yield link.ready.eq(f(cycle))

    def timer():
        for _ in range(cycles):
            yield

    gens = [driver(p, pk) for p, pk in sends.items()]
    gens += [sink(p) for p in outputs]
    gens.append(timer())
    gens += list(extra)
    run_simulation(dut, gens)
    return deliveries, injections
