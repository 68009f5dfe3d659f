"""The experiment framework: an experiment is data (its configurations, how a run is built, run and
parsed, its tables, plots, headline figures and checks); the framework does the rest once for all
of them: the shared arguments, the campaign (:mod:`scripts.experiments.campaign`), the capture,
the stamp (:mod:`scripts.experiments.stamp`) and the console table.

In the manner of pulp-platform/snitch_cluster's ``util/experiments`` (an experiment manager, one
module per experiment) and FireSim's workloads with their post-run hooks: a module of
``scripts/experiments/`` subclasses :class:`Experiment`, and ``python -m scripts.experiments
NAME`` (what ``make bench-*`` call) runs it.
"""

import argparse
import dataclasses
import json
import os
import sys
import time

from gateware.build import ROOT
from gateware.cpu import SIM_CPU_VARIANT
from soc.firmware import BACKENDS
from soc.mesh import MeshShapeError, mesh_shape
from scripts.capture import CaptureError, numbered_lines, parse_lines
from scripts.experiments import stamp as stamps
from scripts.results import RESULTS_DIR

#: Input classes of the benchmark programs (firmware/programs/, PARSEC's names).
INPUTS = ("test", "simsmall", "simmedium")

#: What a firmware run on the simulated SoC measures: the gateware, the SoC generator and its
#: harness, the bare-metal firmware (start-up, drivers, library, apps, programs).
MEASURES_SOC = ("gateware", "soc", "firmware")
#: The same under Zephyr: the Zephyr module besides.
MEASURES_ZEPHYR = MEASURES_SOC + ("zephyr-app",)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def label_record(event, **fields):
    """A record a run writes before its output in the capture, naming its configuration for the
    report (kept beside the framework's ``run`` record: captures made before it have only this)."""
    return "@subutai " + json.dumps({"event": event, **fields}, separators=(",", ":"))


