"""The linear grouping of combinatorial statements (gateware/fhdl_speed.py) against Migen's own:
the same groups in the same order on random statement lists (fixed seed), and byte-identical
Verilog for the NoC's router and a small mesh."""

import random

from migen import Module, Signal, If
from migen.fhdl import tools as migen_tools
from migen.fhdl.verilog import convert

from gateware import fhdl_speed
from gateware.noc.mesh import Mesh
from gateware.noc.router import MeshRouter


def normalized(groups):
    return [(frozenset(targets), [id(s) for s in stmts]) for targets, stmts in groups]


def test_groups_equal_migens_on_random_statements():
    rng = random.Random(55)
    for trial in range(200):
        sigs = [Signal(name=f"s{i}") for i in range(rng.randint(1, 40))]
        stmts = []
        for _ in range(rng.randint(0, 120)):
            kind = rng.random()
            a, b, c = (rng.choice(sigs) for _ in range(3))
            if kind < 0.6:
                stmts.append(a.eq(b))
            elif kind < 0.9:
                stmts.append(If(b, a.eq(1), c.eq(0)))
            else:
                stmts.append([a.eq(c), If(a, b.eq(1))])  # Nested lists are flattened.
        got = fhdl_speed.group_by_targets(stmts)
        want = migen_tools.group_by_targets(stmts)
        assert normalized(got) == normalized(want), trial


def verilog_of(make, fast):
    saved = {}
    if fast:
        import importlib

        for name in ("migen.fhdl.tools", "migen.fhdl.verilog", "litex.gen.fhdl.verilog"):
            m = importlib.import_module(name)
            saved[m] = m.group_by_targets
        fhdl_speed.install()
    try:
        top = make()
        return str(convert(top, ios=top.ios, name="top"))
    finally:
        for m, f in saved.items():
            m.group_by_targets = f


class RouterTop(Module):
    def __init__(self):
        self.submodules.router = MeshRouter(1, 1, mesh_x=3, mesh_y=3)
        links = list(self.router.inputs.values()) + list(self.router.outputs.values())
        self.ios = {s for link in links for s in link.flatten()} | {self.router.error}


class MeshTop(Module):
    def __init__(self):
        self.submodules.mesh = Mesh(3, 2)
        links = self.mesh.local_inputs + self.mesh.local_outputs
        self.ios = {s for link in links for s in link.flatten()} | {self.mesh.error}


def test_verilog_is_byte_identical():
    for make in (RouterTop, MeshTop):
        assert verilog_of(make, True) == verilog_of(make, False), make.__name__
