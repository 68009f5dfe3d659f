"""Reports of channels (make bench-chan): seed 004's rdy-ack channels on the Subutai SoC.

Runs, and reads the capture of: ``chanbench`` (one-way latency and
throughput between tile 0 and a tile one hop away, and the farthest tile; seed 004's Table 5)
and of the ``farm`` program (an emitter, W workers and a collector over channels; seed 004's
Fig. 14), each run preceded by a label record naming its implementation of channels and, for the
farm, its configuration and the host build's checksum. Writes results/chan.{csv,md},
results/chan_farm.{csv,md} and results/chan.png.

The farm's parallel runs stream ``--tasks-per-worker`` tasks per worker (at least 4); the
sequential one (``-t 1``, the reference of the speed-up) ``--sequential-tasks``.

Usage: python -m scripts.experiments chan [--tiles 8 16] [--impls noc push flags queue]
           [--sizes 8 16 32 64 128] [--types int float] [--float-sizes 32] [--workers 1 4 14]
"""

import os
import re

from soc.firmware import CHANS, check_chan, slug
from soc.mesh import MeshShapeError, mesh_shape
from soc.subutai_soc import MiB
from scripts import host_programs
from scripts.capture import numbered_lines
from scripts.experiments.framework import Experiment, ModelConfig, Run, label_record, run_image
from scripts.results import RESULTS_DIR, console_table, markdown_table, new_figure, save_csv, save_figure
from scripts.results import to_int

#: Implementations in report order (firmware/lib/chan/chan_<impl>.c).
IMPLS = ("noc", "push", "flags", "queue")
IMPL_NAMES = {
    "noc": "NoC messages (RA-UDN)",
    "push": "pushed data (RA-HF)",
    "flags": "shared flags (RA)",
    "queue": "SPSC queue (FF-QUEUE)",
}
LATENCY_FIELDS = (
    "impl tiles hops words latency_cycles throughput_msgs_per_kcycle rtt_min rtt_median port_latency_cycles"
).split()
FARM_FIELDS = (
    "impl m type workers speedup checksum_ok tasks service_cycles sequential_cycles_per_task".split()
)
#: Seed 004's Table 5 (TILEPro64, cycles at 866 MHz): hops -> one-way latency.
PAPER_TABLE5 = {
    "noc": {1: 42.13, 8: 49.63, 14: 55.64},
    "push": {1: 363.55, 8: 337.01, 14: 331.06},
    "flags": {1: 124.27, 8: 150.31, 14: 168.33},
}
#: The issue's goals.
GOAL_NOC_1HOP = 40
GOAL_NOC_FAR = 60
GOAL_FARM_OVER_QUEUE = 1.65
GOAL_FARM_OVER_FLAGS = 1.36
CHECKSUM_RE = re.compile(r"^farm: checksum (0x[0-9a-f]{8})$")
NS_PER_CYCLE = 10  # clock_gettime() of the simulated SoC: 100 MHz


def _records(lines):
    """(label, record or checksum) pairs in capture order."""
    label = None
    for _, line, record in numbered_lines(lines):
        m = CHECKSUM_RE.match(line.strip())
        if m:
            yield label, {"event": "checksum", "value": m.group(1)}
        elif record is not None and record.get("event") == "chan_label":
            label = record
        elif record is not None:
            yield label, record


def latency_rows(lines):
    rows = []
    for label, r in _records(lines):
        if r.get("program") != "chanbench":
            continue
        port = r.get("port_rtt_min") or 0
        throughput = round(1000 * r["stream_messages"] / r["stream_cycles"], 2)
        figures = [r["rtt_median"] / 2, throughput, r["rtt_min"], r["rtt_median"], port / 2 if port else ""]
        rows.append([r["impl"], r["tiles"], r["hops"], r["words"], *figures])
    order = {i: n for n, i in enumerate(IMPLS)}
    rows.sort(key=lambda r: (r[1], order.get(r[0], 9), r[3], r[2]))
    return rows


