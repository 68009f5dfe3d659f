"""Reports of the time-donating barrier (make bench-tidon): seed 002 (Tidon) on the Subutai SoC.

Reads the capture of its sweep: runs of zephyr-app/apps/multi, each labelled with its
workload (a barrier-intensive program with ``ep`` beside it, or one program alone), backend and
barrier waiting policy. Per co-run it computes each program's speed-up (its time alone, with the
default spin-then-block barrier and the same backend, over its turnaround in the co-run), the
weighted speed-up (their sum: seed 002's throughput metric) and the unfairness (largest / smallest
speed-up), as seed 002 §5.2 defines them.

Seed 002 §5: a barrier-intensive program (streamcluster, bodytrack) runs one thread per tile while
``ep`` (NAS EP) runs beside it with 1, 2 or 4 threads (imbalanced) or one per tile (balanced); each
program also runs alone, with the default barrier (spin-then-block), as the reference of its
speed-up. In a co-run each program runs again while the other's first run goes on ("We run each
workload repeatedly in order to fully overlap their executions", §5.2; up to ``--runs`` runs,
``program*runs`` of the launcher): its speed-up is its first run's, overlapped all along. Every co-run is built once per barrier waiting policy (Kconfig SUBUTAI_BARRIER_WAIT) and
backend, with round-robin scheduling at a 0.5 ms timeslot (zephyr-app/apps/multi); ``block+steal``
and ``spin-then-block+steal`` add the migrating baseline (CONFIG_SUBUTAI_SCHED_STEAL: idle kernels
take ready threads), the analog of seed 002's runs on Linux.

Usage: python -m scripts.experiments tidon [--tiles 8] [--workloads streamcluster bodytrack]
           [--ep-threads 1 2 4] [--backends swonly subutai] [--policies spin block ...] [--jobs N]
"""

import os

from scripts.capture import CaptureError
from scripts.experiments.framework import Run, label_record, run_image
from scripts.experiments.multi import BACKEND_NAMES, ApplicationSets, move_costs, multi_model, wrong_checksums
from scripts.results import RESULTS_DIR, console_table, markdown_table, new_figure, save_csv, save_figure
from scripts.results import to_int

#: The policies in report order, with their short names of the plot: the barrier waiting
#: policies (soc.zephyr.BARRIER_POLICIES), then the migrating baseline under the passive and the
#: default ones ("+steal": idle kernels take ready threads, rr-steal of make bench-multi; seed
#: 002's runs are on Linux, which migrates).
SHORT = {
    "spin": "s",
    "block": "b",
    "spin-then-block": "s/b",
    "tidon": "t",
    "block+steal": "b+m",
    "spin-then-block+steal": "s/b+m",
}
POLICIES = tuple(SHORT)
#: What a policy's name adds to its barrier's: the scheduling of the migrating baseline.
MIGRATING = "+steal"
#: The policy programs run alone with (seed 002: the default barrier of the runtime).
ALONE_POLICY = "spin-then-block"
CSV_FIELDS = (
    "workload ep_threads balanced tiles backend policy weighted_speedup unfairness checksums_ok "
    "main_speedup ep_speedup main_cycles ep_cycles main_alone ep_alone makespan finished donated_local "
    "donated_remote laggard_messages moved move_latency move_work"
).split()
#: Goals of the issue (8 tiles) and seed 002's figures.
GOAL_IMBALANCED = 1.3
GOAL_BALANCED = 0.95
GOAL_UNFAIRNESS = 1.5
PAPER_BT_EP = "1.64–2.02× over the other policies (BT + EP, imbalanced); unfairness up to 39.5 when spinning"


def _duration(inst):
    return inst["end"] - inst["start"] if inst["finished"] else None


def _checksums_ok(run, reference):
    """Every finished instance's checksum is the host's (a run cut short by the set's end, after
    the first runs, has none)."""
    outputs = run["output"]
    if set(outputs) != {k for k, i in enumerate(run["instances"]) if i["finished"]}:
        return False
    return all(
        o.get("checksum", (None, None))[1] == reference.get(o.get("checksum", (None, None))[0])
        for o in outputs.values()
    )


