"""Thread switch benchmark (make bench-switch): firmware/apps/switchbench on one core of a 2-tile SoC.

What handing a core from one thread to another costs, bare metal (the user-level threads of
firmware/port/baremetal/ult.c, Seed 003's hybrid thread library) beside Zephyr (its kernel threads,
when a Zephyr tree is set up: ZEPHYR_BASE), both PThreads backends: sched_yield() among 2 and 8
threads of one core (cycles per yield, the switch and the data-cache invalidation the visibility
rule asks included; bare metal also without it, EXTRA_CFLAGS=-DSUBUTAI_PTHREAD_YIELD_INVALIDATES=0,
to show what it costs, and without it with every context saved and restored twice,
-DSUBUTAI_ULT_SWITCH_TWICE=1: what that adds is the context switch's own cost, reported as a row of
its own), and a mutex-and-condition ping-pong between two threads of one core (cycles per turn). Results go to results/switch.{csv,md,png}; the whole capture to
results/switch_capture.txt.

Usage: python -m scripts.experiments switch [--os baremetal zephyr] [--jobs N]
"""

import os

from scripts.capture import CaptureError, program_records
from scripts.experiments.framework import MEASURES_ZEPHYR, Experiment, ModelConfig, Run, run_image
from scripts.results import columns, RESULTS_DIR, console_table, new_figure, save_figure, save_table

BACKENDS = ("swonly", "subutai")
TILES = 2
MAX_CYCLES = 50_000_000
NO_INVALIDATION = "-DSUBUTAI_PTHREAD_YIELD_INVALIDATES=0"
FLAGS = {"": "", "noinv": NO_INVALIDATION, "twice": NO_INVALIDATION + " -DSUBUTAI_ULT_SWITCH_TWICE=1"}
# (os, backend, variant): what each run is called in the table.
VARIANTS = {
    "": "",
    "noinv": " (sched_yield without its invalidation)",
    "twice": " (without the invalidation, each context saved and restored twice)",
}
# The row made of two runs: twice minus noinv, the context switch alone (ult_switch.S).
SWITCH_ALONE = "bare metal, the context switch alone (ult_switch.S: twice minus once)"


def configs(oses):
    """The runs: every (os, backend), and bare metal's Subutai backend without the invalidation."""
    runs = [(o, b, "") for o in oses for b in BACKENDS]
    if "baremetal" in oses:
        runs += [("baremetal", "subutai", "noinv"), ("baremetal", "subutai", "twice")]
    return runs


class Switch(Experiment):
    name = "switch"
    title = "switching threads on one core (`switchbench`), cycles"
    command = "make bench-switch"
    # Its table has Zephyr's rows beside bare metal's.
    measures = MEASURES_ZEPHYR

    def add_arguments(self, parser):
        parser.add_argument(
            "--os",
            dest="oses",
            nargs="+",
            choices=("baremetal", "zephyr"),
            default=["baremetal", "zephyr"] if os.environ.get("ZEPHYR_BASE") else ["baremetal"],
            help="Runtimes (default: bare metal, and Zephyr when ZEPHYR_BASE is set).",
        )

    def needs_zephyr(self, args):
        return "zephyr" in args.oses

    def runs(self, args):
        return [
            Run.of(f"switchbench, {b}, {o}{VARIANTS[v]}", ModelConfig.of(TILES), os=o, backend=b, variant=v)
            for o, b, v in configs(args.oses)
        ]

    def image(self, run, model, args):
        c = run.config
        if c["os"] == "zephyr":
            from soc.zephyr import build_app

            out = os.path.join(model.output_dir, "zephyr", f"switchbench-{c['backend']}")
            return build_app(model, "program", c["backend"], "switchbench", out_dir=out)
        suffix = f"-{c['variant']}" if c["variant"] else ""
        return model.build_firmware(
            "switchbench",
            backend=c["backend"],
            extra_cflags=FLAGS[c["variant"]],
            out_dir=os.path.join(model.output_dir, "firmware", f"switchbench-{c['backend']}{suffix}"),
        )

    def execute(self, run, model, image, args):
        c = run.config
        return [
            line.replace('{"program"', f'{{"os":"{c["os"]}","variant":"{c["variant"]}","program"', 1)
            for line in run_image(model, image, run.what, MAX_CYCLES)
        ]

    def report(self, lines, args, results_dir):
        return report(measurements(lines), results_dir), []

    def headlines(self, results):
        parts = [
            f"{r['runtime']}, {r['backend']}: yield {r['yield, 2 threads (cycles)']} / "
            f"{r['yield, 8 threads (cycles)']} (2 / 8 threads), handoff {r['handoff (cycles/turn)']}"
            for r in results.rows("switch")
        ]
        return [("switching threads on one core (`switchbench`), cycles", "; ".join(parts), self.command)]