def farm_runs(lines):
    """Farm runs: label, record, checksum (and whether it is the host's)."""
    runs, current = [], None
    for label, r in _records(lines):
        if r.get("program") == "farm" and "service_ns" in r:
            current = {"label": label, "record": r, "checksum": None}
            runs.append(current)
        elif r.get("event") == "checksum" and current is not None and current["checksum"] is None:
            current["checksum"] = r["value"]
    for run in runs:
        label = run["label"] or {}
        run["checksum_ok"] = run["checksum"] is not None and run["checksum"] == label.get("reference")
    return runs


def farm_rows(runs):
    """Speed-up of every parallel run over the sequential run of its matrix size and type."""
    seq = {}
    for run in runs:
        r = run["record"]
        if r["workers"] == 0:
            seq[(r["m"], r["type"])] = r["service_ns"] / NS_PER_CYCLE
    rows = []
    for run in runs:
        r = run["record"]
        if r["workers"] == 0:
            continue
        base = seq.get((r["m"], r["type"]))
        service = r["service_ns"] / NS_PER_CYCLE
        speedup = round(base / service, 3) if base and service else ""
        config = [r["impl"], r["m"], r["type"], r["workers"]]
        rows.append(
            config + [speedup, run["checksum_ok"], r["tasks"], round(service), round(base) if base else ""]
        )
    order = {i: n for n, i in enumerate(IMPLS)}
    rows.sort(key=lambda x: (x[1], x[2], order.get(x[0], 9), x[3]))
    return rows, seq


def _best(rows, impl, m, type_):
    values = [r[4] for r in rows if r[0] == impl and r[1] == m and r[2] == type_ and r[4] != ""]
    return max(values) if values else None


def goals(lat, farm):
    lines = []
    noc = [r for r in lat if r[0] == "noc" and r[3] == 1]
    for r in noc:
        goal = GOAL_NOC_1HOP if r[2] == 1 else GOAL_NOC_FAR
        port = r[8]
        lines.append(
            f"- NoC one-way latency, {r[1]} tiles, {r[2]} hop(s), one word: **{r[4]:g} cycles** through "
            f"the API (goal ≤ {goal}: {'met' if r[4] <= goal else 'not met'}); the port alone "
            f"(window accesses only) {port:g} cycles ({'met' if port != '' and port <= goal else 'not met'})."
        )
    for m, type_ in sorted({(r[1], r[2]) for r in farm}):
        best = {i: _best(farm, i, m, type_) for i in IMPLS}
        if best["noc"] is None:
            continue
        parts = []
        for other, goal in (("queue", GOAL_FARM_OVER_QUEUE), ("flags", GOAL_FARM_OVER_FLAGS)):
            if best[other]:
                ratio = best["noc"] / best[other]
                target = goal if (m, type_) == (32, "int") else 1.0
                parts.append(
                    f"over {other} {ratio:.2f}× (goal ≥ {target}: {'met' if ratio >= target else 'not met'})"
                )
        lines.append(
            f"- Farm M = {m} {type_}: best speed-up noc {best['noc']:.2f}"
            + "".join(f", {i} {best[i]:.2f}" for i in IMPLS[1:] if best[i])
            + "; noc "
            + ", ".join(parts)
            + "."
        )
    return lines