def alone_times(runs):
    """{(tiles, backend, entry): cycles}: each program's duration alone ("ep:4" for ep's)."""
    alone = {}
    for run in runs:
        label = run["label"]
        if label.get("kind") != "alone":
            continue
        inst = run["instances"][0]
        entry = inst["program"] if inst["program"] != "ep" else f"ep:{inst['threads']}"
        alone[(label["tiles"], label["backend"], entry)] = _duration(inst)
    return alone


def metrics(runs, reference):
    """The rows of tidon.csv, one per co-run. A missing run alone is an error (no reference)."""
    alone = alone_times(runs)
    rows = []
    for run in runs:
        label = run["label"]
        if label.get("kind") != "corun":
            continue
        tiles, backend, n = label["tiles"], label["backend"], label["ep_threads"]
        # The first run of each (the others only overlap it).
        main, ep = [i for i in run["instances"] if i.get("first", True)]
        refs = []
        for entry in (main["program"], f"ep:{n}"):
            ref = alone.get((tiles, backend, entry))
            if ref is None:
                raise CaptureError(f"no run of {entry} alone ({backend}, {tiles} tiles) in the capture")
            refs.append(ref)
        cycles = [_duration(main), _duration(ep)]
        speedups = [r / c if c else None for r, c in zip(refs, cycles)]
        done = all(c is not None for c in cycles)
        s = run["set"]
        work = run.get("barrier", {})
        ratio = lambda x: f"{x:.3f}" if x else ""
        balanced = "yes" if (tiles + n) % tiles == 0 else "no"
        config = [label["set"], n, balanced, tiles, backend, label["policy"]]
        weighted = ratio(sum(speedups)) if done else ""
        unfairness = ratio(max(speedups) / min(speedups)) if done else ""
        checksums = "yes" if _checksums_ok(run, reference) else "no"
        times = [*(c or "" for c in cycles), *refs, s["makespan"], "yes" if done else "no"]
        donated = [work.get(k, 0) for k in ("donated_local", "donated_remote", "laggard_messages")]
        # Laggards moved to their waiters' cores, and home; a move's mean latency and work.
        moved, latency, move_work = move_costs(s)
        donated += [moved or 0, latency, move_work]
        rows.append(config + [weighted, unfairness, checksums, *map(ratio, speedups), *times, *donated])
    return rows


def _f(value):
    return float(value) if value not in ("", None) else None


def goals(rows):
    """Lines of the goals section: each workload's Tidon against the best other policy."""
    by = {}
    for r in rows:
        by.setdefault((r[0], r[1], r[4]), {})[r[5]] = r
    lines = []
    for (workload, n, backend), pol in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        if "tidon" not in pol:
            continue
        tidon = _f(pol["tidon"][6])
        others = {p: _f(r[6]) for p, r in pol.items() if p != "tidon" and _f(r[6]) is not None}
        if tidon is None or not others:
            continue
        best_policy = max(others, key=others.get)
        ratio = tidon / others[best_policy]
        balanced = pol["tidon"][2] == "yes"
        goal = GOAL_BALANCED if balanced else GOAL_IMBALANCED
        spin_unfair = _f(pol["spin"][7]) if "spin" in pol else None
        unfair = _f(pol["tidon"][7])
        unfair_note = ""
        if spin_unfair is not None and spin_unfair > 2:
            unfair_note = f"; spin's unfairness {spin_unfair:.2f} > 2, Tidon's {unfair:.2f} (goal ≤ {GOAL_UNFAIRNESS}: {'met' if unfair <= GOAL_UNFAIRNESS else 'not met'})"
        lines.append(
            f"- {workload} + ep:{n} ({'balanced' if balanced else 'imbalanced'}), {BACKEND_NAMES[backend]}: "
            f"Tidon {tidon:.3f} / best other ({best_policy}) {others[best_policy]:.3f} = **{ratio:.2f}×** "
            f"(goal ≥ {goal}: {'met' if ratio >= goal else 'not met'}){unfair_note}"
        )
    cross = []
    for (workload, n, backend), pol in sorted(by.items()):
        if backend != "subutai" or "tidon" not in pol:
            continue
        sw = by.get((workload, n, "swonly"), {}).get("tidon")
        if sw is None or _f(sw[6]) is None or _f(pol["tidon"][6]) is None:
            continue
        hw_cycles = int(pol["tidon"][11]) + int(pol["tidon"][12])
        sw_cycles = int(sw[11]) + int(sw[12])
        cross.append(
            f"- {workload} + ep:{n}: Tidon's turnarounds (sum) Subutai {hw_cycles:,} / SW-only {sw_cycles:,} cycles "
            f"= {sw_cycles / hw_cycles:.2f}× in Subutai's favour ({'beats' if hw_cycles < sw_cycles else 'does not beat'} SW-only)"
        )
    return lines, cross