def measurements(lines):
    """{(os, backend, variant): {(what, threads): cycles}} of a capture."""
    table = {}
    for r in program_records(lines, "switchbench", ("os", "variant", "what", "threads", "cycles")):
        table.setdefault((r["os"], r.get("backend", ""), r["variant"]), {})[(r["what"], r["threads"])] = r[
            "cycles"
        ]
    return table


COLUMNS = (("yield", 2), ("yield", 8), ("handoff", 2))


def report(table, results_dir=RESULTS_DIR):
    """Write results/switch.{csv,md,png}; return the console table."""
    header = columns(
        "runtime | backend | yield, 2 threads (cycles) | yield, 8 threads (cycles) | handoff (cycles/turn)"
    )
    rows = []
    for (os_name, backend, variant), m in sorted(table.items()):
        missing = [c for c in COLUMNS if c not in m]
        if missing:
            raise CaptureError(f"{os_name}, {backend}: no measurement of {missing}")
        runtime = ("bare metal" if os_name == "baremetal" else "Zephyr") + VARIANTS[variant]
        rows.append([runtime, backend] + [m[c] for c in COLUMNS])
    once, twice = table.get(("baremetal", "subutai", "noinv")), table.get(("baremetal", "subutai", "twice"))
    if once and twice:
        rows.append([SWITCH_ALONE, "subutai"] + [twice[c] - once[c] for c in COLUMNS])
    notes = (
        f"firmware/apps/switchbench on the last core of a {TILES}-tile SoC, which runs nothing else: "
        "sched_yield() 200 times by each of 2 or 8 threads (cycles per yield: the call, the switch "
        "to the next thread and, unless said otherwise, the data-cache invalidation of the "
        "visibility rule, pthread.h), and 200 turns each of two threads through a mutex and a "
        "condition variable (cycles per turn: the signal, the waiter made ready and the switch). "
        "Bare metal: user-level threads (firmware/port/baremetal/ult.c); Zephyr: kernel threads. "
        "The context switch alone: what saving and restoring every context twice adds to a yield "
        "(15 stores and 15 loads of tile RAM, SUBUTAI_ULT_SWITCH_TWICE=1), the rest of a yield "
        "being the call and the scheduler."
    )
    title = "Switching threads on one core (firmware/apps/switchbench)"
    save_table("switch", header, rows, title, notes, results_dir)
    plot(table, results_dir)
    return console_table(header, rows)


def plot(table, results_dir):
    fig, ax = new_figure(figsize=(7, 4))
    keys = sorted(table)
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        os_name, backend, variant = key
        short = {"": "", "noinv": ", no invalidation", "twice": ", no invalidation, contexts twice"}[variant]
        label = f"{'bare metal' if os_name == 'baremetal' else 'Zephyr'}, {backend}{short}"
        ax.bar(
            [c + (i - (len(keys) - 1) / 2) * width for c in range(len(COLUMNS))],
            [table[key][c] for c in COLUMNS],
            width=width,
            label=label,
        )
    ax.set_xticks(range(len(COLUMNS)))
    ax.set_xticklabels(["yield, 2 threads", "yield, 8 threads", "handoff (per turn)"])
    ax.set_ylabel("cycles")
    ax.legend(fontsize=7)
    save_figure(fig, os.path.join(results_dir, "switch.png"), 100)


EXPERIMENT = Switch()
