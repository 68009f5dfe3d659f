"""What a model computes: the digest of what Verilator compiles, not of the sources that made it.

The simulation is cycle-accurate and deterministic, so a run's output is a function of its image
and of the hardware its model was generated as: the Verilog (and the memories' initial contents)
and the harness that drives it. The SoC generator's sources (``gateware/``, ``soc/``) hold much
else (the Zephyr and firmware build helpers, the board flows, the partitioner): an edit there
that generates the same hardware leaves every run's output as it was. The campaign keeps runs by
this digest (``campaign.run_key``) and ``restamp`` proves a stale result by it.

``canonical_verilog`` and ``hardware_digest`` use only the standard library: the generation
script runs them in an older checkout's tree (``restamp``).
"""

import hashlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile

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


class HardwareUnknown(RuntimeError):
    """A model whose hardware could not be generated (the message says why)."""


#: Generates a model's hardware from the tree it runs in (build_model() with Verilator left out)
#: and prints the digest of what Verilator would compile: the Verilog, dates and the output
#: directory blanked, and the harness's sources.
NETLIST_SCRIPT = (
    r"""
import hashlib, json, os, re, sys
import soc.simulation as sim
args, out = json.loads(sys.argv[1]), sys.argv[2]
GENERATED = GENERATED_FILES

CANONICAL_VERILOG
HARDWARE_DIGEST

def digest(soc, model, knobs, **_):
    from litex.soc.integration.builder import Builder
    Builder(soc, output_dir=model.output_dir, compile_software=False, compile_gateware=False,
            csr_json=model.csr_json).build(run=False, build_name="sim")
    block = getattr(soc, "tile_block", None)
    if block is not None:
        block.write(soc.platform, model.gateware_dir)
    # The single model's harness (a cut model's, partition.cpp and partition.mk, is not its).
    print("netlist", hardware_digest(model.gateware_dir, out, sim.HARNESS_DIR, SINGLE_HARNESS))
    raise SystemExit(0)

sim.verilate = digest
sim.quiet_litex()
sim.build_model(*args.pop("mesh"), output_dir=out, force=True, log=lambda m: None, **args)
""".replace("GENERATED_FILES", repr(GENERATED))
    .replace("SINGLE_HARNESS", repr(SINGLE_HARNESS))
    .replace("CANONICAL_VERILOG", inspect.getsource(canonical_verilog))
    .replace("HARDWARE_DIGEST", inspect.getsource(hardware_digest))
)


def model_arguments(model):
    """build_model()'s arguments of a model of the runs."""
    from soc.mesh import mesh_shape

    return dict(
        mesh=list(mesh_shape(model.tiles)),
        cpu_variant=model.cpu_variant,
        mem_banks=model.mem_banks,
        threads=model.threads,
        **dict(model.options),
    )


def netlist(tree, model):
    """The digest of a model's hardware generated from the sources at ``tree``."""
    with tempfile.TemporaryDirectory(prefix="subutai-netlist-") as out:
        proc = subprocess.run(
            [sys.executable, "-c", NETLIST_SCRIPT, json.dumps(model_arguments(model)), out],
            cwd=tree,
            env=dict(os.environ, PYTHONPATH=tree),
            capture_output=True,
            text=True,
        )
    found = re.search(r"^netlist ([0-9a-f]{64})$", proc.stdout, re.M)
    if proc.returncode != 0 or not found:
        raise HardwareUnknown(f"cannot generate the {model.tiles}-tile model at {tree}: {proc.stderr[-500:]}")
    return found.group(1)


#: Digests of this process, by model configuration: each generates once per process.
_DIGESTS = {}


def model_digest(config):
    """The hardware digest of a model configuration (:class:`framework.ModelConfig`) as this
    tree generates it, with the build parameters that reach the compiled model: what the model a
    campaign built from this tree computes. Generated, not read from the model's directory: the
    variants of a model (a hierarchy of blocks, partitions) share that directory and each writes
    its own Verilog there."""
    if config not in _DIGESTS:
        from gateware.build import ROOT

        digest = netlist(ROOT, config)
        _DIGESTS[config] = hashlib.sha256(
            (digest + json.dumps(model_arguments(config), sort_keys=True)).encode()
        ).hexdigest()
    return _DIGESTS[config]