def report(runs, reference, results_dir=RESULTS_DIR, name="tidon"):
    """Write results/<name>.{csv,md,png}; return the console table."""
    rows = metrics(runs, reference)
    save_csv(name, CSV_FIELDS, rows, results_dir)
    alone = alone_times(runs)
    goal_lines, cross = goals(rows)
    shown = (
        "workload ep_threads balanced backend policy main_speedup ep_speedup weighted_speedup unfairness "
        "checksums_ok"
    ).split()
    idx = [CSV_FIELDS.index(f) for f in shown]
    table_rows = [[r[i] for i in idx] for r in rows]
    work = (
        "workload ep_threads backend donated_local donated_remote laggard_messages moved move_latency move_work "
        "makespan"
    ).split()
    tiles = sorted({r[3] for r in rows})
    md = [
        "# Tidon: a barrier that donates its time (seed 002) beside spin, block and spin-then-block, "
        "and the migrating baseline",
        "",
        f"Zephyr on every tile ({', '.join(map(str, tiles))} tiles), round-robin scheduling (TS 0.5 ms), programs at "
        "`-i simsmall -s 1`. A barrier-intensive program runs one thread per tile beside `ep` (NAS EP) with "
        "1, 2 or 4 threads (imbalanced: the threads are not a multiple of the cores) or one per tile (balanced). "
        "Speed-up of a program = its time alone (spin-then-block, same backend) / its turnaround in the co-run; "
        "weighted speed-up = the sum over the two programs; unfairness = largest / smallest speed-up (seed 002 §5.2). "
        "Times in cycles at 100 MHz. `+steal`: the same barrier with the migrating baseline (idle kernels "
        "take ready threads, `rr-steal` of `make bench-multi`): seed 002's machine is Linux, which migrates.",
        "",
        "## Goals (8 tiles)",
        "",
        *goal_lines,
        "",
        "Subutai's donation against SW-only's (the same policy and workload):",
        "",
        *cross,
        "",
        f"Seed 002 measured {PAPER_BT_EP} on a 16-core Linux machine whose threads migrate between cores.",
        "",
        "## Every co-run",
        "",
        markdown_table(shown, table_rows),
        "",
        "## Tidon's work",
        "",
        "Laggards a waiter ran on its own core, laggards raised on another core's message (where they "
        "could not move), those messages, and the moves between kernels (a laggard to its waiter's "
        "core, and home at its slot's end), over the run.",
        "",
        markdown_table(work, [[r[CSV_FIELDS.index(f)] for f in work] for r in rows if r[5] == "tidon"]),
        "",
        "## Times alone",
        "",
        markdown_table(
            ["tiles", "backend", "program", "cycles"],
            [[t, b, e, c] for (t, b, e), c in sorted(alone.items())],
        ),
        "",
    ]
    with open(os.path.join(results_dir, f"{name}.md"), "w") as f:
        f.write("\n".join(md))
    plot(rows, os.path.join(results_dir, f"{name}.png"))
    return console_table(shown, table_rows)