def program_args(input_class, seed):
    """The command line of a benchmark program for an input class and seed."""
    return f"-i {input_class} -s {seed}"


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """One simulated SoC: what :func:`soc.simulation.build_model` builds. ``options``: its other
    keyword arguments as sorted (name, value) pairs (hashable, so a campaign builds it once)."""

    tiles: int
    cpu_variant: str = SIM_CPU_VARIANT
    mem_banks: "int | None" = None
    threads: int = 1
    options: tuple = ()

    @classmethod
    def of(cls, tiles, cpu_variant=SIM_CPU_VARIANT, mem_banks=None, threads=1, **options):
        return cls(tiles, cpu_variant, mem_banks, threads, tuple(sorted(options.items())))

    def build(self, log=log):
        from soc.simulation import build_model

        return build_model(
            *mesh_shape(self.tiles),
            self.cpu_variant,
            mem_banks=self.mem_banks,
            threads=self.threads,
            log=log,
            **dict(self.options),
        )

    def describe(self):
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "options"} | dict(self.options)


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of an experiment: its configuration (``label``, sorted (name, value) pairs: the
    capture's ``run`` record, the cache's key), what the progress line calls it, and its model."""

    label: tuple
    what: str
    model: "ModelConfig | None" = None

    @classmethod
    def of(cls, what, model=None, **label):
        return cls(tuple(sorted(label.items())), what, model)

    @property
    def config(self):
        return dict(self.label)


def split_runs(lines):
    """(label, lines) of every run of a capture: the lines after each ``run`` record."""
    out = []
    for _, line, record in numbered_lines(lines):
        # The framework's run record holds an object; a program's own "run" field does not.
        if record is not None and isinstance(record.get("run"), dict):
            out.append((record["run"], []))
        elif out:
            out[-1][1].append(line)
    return out


class RunFailed(RuntimeError):
    """A run that exited with a status its experiment does not accept."""


def run_image(model, image, what, max_cycles, exit_codes=(0,)):
    """Run an image on a model; its output lines, or :class:`RunFailed` (with the output's end)."""
    result = model.run(image, max_cycles=max_cycles)
    if result.exit_code not in exit_codes:
        raise RunFailed(
            f"{what} exited with {result.exit_code}:\n{result.output[-2000:]}{result.stderr[-1000:]}"
        )
    return result.output.splitlines()


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a positive number")
    return value


class Experiment:
    """One benchmark. A subclass sets the class attributes and implements :meth:`runs`,
    :meth:`execute` and :meth:`report`; the others have defaults."""

    #: Its name: ``python -m scripts.experiments NAME``, ``results/<name>.*``.
    name = ""
    #: What its figures are (the figures table's row of a refused result).
    title = ""
    #: The command users run (error messages, the figures table).
    command = ""
    #: The paths whose content its figures depend on (:mod:`scripts.experiments.stamp`).
    measures = MEASURES_SOC
    #: Shared options it takes: default SoC sizes (None: no --tiles), the smallest it accepts.
    tiles = None
    min_tiles = 1
    #: --backends (both PThreads backends by default), --input and --seed (benchmark programs),
    #: --os (bare metal or Zephyr on every tile: results named zephyr_<name>, measuring zephyr-app).
    backends = False
    runtimes = False
    inputs = False
    #: A run's limit in simulated cycles (the default :meth:`execute`).
    max_cycles = 200_000_000
    #: Runs one at a time whatever --jobs says (it measures the host, e.g. simulation speed).
    exclusive = False
    #: Runs are kept and reused by a sweep started again (:mod:`scripts.experiments.campaign`).
    cacheable = True
    #: Result names besides <name> that it writes (CSV files the figures read).
    results = ()

    # -- configuration ---------------------------------------------------------------------
    def add_arguments(self, parser):
        """Its own options."""

    def validate(self, args, error):
        """Check the options (``error(message)`` exits); called after the shared checks."""

    def result_name(self, args):
        """The name of its results for these options (results/<name>.*)."""
        return self.name

    def needs_zephyr(self, args):
        """Whether these options run Zephyr (its tree is checked before anything is built)."""
        return getattr(args, "os_name", None) == "zephyr"

    def prepare(self, args):
        """Work on the client before the runs (a host reference)."""

    def runs(self, args):
        """The runs, in the order of the capture."""
        raise NotImplementedError

    # -- one run (on a worker) -------------------------------------------------------------
    def image(self, run, model, args):
        """Build the run's image (a path, digested for the cache), or None."""
        return None

    def execute(self, run, model, image, args):
        """Run it; its output lines (``@subutai`` records and text)."""
        return run_image(model, image, run.what, self.max_cycles)

    def priority(self, run):
        """Runs of a higher priority start first: by default the largest models, so that the
        last runs of a sweep are short ones."""
        return run.model.tiles if run.model else 0

    # -- the results -----------------------------------------------------------------------
    def combine(self, lines, args):
        """The capture to report: by default the sweep's (``apps --append`` adds a saved one)."""
        return lines

    def report(self, lines, args, results_dir):
        """Write results/<result_name>.{csv,md,png} from a capture's lines; return (the console
        table, problems). Raises CaptureError on a capture it cannot read."""
        raise NotImplementedError

    def headlines(self, results):
        """The headline figures of its results: (figure, value) pairs, read through ``results``
        (a :class:`Results`)."""
        return []

    # -- reading its results ---------------------------------------------------------------
    def measures_of(self, result):
        """The paths results/<result>.* depend on (:attr:`measures`, with the Zephyr module for
        the results of a run under Zephyr)."""
        return MEASURES_ZEPHYR if self.runtimes and result.startswith("zephyr") else self.measures

    def command_of(self, result):
        """The command that writes results/<result>.* (a Zephyr result's is ``make zephyr-bench``)."""
        return "make zephyr-bench" if self.runtimes and result.startswith("zephyr") else self.command

    def owns(self, result):
        """Whether results/<result>.csv is one of this experiment's."""
        return result == self.name or result in self.results


class MissingResult(ValueError):
    """A result file that is missing or empty."""


class Results:
    """Reading an experiment's committed results for the figures: every CSV is refused unless its
    stamp measures what the working tree measures (:func:`scripts.experiments.stamp.check`)."""

    def __init__(self, experiment, results_dir=RESULTS_DIR):
        self.experiment = experiment
        self.dir = results_dir
        #: (result, refusal) of the optional results left out of the headlines as stale.
        self.refused = []

    def path(self, name):
        return os.path.join(self.dir, f"{name}.csv")

    def exists(self, name):
        return os.path.exists(self.path(name))

    def rows(self, name, required=True):
        """The rows of results/<name>.csv (dicts of text), checked fresh. A stale optional result
        (``required=False``: a part of a headline, such as Zephyr's beside bare metal's) gives no
        rows, its refusal kept in :attr:`refused`; a stale required one raises."""
        path = self.path(name)
        command = self.experiment.command_of(name)
        if not os.path.exists(path):
            if not required:
                return []
            raise MissingResult(f"{path} is missing: run `{command}`")
        stamp, rows = stamps.read_csv(path)
        shown = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
        try:
            stamps.check(stamp, self.experiment.measures_of(name), shown, command)
        except stamps.StaleResult as e:
            if required:
                raise
            self.refused.append((name, str(e)))
            return []
        if not rows and required:
            raise MissingResult(f"{path} has no rows: run `{command}`")
        return rows


# -- the command line ------------------------------------------------------------------------


def add_shared_arguments(parser, experiment):
    """The options every experiment shares, defined here once."""
    if experiment.tiles is not None:
        parser.add_argument(
            "--tiles",
            type=int,
            nargs="+",
            default=list(experiment.tiles),
            help=f"SoC sizes (tiles, {experiment.min_tiles} to 64; default "
            f"{' '.join(map(str, experiment.tiles))}).",
        )
    if experiment.backends:
        parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["swonly", "subutai"])
    if experiment.runtimes:
        parser.add_argument(
            "--os",
            choices=("baremetal", "zephyr"),
            default="baremetal",
            dest="os_name",
            help="bare-metal runtime (one thread per core) or Zephyr on every tile.",
        )
    if experiment.inputs:
        parser.add_argument("--input", choices=INPUTS, default="simsmall", help="input class.")
        parser.add_argument("--seed", type=int, default=1, help="seed of the generated inputs.")
    parser.add_argument("--results", default=RESULTS_DIR, help="output directory (default: results/).")
    from scripts.experiments.campaign import add_campaign_arguments

    add_campaign_arguments(parser)


