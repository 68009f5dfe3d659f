"""A stale result whose every image is what the tree builds now, stamped fresh without a rerun.

The simulation is deterministic: a run's output is a function of its model (the gateware and the
SoC generator) and its image. When the sources an experiment measures changed but neither the
model's sources nor any run's image did (a library's code moved between files, a comment, a
header that no image includes), the committed result is what a rerun would give. ``python -m
scripts.experiments restamp results/<name>_capture.txt`` proves that run by run and stamps the
result anew:

1. the capture's stamp must be verifiable: its measured files were those of its commit (the
   commit's digest, by the stamp's rule, is the stamp's);
2. the model must be that commit's: its sources (``gateware``, ``soc``) unchanged, or else every
   model the runs use, generated from the commit's tree and from this one, the same hardware (the
   generated Verilog, dates and paths aside, and the harness's sources: what Verilator compiles);
3. the experiment's runs for the stamp's arguments must be the capture's, and every run's image,
   built from the tree now, must have the digest its ``run`` record holds (a run without an image,
   an RTL testbench's, measures the model alone).

Then the report is written again from the same capture under the new stamp, which records the
stamp it replaces (``restamped``). Anything else is refused with the reason: rerun the sweep.
"""

import argparse
import os
import subprocess
import sys
import tempfile

from gateware.build import ROOT
from scripts.capture import CaptureError, parse_lines, read_capture
from scripts.experiments import hardware, load
from scripts.experiments import stamp as stamps
from scripts.experiments.framework import parse_arguments, save_capture, split_runs, write_report

MODEL_SOURCES = stamps.MODEL_SOURCES


class Unprovable(RuntimeError):
    """A result that cannot be shown to be what the tree gives now (the message says why)."""


def restamp(path, log=print, netlists=None):
    """Stamp the result of the capture at ``path`` fresh if its images are the tree's; its new
    stamp, or None when it was fresh already. Raises :class:`Unprovable`. ``netlists``: the
    hardware digests generated so far, by (commit, or None for the tree, and model), shared by
    the captures restamped together (their models are mostly the same)."""
    lines = read_capture(path)
    old = stamps.capture_stamp(parse_lines(lines))
    if old is None or stamps.capture_stamp(parse_lines(lines[:1])) is None:
        raise Unprovable(f"{path} does not begin with a stamp: rerun its sweep")
    experiment = load(old["experiment"])
    args = parse_arguments(experiment, ["--serial"])
    vars(args).update(old["args"], results=os.path.dirname(os.path.abspath(path)))
    name = experiment.result_name(args)
    measures = experiment.measures_of(name)
    try:
        stamps.check(old, measures, path, experiment.command_of(name))
        return None
    except stamps.StaleResult:
        pass
    commit = old.get("commit")
    if not stamps.made_from_commit(old, measures):
        raise Unprovable(f"{path} was made from files its commit does not hold: rerun its sweep")
    experiment.prepare(args)
    runs = experiment.runs(args)
    if stamps.sources_digest(MODEL_SOURCES, commit) != stamps.sources_digest(MODEL_SOURCES):
        same_hardware(commit, {run.model for run in runs if run.model}, log, netlists)
    recorded = split_runs(lines)
    if [r.config for r in runs] != [
        {k: v for k, v in label.items() if k != "image"} for label, _ in recorded
    ]:
        raise Unprovable(f"{path} does not hold the runs its arguments give now: rerun its sweep")
    from scripts.experiments.campaign import _digest

    for run, (label, _) in zip(runs, recorded):
        model = run.model.build(log=lambda msg: None) if run.model else None
        image = experiment.image(run, model, args)
        # A run without an image (an RTL testbench's) measures the model alone, which is unchanged.
        if _digest(image) != label.get("image"):
            raise Unprovable(f"{run.what}: its image is not the one the capture ran: rerun its sweep")
        log(f"  {run.what}: " + ("the same image" if image else "the model alone"))
    new = stamps.make_stamp(experiment, name, old["args"], old["models"])
    new["restamped"] = {"commit": commit, "sources": old["sources"], "images": len(runs)}
    lines = [stamps.stamp_record(new)] + lines[1:]  # the sweep's stamp is its capture's first line
    save_capture(name, lines, args.results)
    _, problems = write_report(experiment, lines, args, args.results, new)
    if problems:
        raise Unprovable("the report finds problems: " + "; ".join(problems))
    return new


def netlist(tree, model):
    """The digest of a model's hardware generated from the sources at ``tree``
    (:func:`hardware.netlist`); :class:`Unprovable` if it cannot be generated."""
    try:
        return hardware.netlist(tree, model)
    except hardware.HardwareUnknown as e:
        raise Unprovable(str(e)) from None


def same_hardware(commit, models, log=print, netlists=None):
    """Raises :class:`Unprovable` unless every model, generated from ``commit``'s tree and from
    this one, is the same hardware (the model's sources changed, but maybe not what they make).
    ``netlists`` (see :func:`restamp`) holds the digests generated already and gets the new ones."""
    netlists = {} if netlists is None else netlists
    tree = None
    git = ["git", "-C", ROOT]
    try:
        for model in sorted(models, key=lambda m: (m.tiles, repr(m))):
            if (commit, model) not in netlists:
                if tree is None:
                    tree = tempfile.mkdtemp(prefix="subutai-restamp-")
                    subprocess.run(
                        git + ["worktree", "add", "--detach", tree, commit], check=True, capture_output=True
                    )
                netlists[(commit, model)] = netlist(tree, model)
            if (None, model) not in netlists:
                netlists[(None, model)] = netlist(ROOT, model)
            if netlists[(commit, model)] != netlists[(None, model)]:
                raise Unprovable(
                    f"the {model.tiles}-tile model is not the hardware of {commit[:10]}: rerun its sweep"
                )
            log(f"  the {model.tiles}-tile model: the hardware of {commit[:10]}")
    finally:
        if tree is not None:
            subprocess.run(git + ["worktree", "remove", "--force", tree], capture_output=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m scripts.experiments restamp", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("captures", nargs="+", metavar="CAPTURE", help="results/<name>_capture.txt")
    status = 0
    netlists = {}
    for path in parser.parse_args(argv).captures:
        try:
            new = restamp(path, netlists=netlists)
            print(
                f"{path}: " + ("fresh already" if new is None else f"stamped fresh at {new['commit'][:10]}")
            )
        except (Unprovable, CaptureError, OSError) as e:
            print(f"{path}: not restamped: {e}", file=sys.stderr)
            status = 1
    return status