def report(lines, results_dir=RESULTS_DIR, name="chan"):
    """Write the tables and the plot; return (console text, problems)."""
    lat = latency_rows(lines)
    runs = farm_runs(lines)
    farm, seq = farm_rows(runs)
    problems = [
        f"farm {r['record']['impl']} M={r['record']['m']} {r['record']['type']} W={r['record']['workers']}: "
        f"checksum {r['checksum']} is not the host's {(r['label'] or {}).get('reference')}"
        for r in runs
        if not r["checksum_ok"]
    ]
    if not lat and not farm:
        problems.append("no chanbench or farm run in the capture")
    save_csv(name, LATENCY_FIELDS, lat, results_dir)
    save_csv(f"{name}_farm", FARM_FIELDS, farm, results_dir)
    paper = [[IMPL_NAMES.get(i, i), h, v] for i, by_hops in PAPER_TABLE5.items() for h, v in by_hops.items()]
    goal_lines = goals(lat, farm)
    md = [
        "# Channels through the NoC: rdy-ack send and receive (seed 004)",
        "",
        "Bare metal on the simulated SoC (VexRiscv, 8 KiB 2-way I$, 4 KiB D$, 100 MHz). Four "
        "implementations behind `subutai/chan.h`, chosen at build time: `noc` (the channel port's "
        "window: stores to send, a load that waits to receive, the message and its ack as NoC "
        "packets), `push` (the port writes the message into the receiver's tile RAM, the receiver "
        "polls a flag there), `flags` (rdy and ack words in shared memory, the data cache "
        "invalidated between polls), `queue` (a FastFlow-style SPSC ring of 8 positions in shared memory).",
        "",
        "## Goals",
        "",
        *goal_lines,
        "",
        "## One-way latency and throughput (seed 004's Table 5)",
        "",
        "`chanbench`: tile 0 and a tile one hop away, and the farthest tile. One-way latency = half "
        "the median round trip of a message and its echo through the API (`subutai_chan_send` then "
        "`subutai_chan_recv` on each side), cycles; throughput = messages per thousand cycles of a "
        "stream of 128 sends; `port_latency_cycles` = half the round trip of the same exchange by "
        "window accesses alone (noc).",
        "",
        markdown_table(LATENCY_FIELDS, lat),
        "",
        "Seed 004, Table 5 (TILEPro64, one-way latency in cycles; hops on its 8x8 mesh):",
        "",
        markdown_table(["implementation", "hops", "cycles"], paper),
        "",
        "## Farm (seed 004's Fig. 14)",
        "",
        "`farm` on the 16-tile SoC: the emitter (tile 0) streams tasks to W workers on demand, a "
        "collector takes the results. Speed-up = the sequential time per task (`-t 1`) / the "
        "parallel service time (between results once every worker has had a task). Every run's "
        "checksum is compared with the host build's.",
        "",
        markdown_table(FARM_FIELDS, farm),
        "",
        "Seed 004: at M = 32 (int) NoC messages (RA-UDN) improve the best speed-up by 65 % over "
        "FastFlow's queues and by 36 % over shared flags; 13 % and 11 % over flags at M = 64 and 128.",
        "",
    ]
    with open(os.path.join(results_dir, f"{name}.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(results_dir, f"{name}_farm.md"), "w") as f:
        f.write(
            "\n".join(["# Farm over channels (seed 004's Fig. 14)", "", markdown_table(FARM_FIELDS, farm)])
        )
    plot(lat, farm, os.path.join(results_dir, f"{name}.png"))
    text = console_table(LATENCY_FIELDS, lat)
    if farm:
        text += "\n\n" + console_table(FARM_FIELDS, farm)
    return text + "\n\n" + "\n".join(goal_lines), problems


def plot(lat, farm, path):
    """Left: one-way latency by hops per implementation (one word); right: farm speed-up by
    workers, one line per implementation, one panel group per matrix size and type."""
    configs = sorted({(r[1], r[2]) for r in farm})
    cols = 1 + max(1, len(configs))
    fig, axes = new_figure(1, cols, figsize=(3.6 * cols, 3.4), squeeze=False)
    ax = axes[0][0]
    for impl in IMPLS:
        pts = sorted((r[2], r[4]) for r in lat if r[0] == impl and r[3] == 1)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=impl)
    ax.set_xlabel("hops")
    ax.set_ylabel("one-way latency (cycles)")
    ax.set_title("one word, through the API", fontsize=9)
    ax.legend(fontsize=7)
    for k, (m, type_) in enumerate(configs):
        ax = axes[0][1 + k]
        for impl in IMPLS:
            pts = sorted(
                (r[3], r[4]) for r in farm if r[0] == impl and r[1] == m and r[2] == type_ and r[4] != ""
            )
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=impl)
        ax.set_xlabel("workers")
        ax.set_ylabel("speed-up")
        ax.set_title(f"farm M = {m}, {type_}", fontsize=9)
        ax.legend(fontsize=7)
    save_figure(fig, path, 110)