def check_shared_arguments(args, experiment, error):
    # (An experiment without the shared --tiles may have one of its own, of another form.)
    for n in args.tiles if experiment.tiles is not None else []:
        try:
            mesh_shape(n)
        except MeshShapeError as e:
            error(str(e))
        if n < experiment.min_tiles:
            error(f"--tiles {n}: {experiment.name} needs at least {experiment.min_tiles} tiles")
    if getattr(args, "seed", 0) < 0:
        error("--seed must be >= 0")
    if experiment.needs_zephyr(args):
        from soc.zephyr import require_zephyr

        require_zephyr()


def parse_arguments(experiment, argv):
    parser = argparse.ArgumentParser(
        prog=f"python -m scripts.experiments {experiment.name}",
        description=(sys.modules[type(experiment).__module__].__doc__ or "").strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    experiment.add_arguments(parser)
    add_shared_arguments(parser, experiment)
    args = parser.parse_args(argv)
    check_shared_arguments(args, experiment, parser.error)
    experiment.validate(args, parser.error)
    return args


def options_of(args):
    """The arguments that shape the results (not where they go or how they are dispatched)."""
    from scripts.experiments.campaign import CAMPAIGN_OPTIONS

    return {k: v for k, v in sorted(vars(args).items()) if k not in CAMPAIGN_OPTIONS and k != "results"}


def write_report(experiment, lines, args, results_dir, stamp):
    """The report of a capture, every CSV it wrote stamped; (table, problems)."""
    os.makedirs(results_dir, exist_ok=True)
    before = {f: os.stat(os.path.join(results_dir, f)).st_mtime_ns for f in os.listdir(results_dir)}
    text, problems = experiment.report(lines, args, results_dir)
    for f in os.listdir(results_dir):
        path = os.path.join(results_dir, f)
        if stamp is not None and f.endswith(".csv") and before.get(f) != os.stat(path).st_mtime_ns:
            stamps.stamp_csv(path, stamp)
    return text, problems


def save_capture(name, lines, results_dir):
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{name}_capture.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def capture(experiment, args):
    """A sweep of ``experiment`` with ``args``: (its capture's lines, its stamp)."""
    from scripts.experiments.campaign import sweep

    experiment.prepare(args)
    runs = experiment.runs(args)
    models = sorted({json.dumps(r.model.describe(), sort_keys=True) for r in runs if r.model})
    name = experiment.result_name(args)
    stamp = stamps.make_stamp(experiment, name, options_of(args), [json.loads(m) for m in models])
    # A run is kept by what it runs: its configuration, its image and its model's hardware
    # (campaign.run_key): a change elsewhere that leaves them as they were keeps the run.
    outcomes = sweep(experiment, runs, args)
    lines = [stamps.stamp_record(stamp)]
    for run, outcome in zip(runs, outcomes):
        lines.append("@subutai " + json.dumps({"run": dict(run.config, image=outcome.image)}, sort_keys=True))
        lines += outcome.lines
    return lines, stamp


def rerun(name, argv):
    """The capture lines of a sweep run anew in this process, one run after the other, writing no
    results: what the tests that reproduce a committed result call."""
    from scripts.experiments import load

    experiment = load(name)
    return capture(experiment, parse_arguments(experiment, [*argv, "--serial", "--rerun"]))[0]


def run_experiment(experiment, argv):
    """``python -m scripts.experiments NAME [options]``: the sweep, its capture, its report."""
    from soc.simulation import stop_runs_on_sigterm

    args = parse_arguments(experiment, argv)
    # SIGTERM stops the running models with the sweep (not left computing on).
    stop_runs_on_sigterm()
    name = experiment.result_name(args)
    start = time.time()
    try:
        lines, stamp = capture(experiment, args)
        lines = experiment.combine(lines, args)
        path = save_capture(name, lines, args.results)
        text, problems = write_report(experiment, lines, args, args.results, stamp)
    except (RunFailed, RuntimeError, ValueError) as e:
        raise SystemExit(f"error: {e}")
    print(text)
    print(f"\nwrote {args.results}/{name}.* and {path} ({time.time() - start:.0f} s)")
    if problems:
        raise SystemExit("error: " + "\n  ".join(problems))


def report_capture(experiment, argv):
    """``python -m scripts.experiments report NAME CAPTURE``: the report of a saved capture (a
    board's, or a sweep's), with the options the sweep had."""
    from scripts.capture import add_source_arguments, read_capture

    parser = argparse.ArgumentParser(prog=f"python -m scripts.experiments report {experiment.name}")
    add_source_arguments(parser)
    experiment.add_arguments(parser)
    add_shared_arguments(parser, experiment)
    args = parser.parse_args(argv)
    try:
        lines = read_capture(args.source, args.baud, args.timeout)
        stamp = stamps.capture_stamp(parse_lines(lines))
        text, problems = write_report(experiment, lines, args, args.results, stamp)
    except (CaptureError, OSError) as e:
        parser.exit(2, f"{parser.prog}: error: {e}\n")
    print(text)
    if stamp is None:
        print("note: the capture has no stamp: its CSVs carry none", file=sys.stderr)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)