def plot(rows, path):
    """Seed 002's Fig. 5 form: per workload and backend, each policy's weighted speed-up as the
    stacked speed-ups of the two programs, by ep's thread count."""
    workloads = sorted({r[0] for r in rows})
    backends = [b for b in ("swonly", "subutai") if any(r[4] == b for r in rows)]
    fig, axes = new_figure(
        len(workloads), len(backends), figsize=(6 * len(backends), 3.6 * len(workloads)), squeeze=False
    )
    colors = {"main": "#4c72b0", "ep": "#dd8452"}
    for i, workload in enumerate(workloads):
        for j, backend in enumerate(backends):
            ax = axes[i][j]
            mine = [r for r in rows if r[0] == workload and r[4] == backend]
            threads = sorted({r[1] for r in mine})
            width = 0.8 / len(POLICIES)
            for k, policy in enumerate(POLICIES):
                xs, main, ep = [], [], []
                for x, n in enumerate(threads):
                    row = next((r for r in mine if r[1] == n and r[5] == policy), None)
                    if row is None:
                        continue
                    xs.append(x + (k - (len(POLICIES) - 1) / 2) * width)
                    main.append(_f(row[9]) or 0)
                    ep.append(_f(row[10]) or 0)
                ax.bar(xs, main, width, color=colors["main"], edgecolor="black", linewidth=0.3)
                ax.bar(xs, ep, width, bottom=main, color=colors["ep"], edgecolor="black", linewidth=0.3)
                for x, m, e in zip(xs, main, ep):
                    ax.text(x, m + e + 0.02, SHORT[policy], ha="center", fontsize=6)
            ax.set_xticks(range(len(threads)))
            ax.set_xticklabels([f"EP ×{n}" for n in threads])
            ax.set_ylabel("weighted speed-up")
            ax.set_title(
                f"{workload} + EP, {BACKEND_NAMES[backend]} (s spin, b block, s/b, t tidon, +m migrating)",
                fontsize=9,
            )
            ax.bar([], [], color=colors["main"], label=workload)
            ax.bar([], [], color=colors["ep"], label="ep")
            ax.legend(fontsize=7)
    save_figure(fig, path, 110)


WORKLOADS = ("streamcluster", "bodytrack")
EP_THREADS = (1, 2, 4)
SCHED_POLICY = "rr"
TS_US = 500
MAX_CYCLES = 400_000_000
#: The launcher's deadline (ms of simulated time): a spinning co-run that has not ended by then is
#: reported unfinished (exit 3) instead of holding the benchmark.
DEADLINE_MS = 300
#: Runs of each program of a co-run at most (the shorter runs again while the longer's first run
#: goes on): ep:1 beside a workload on 8 tiles is about 4 times its length.
RUNS = 8


def barrier_and_schedule(policy):
    """A policy's barrier waiting policy and scheduling (rr, or rr-steal for the migrating
    baseline)."""
    if policy.endswith(MIGRATING):
        return policy[: -len(MIGRATING)], f"{SCHED_POLICY}-steal"
    return policy, SCHED_POLICY


def run_name(label):
    """How a problem names a co-run: its workload, ep's threads, backend and barrier policy."""
    return f"{label['set']} ep:{label['ep_threads']} {label['backend']} {label['policy']}"


