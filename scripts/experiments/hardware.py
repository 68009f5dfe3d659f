"""What a model computes: the digest of what Verilator compiles, not of the sources that made it.

The simulation is cycle-accurate and deterministic, so a run's output is a function of its image
and of the hardware its model was generated as: the Verilog (and the memories' initial contents)
and the harness that drives it. The SoC generator's sources (``gateware/``, ``soc/``) hold much
else (the Zephyr and firmware build helpers, the board flows, the partitioner): an edit there
that generates the same hardware leaves every run's output as it was. The campaign keeps runs by
this digest (``campaign.run_key``) and ``restamp`` proves a stale result by it.

Only the standard library here: ``restamp`` runs these functions in an older checkout's tree.
"""

import hashlib
import os
import re

#: Generated files of a model's gateware directory that Verilator reads or the run loads: the
#: Verilog, the memories' initial contents and the hierarchy blocks' configuration.
GENERATED = (".v", ".init", ".vlt")
#: The harness files a model is compiled with: a single model's, and a cut model's partitions'.
SINGLE_HARNESS = ("Makefile", "main.cpp")
CUT_HARNESS = SINGLE_HARNESS + ("partition.cpp", "partition.mk")


def canonical_verilog(text):
    """The Verilog ``text`` with its modules' items (an always block, an assign, a declaration,
    an instance: a line at the margin and what follows it, indented or the block's closing
    ``end``) in sorted order. Migen orders some of them by where Python allocated its objects (the
    lowered specials come from a set), so the same design may come out in another order from
    another process; the order of concurrent items means nothing to the hardware, and each
    item's text is kept whole."""
    modules, items, item = [], [], []
    for line in text.splitlines() + ["endmodule"]:
        ends = line.startswith("endmodule")
        if (ends or (line and not line[0].isspace() and not re.match(r"end(case)?\b", line))) and item:
            items.append("\n".join(item))
            item = []
        if ends:
            modules.append("\n".join(sorted(items)))
            items = []
        else:
            item.append(line)
    return "\nendmodule\n".join(modules)


def hardware_digest(gateware_dir, output_dir, harness_dir, harness_files):
    """sha256 of a model's generated files in ``gateware_dir`` and of ``harness_files`` of
    ``harness_dir``: the model's own directory (``output_dir``) blanked out of them, the
    generators' date lines and LiteX's "sha1" line (the commit of the checkout LiteX is
    installed in, so every commit's) dropped, the Verilog in :func:`canonical_verilog` order."""
    files = [os.path.join(gateware_dir, f) for f in sorted(os.listdir(gateware_dir)) if f.endswith(GENERATED)]
    files += [os.path.join(harness_dir, f) for f in harness_files]
    h = hashlib.sha256()
    for path in files:
        with open(path, errors="replace") as f:
            text = f.read().replace(os.path.abspath(output_dir), "OUT")
        text = re.sub(r"(?m)^//.*(Auto-Generated|LiteX sha1|\d{4}-\d{2}-\d{2}).*$", "", text)
        if path.endswith(".v"):
            text = canonical_verilog(text)
        h.update(os.path.basename(path).encode() + b"\0" + text.encode())
    return h.hexdigest()


def model_digest(model):
    """The hardware digest of a built model (:class:`soc.simulation.SimModel`), with the build
    parameters that reach the compiled model (its mesh, memories, timeouts; not the sources'
    digest, which is what this replaces)."""
    import json

    from soc.simulation import HARNESS_DIR

    with open(model.stamp) as f:
        params = {k: v for k, v in json.load(f).items() if k != "digest"}
    harness = CUT_HARNESS if model.partitions > 1 else SINGLE_HARNESS
    digest = hardware_digest(model.gateware_dir, model.output_dir, HARNESS_DIR, harness)
    return hashlib.sha256((digest + json.dumps(params, sort_keys=True)).encode()).hexdigest()
