#
# Verilog generation of large SoCs in linear time: Migen's grouping of combinatorial statements
# by their targets, rewritten.
#
"""A linear-time :func:`migen.fhdl.tools.group_by_targets`.

Migen groups a module's combinatorial statements into ``always`` blocks by the signals they
assign: two statements that share a target land in one block. Its implementation rebuilds the
list of groups whenever a statement's targets were seen before, which makes it quadratic in the
number of statements; LiteX's Verilog back end calls it three times on the flattened SoC. At 64
tiles (the paper's machine) that took more than 40 minutes of a 3 GiB Python before any Verilog
was written; 16 tiles still spend most of their generation there.

:func:`group_by_targets` returns the same groups, in the same order, with the same statements in
each (so the Verilog is byte-identical): a union-find over the groups, each new statement
starting a group that absorbs every earlier group with one of its targets. Migen's version
appends a merged group at the end of its list, so its groups come out ordered by the last
statement each received; here a group keeps that statement's index and the groups are sorted by
it. :func:`install` puts it in place of Migen's in the modules that call it.
"""

import importlib

from migen.fhdl.tools import flat_iteration, list_targets


def group_by_targets(sl):
    """Groups of ``sl``'s statements that share targets: ``[(targets, statements)]``, statements
    in program order, groups in the order of their last statement (as Migen's)."""
    parent = []  # Group -> the group it was merged into (itself for a live group).
    targets_of = []  # Live group -> its targets.
    stmts_of = []  # Live group -> [(order, statement)].
    last_of = []  # Live group -> order of its last statement.
    owner = {}  # Signal -> a group that assigns it (follow parent to the live one).

    def find(g):
        root = g
        while parent[root] != root:
            root = parent[root]
        while parent[g] != root:
            parent[g], g = root, parent[g]
        return root

    for order, stmt in enumerate(flat_iteration(sl)):
        targets = set(list_targets(stmt))
        roots = {find(owner[t]) for t in targets if t in owner}
        # The largest group found absorbs the others and the new statement (union by size).
        g = max(roots, key=lambda r: len(stmts_of[r]), default=None)
        if g is None:
            g = len(parent)
            parent.append(g)
            targets_of.append(targets)
            stmts_of.append([(order, stmt)])
            last_of.append(order)
        else:
            for r in roots - {g}:
                parent[r] = g
                targets_of[g] |= targets_of[r]
                stmts_of[g] += stmts_of[r]
                targets_of[r] = stmts_of[r] = None
            targets_of[g] |= targets
            stmts_of[g].append((order, stmt))
            last_of[g] = order
        for t in targets:
            owner[t] = g
    live = sorted((g for g in range(len(parent)) if parent[g] == g), key=lambda g: last_of[g])
    return [(targets_of[g], [s for _, s in sorted(stmts_of[g], key=lambda x: x[0])]) for g in live]


def install():
    """Use :func:`group_by_targets` wherever Migen's is called (Migen's and LiteX's Verilog
    back ends imported it by name)."""
    # By name: litex.gen re-exports Migen's fhdl package, so the dotted attribute
    # litex.gen.fhdl.verilog would be Migen's module, not LiteX's.
    for name in ("migen.fhdl.tools", "migen.fhdl.verilog", "litex.gen.fhdl.verilog"):
        module = importlib.import_module(name)
        if hasattr(module, "group_by_targets"):
            module.group_by_targets = group_by_targets
