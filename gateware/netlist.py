#
# Netlist queries on Migen fragments: what reaches a signal through combinational logic.
#
"""Combinational cones of a Migen fragment.

The boards' timing rule (docs/architecture.md, Boards) is that nothing crossing the shared SoC
bus, or the wide block RAMs of the L2, closes a combinational loop back to where it started:
answers leave a module from its registers. :func:`combinational_cone` says which signals reach a
set of outputs without passing a register, so that tests can check the rule on the elaborated
module rather than on a place-and-route report.
"""

from migen import If, Case, Memory
from migen.fhdl.structure import _Assign
from migen.fhdl.tools import list_signals, list_targets


def combinational_cone(fragment, outputs):
    """Every signal that reaches one of ``outputs`` through combinational logic: the right-hand
    sides of the assignments to it and the conditions they sit under, through any number of
    combinational signals, and the address of a memory's asynchronous read port to its data.
    Registers (``sync`` targets) and synchronous read ports end a cone."""
    drivers = {}

    def walk(statements, conditions):
        for st in statements:
            if isinstance(st, _Assign):
                for target in list_targets(st):
                    drivers.setdefault(target, set()).update(list_signals(st.r) | conditions)
            elif isinstance(st, If):
                inner = conditions | list_signals(st.cond)
                walk(st.t, inner)
                walk(st.f, inner)
            elif isinstance(st, Case):
                inner = conditions | list_signals(st.test)
                for body in st.cases.values():
                    walk(body if isinstance(body, (list, tuple)) else [body], inner)
            elif isinstance(st, (list, tuple)):
                walk(st, conditions)

    walk(fragment.comb, frozenset())
    for special in fragment.specials:
        if isinstance(special, Memory):
            for port in special.ports:
                if port.async_read:
                    drivers.setdefault(port.dat_r, set()).update(list_signals(port.adr))
    cone, todo = set(), list(outputs)
    while todo:
        for d in drivers.get(todo.pop(), ()):
            if d not in cone:
                cone.add(d)
                todo.append(d)
    return cone