FARM_TILES = 16
#: Main RAM of the farm's SoC: the matrices (a pool of 8 and one output per worker, 64 KiB each at
#: M = 128) do not fit the default 1 MiB.
FARM_MAIN_RAM = 4 * MiB
FARM_MAX_WORKERS = 14  # firmware/programs/farm: an emitter and a collector besides
#: Fewest tasks of a parallel run (its service time is measured after the first W results).
MIN_TASKS = 4
MAX_CYCLES = 400_000_000


def farm_program_args(m, type_, tasks):
    """The farm's arguments but the thread count (the host's reference runs with one)."""
    return f"-i test -m {m} -d {type_} -n {tasks}"


def farm_args(m, type_, tasks, threads):
    """The farm's arguments on the SoC (after the harness's "-t <tiles>", which the last -t
    overrides)."""
    return f"{farm_program_args(m, type_, tasks)} -t {threads}"


class Channels(Experiment):
    name = "chan"
    title = "channels (seed 004): one-way latency in cycles"
    command = 'make bench-chan CHAN_ARGS="--sizes 8 16 32 --float-sizes"'
    tiles = (8, 16)
    results = ("chan_farm",)

    def add_arguments(self, parser):
        parser.add_argument(
            "--impls", nargs="+", default=list(IMPLS), help=f"implementations ({', '.join(CHANS)})"
        )
        parser.add_argument(
            "--sizes",
            type=int,
            nargs="*",
            default=[8, 16, 32, 64, 128],
            help="matrix sizes M (int; 8 and 16: finer grains than seed 004's)",
        )
        parser.add_argument("--types", nargs="+", default=["int", "float"], choices=["int", "float"])
        parser.add_argument(
            "--float-sizes",
            type=int,
            nargs="*",
            default=[32],
            help="matrix sizes run with float elements (emulated: about ten times the cycles of int)",
        )
        parser.add_argument(
            "--workers",
            type=int,
            nargs="*",
            default=[1, 4, 14],
            help="worker counts (each run simulates about --tasks-per-worker tasks of one worker: "
            "M = 128 int takes 1.1 M cycles a task)",
        )
        parser.add_argument("--farm-tiles", type=int, default=FARM_TILES, help="SoC size of the farm runs")
        parser.add_argument("--tasks-per-worker", type=int, default=3)
        parser.add_argument("--sequential-tasks", type=int, default=4)

    def validate(self, args, error):
        try:
            for impl in args.impls:
                check_chan(impl)
            mesh_shape(args.farm_tiles)
        except (ValueError, MeshShapeError) as e:
            error(str(e))
        if any(not 3 <= m <= 256 for m in args.sizes + args.float_sizes):
            error("matrix sizes: 3 to 256")
        most = min(FARM_MAX_WORKERS, args.farm_tiles - 2)
        if any(not 1 <= w <= most for w in args.workers):
            error(f"--workers: 1 to {most} (an emitter and a collector besides, on {args.farm_tiles} tiles)")
        if args.tasks_per_worker < 1 or args.sequential_tasks < 1:
            error("task counts must be positive")

    def runs(self, args):
        runs = [
            Run.of(f"chanbench {impl}, {n} tiles", ModelConfig.of(n), run="chanbench", impl=impl, tiles=n)
            for n in args.tiles
            for impl in args.impls
        ]
        configs = [(m, "int") for m in args.sizes if "int" in args.types]
        configs += [(m, "float") for m in args.float_sizes if "float" in args.types]
        if not (configs and args.workers):
            return runs
        plan = []  # (impl, m, type, workers, tasks)
        for m, type_ in configs:
            plan.append((args.impls[0], m, type_, 0, args.sequential_tasks))
            for impl in args.impls:
                for w in args.workers:
                    plan.append((impl, m, type_, w, max(MIN_TASKS, args.tasks_per_worker * w)))
        # The host's checksums, one per argument set (they do not depend on the thread count).
        references = {}
        for _, m, type_, _, tasks in plan:
            if (m, type_, tasks) not in references:
                arguments = farm_program_args(m, type_, tasks)
                references[(m, type_, tasks)] = host_programs.checksums(["farm"], arguments)["farm"]
        model = ModelConfig.of(args.farm_tiles, main_ram_size=FARM_MAIN_RAM)
        return runs + [
            Run.of(
                f"farm {impl} M={m} {type_} W={w} ({n + 1}/{len(plan)})",
                model,
                run="farm",
                impl=impl,
                m=m,
                type=type_,
                workers=w,
                tasks=tasks,
                reference=references[(m, type_, tasks)],
            )
            for n, (impl, m, type_, w, tasks) in enumerate(plan)
        ]

    def image(self, run, model, args):
        c = run.config
        if c["run"] == "chanbench":
            return model.build_firmware("chanbench", chan=c["impl"])
        arguments = farm_args(c["m"], c["type"], c["tasks"], c["workers"] + 2 if c["workers"] else 1)
        # A directory per run: runs build side by side.
        out_dir = os.path.join(model.output_dir, "firmware", f"bench_chan_farm_{c['impl']}_{slug(arguments)}")
        return model.build_firmware("farm", out_dir=out_dir, program_args=arguments, chan=c["impl"])

    def execute(self, run, model, image, args):
        return [label_record("chan_label", **run.config)] + run_image(model, image, run.what, MAX_CYCLES)

    def report(self, lines, args, results_dir):
        return report(lines, results_dir, self.result_name(args))

    def headlines(self, results):
        lat = results.rows("chan")
        # The farm's runs are long (make bench-chan's second part); the latencies stand alone.
        farm = results.rows("chan_farm", required=False)
        parts = []
        for tiles in dict.fromkeys(r["tiles"] for r in lat):
            one = [r for r in lat if r["tiles"] == tiles and r["words"] == "1"]
            by = {(r["impl"], to_int(r["hops"])): r for r in one}
            hops = sorted({h for _, h in by})
            noc = [by[("noc", h)] for h in hops if ("noc", h) in by]
            parts.append(
                f"{tiles} tiles, one-way at {' / '.join(map(str, hops))} hops: noc "
                + " / ".join(f"{float(r['latency_cycles']):g}" for r in noc)
                + " (the port alone "
                + " / ".join(f"{float(r['port_latency_cycles']):g}" for r in noc)
                + ")"
                + "".join(
                    f", {impl} " + " / ".join(f"{float(by[(impl, h)]['latency_cycles']):g}" for h in hops)
                    for impl in ("push", "flags", "queue")
                    if all((impl, h) in by for h in hops)
                )
            )
        best = {}
        for r in farm:
            if r["speedup"]:
                key = (to_int(r["m"]), r["type"])
                best.setdefault(key, {})
                best[key][r["impl"]] = max(best[key].get(r["impl"], 0), float(r["speedup"]))
        farm_parts = [
            f"M = {m} {t}: noc {b['noc']:.2f}"
            + "".join(f", {i} {b[i]:.2f}" for i in ("push", "flags", "queue") if i in b)
            for (m, t), b in sorted(best.items())
            if "noc" in b
        ]
        return [
            (
                "channels (seed 004): one-way latency in cycles"
                + ("; farm's best speed-up on 16 tiles" if farm_parts else ""),
                "; ".join(parts) + ("; farm " + "; ".join(farm_parts) if farm_parts else ""),
                # The committed sweep: the farm's int sizes to 32 (a run at M = 64 or float
                # simulates for 6 to 12 minutes; the default sweep is hours on two cores).
                self.command,
            )
        ]


EXPERIMENT = Channels()