class Tidon(ApplicationSets):
    name = "tidon"
    title = "Tidon's weighted speed-up over the best other barrier policy"
    command = "make bench-tidon"

    def add_arguments(self, parser):
        parser.add_argument("--tiles", type=int, default=8, help="SoC size (tiles; default 8).")
        parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
        parser.add_argument(
            "--ep-threads",
            type=int,
            nargs="+",
            default=list(EP_THREADS),
            help="ep's thread counts beside the workload (one per tile, balanced, is always run).",
        )
        parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
        parser.add_argument(
            "--runs",
            type=int,
            default=RUNS,
            help="runs of each program of a co-run at most, the later ones only while the other's "
            "first run goes on (seed 002 §5.2; 1: each runs once; default %(default)s).",
        )

    def validate(self, args, error):
        if not 1 <= args.runs <= 16:
            error(f"--runs {args.runs}: 1 to 16 (the launcher holds 32 instances)")
        for n in args.ep_threads:
            if not 1 <= n <= args.tiles:
                error(f"--ep-threads {n}: 1 to {args.tiles} (the tiles)")

    def programs(self, args):
        return list(args.workloads) + ["ep"]

    def deadline_ms(self, args):
        return DEADLINE_MS

    def runs(self, args):
        """Every run, alone ones first: (kind, workload, ep threads, backend, policy, programs)."""
        threads = sorted(set(args.ep_threads) | {args.tiles})
        model = multi_model(args.tiles)
        order = []
        for backend in args.backends:
            for program in list(args.workloads) + [f"ep:{n}" for n in threads]:
                n = int(program.split(":")[1]) if program.startswith("ep:") else 0
                order.append(("alone", program.split(":")[0], n, backend, ALONE_POLICY, [program]))
        for workload in args.workloads:
            for n in threads:
                for backend in args.backends:
                    for policy in args.policies:
                        programs = [workload, f"ep:{n}"]
                        if args.runs > 1:
                            programs = [f"{p}*{args.runs}" for p in programs]
                        order.append(("corun", workload, n, backend, policy, programs))
        return [
            Run.of(
                f"{' + '.join(programs)}, {b}, {p}, {args.tiles} tiles",
                model,
                kind=k,
                workload=w,
                ep_threads=n,
                backend=b,
                policy=p,
                programs=tuple(programs),
            )
            for k, w, n, b, p, programs in order
        ]

    def image(self, run, model, args):
        c = run.config
        barrier, schedule = barrier_and_schedule(c["policy"])
        return self.build(model, c["programs"], c["backend"], schedule, TS_US, args, barrier=barrier)

    def execute(self, run, model, image, args):
        c = run.config
        fields = dict(kind=c["kind"], set=c["workload"], ep_threads=c["ep_threads"], tiles=args.tiles)
        label = label_record("multi_label", **fields, backend=c["backend"], policy=c["policy"])
        return [label] + run_image(model, image, run.what, MAX_CYCLES, (0, 3))

    def report(self, lines, args, results_dir):
        runs, reference = self.runs_and_reference(lines)
        text = report(runs, reference, results_dir, self.result_name(args))
        wrong = wrong_checksums(runs, reference, run_name)
        unfinished = [
            run_name(r["label"])
            for r in runs
            # A later run cut short by the set's end is not a first run, which must finish.
            if any(not i["finished"] or i["exit"] != 0 for i in r["instances"] if i.get("first", True))
        ]
        if unfinished:
            text += "\ndid not finish by the launcher's deadline:\n  " + "\n  ".join(unfinished)
        return text, wrong

    def headlines(self, results):
        by = {}
        for r in results.rows("tidon"):
            if r["weighted_speedup"]:
                by.setdefault((r["workload"], to_int(r["ep_threads"]), r["backend"]), {})[r["policy"]] = (
                    float(r["weighted_speedup"])
                )
        parts = []
        for (workload, n, backend), pol in by.items():
            if backend != "subutai" or "tidon" not in pol or len(pol) < 2:
                continue
            best = max((p for p in pol if p != "tidon"), key=pol.get)
            parts.append(f"{workload}+ep×{n} {pol['tidon'] / pol[best]:.2f}×")
        return [
            (
                "Tidon's weighted speed-up over the best other barrier policy (Subutai, 8 tiles)",
                ", ".join(parts),
                self.command,
            )
        ]


EXPERIMENT = Tidon()
