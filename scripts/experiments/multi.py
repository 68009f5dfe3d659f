"""Reports of application sets sharing the cores (make bench-multi): TPDS'21 (Subutai) section VII.

Reads the captures of zephyr-app/apps/multi (one run per set, backend, policy and timeslot: its
``multi_set`` and ``multi_instance`` records, each instance's harness records and checksum line)
and computes, per run, the makespan, each application's turnaround and slowdown, the unfairness
(Eq. 1), the weighted speed-up (seed 002's throughput metric) and Table VII's schedule requests.

An application's time alone is its own duration in the one-application-at-a-time (oat) run of the
same set and backend: the same image runs it with the machine to itself.

Runs zephyr-app/apps/multi for each set, backend, scheduling policy and timeslot on the simulated
SoC (Zephyr on every tile, main RAM of 4 MiB for the sets' threads and data); every instance's
checksum must equal the host build's. Schedules: oat (one application at a time; the times alone
come from it), rr (applications in turn, aligned on every core) and csa at each timeslot, and at
the longest csa-nolimit (what CSALimit is for), rr-core (each kernel's own rotation: what the
alignment does) and rr-steal (idle kernels take ready threads: the migrating baseline).

Usage: python -m scripts.experiments multi [--tiles 16] [--sets bodytrack streamcluster x264 mix]
           [--backends swonly subutai] [--ts 1 10] [--policies ...] [--jobs N]
"""

import os
import re
import statistics

from scripts import host_programs
from scripts.capture import CaptureError, numbered_lines
from scripts.experiments.framework import MEASURES_ZEPHYR, Experiment, ModelConfig, Run, label_record
from scripts.experiments.framework import program_args, run_image
from scripts.host_programs import CHECKSUM_RE
from scripts.results import columns, RESULTS_DIR, console_table, markdown_table, new_figure, save_csv
from scripts.results import save_figure, to_int

#: Sets of TPDS'21 Fig. 13 scaled to the tile count: {tiles: {set: [program, ...]}}; the mix keeps
#: the paper's order (bodytrack, x264, streamcluster) and shares (3/2/3 of eight).
SETS = {
    tiles: {p: [p] * (tiles // 2) for p in ("bodytrack", "streamcluster", "x264")} | {"mix": mix}
    for tiles, mix in (
        (8, ["bodytrack", "x264", "streamcluster", "streamcluster"]),
        (16, ["bodytrack"] * 3 + ["x264"] * 2 + ["streamcluster"] * 3),
    )
}
#: The schedules of a run: the kernels' policies (soc.zephyr.SCHED_POLICIES; rr and csa rotate by
#: application, aligned on every core), and the migrating baseline, rr with idle kernels taking
#: ready threads (the analog of seed 002's Linux runs).
POLICIES = ("oat", "rr", "csa", "csa-nolimit", "rr-core", "rr-steal")
#: A schedule that is a kernel policy with settings of its own: {name: (policy, Kconfig)}.
VARIANTS = {"rr-steal": ("rr", ["CONFIG_SUBUTAI_SCHED_STEAL=y"])}
BACKEND_NAMES = {"swonly": "SW-only", "subutai": "Subutai"}

#: TPDS'21 Fig. 13 (lines a, c): Subutai over SW-only under OAT, and CSA over OAT (Subutai), per set
#: of eight 64-thread applications on 64 cores.
PAPER_SUBUTAI_OVER_SWONLY_OAT = {"bodytrack": 1.86, "streamcluster": 2.13, "x264": 1.07, "mix": 1.91}
PAPER_CSA_OVER_OAT = {"bodytrack": 1.58, "streamcluster": 2.69, "x264": 4.61, "mix": 2.09}
#: TPDS'21 Table X: unfairness, {set: (SW-only RR, SW-only CSA, Subutai RR, Subutai CSA)}.
PAPER_UNFAIRNESS = {
    "bodytrack": (1.04, 1.04, 1.16, 1.15),
    "streamcluster": (1.11, 1.11, 1.19, 1.19),
    "x264": (1.27, 1.24, 1.12, 1.20),
    "mix": (2.00, 1.71, 1.88, 1.83),
}
#: TPDS'21 Table VII (1 ms timeslot): schedule requests outside critical sections, inside them
#: under CSA, inside them under RR after CSALimit.
PAPER_TABLE_VII = {"bodytrack x4": (305517, 15267, 1558), "bodytrack x8": (323379, 15274, 1274)}

CSV_FIELDS = (
    "set tiles backend policy ts_ms makespan unfairness weighted_speedup req_outside_cs req_cs_csa "
    "req_cs_rr checksums_ok instances finished speedup_over_oat busy_cycles busy moved move_latency move_work"
).split()
APP_FIELDS = (
    "set tiles backend policy ts_ms instance program threads start turnaround alone slowdown checksum "
    "checksum_ok"
).split()

#: Goal: CSA's makespan never more than this much above RR's (percent).
CSA_OVER_RR_GOAL = 2.0
#: Goal: Subutai over SW-only under RR and under CSA, at least this share of the same ratio under
#: OAT (the hardware keeps its advantage under sharing).
SHARING_GOAL = 0.9


def set_runs(lines):
    """The runs of a capture, in order: each {"set": record, "instances": [record, ...], "output":
    {instance: {"checksum": (program, value), "run": record}}, "label": {...}}. A run starts at a
    ``multi_label`` record the benchmark adds before each run's output."""
    runs, current = [], None
    instance_line = re.compile(r"^\[(\d+)\] (.*)$")
    for number, line, record in numbered_lines(lines):
        m = instance_line.match(line)
        if m:
            c = CHECKSUM_RE.match(m.group(2))
            if c and current is not None:
                current["output"].setdefault(int(m.group(1)), {})["checksum"] = (c.group(1), c.group(2))
            continue
        if record is None or "stamp" in record or "run" in record:
            continue  # the framework's records: the sweep's stamp, a run's configuration
        event = record.get("event")
        if event == "multi_label":
            current = {"label": record, "set": None, "instances": [], "output": {}}
            runs.append(current)
        elif current is None:
            raise CaptureError(f"line {number}: a record before any run's label: {line.strip()}")
        elif event == "multi_instance":
            current["instances"].append(record)
        elif event == "multi_run":
            # An application with runs ("ep:2*3"): its instance's application and whether it is
            # the first run (the one measured; the others overlap it).
            current["instances"][record["instance"]].update(
                application=record["application"], first=record["first"]
            )
        elif event == "multi_set":
            current["set"] = record
        elif event == "multi_barrier":
            current["barrier"] = record
        elif event == "run" and "instance" in record:
            current["output"].setdefault(record["instance"], {})["run"] = record
        elif event == "sync" and "instance" in record:
            ops = current["output"].setdefault(record["instance"], {}).setdefault("sync", {})
            ops[(record["primitive"], record["op"])] = record
    for run in runs:
        if run["set"] is None:
            raise CaptureError(f"run {run['label']}: no multi_set record (the run did not end)")
    return runs


def alone_times(runs):
    """{(set, tiles, backend): {program: cycles}}: each program's mean duration in the oat run."""
    alone = {}
    for run in runs:
        label = run["label"]
        if label["policy"] != "oat":
            continue
        durations = {}
        for inst in run["instances"]:
            if inst["finished"]:
                durations.setdefault(inst["program"], []).append(inst["end"] - inst["start"])
        alone[(label["set"], label["tiles"], label["backend"])] = {
            p: statistics.mean(d) for p, d in durations.items()
        }
    return alone


def metrics(runs, reference):
    """(rows, app_rows) of multi.csv and multi_apps.csv. ``reference`` {program: checksum} is the
    host build's; a missing oat run of a set and backend is an error (no time alone)."""
    alone = alone_times(runs)
    oat_makespan = {
        (r["label"]["set"], r["label"]["tiles"], r["label"]["backend"]): r["set"]["makespan"]
        for r in runs
        if r["label"]["policy"] == "oat"
    }
    rows, app_rows = [], []
    for run in runs:
        label, record = run["label"], run["set"]
        key = (label["set"], label["tiles"], label["backend"])
        if key not in alone:
            raise CaptureError(f"{label}: no oat run of this set and backend (the times alone)")
        # The run's configuration: the first columns of both tables.
        config = [
            label["set"],
            label["tiles"],
            label["backend"],
            label["policy"],
            f"{label['ts_us'] / 1000:g}",
        ]
        slowdowns, weighted, all_ok = [], 0.0, record["finished"] == record["instances"]
        for inst in run["instances"]:
            k, program = inst["instance"], inst["program"]
            out = run["output"].get(k, {})
            checksum = out.get("checksum", (None, None))[1]
            ok = (
                inst["finished"]
                and inst["exit"] == 0
                and checksum is not None
                and checksum == reference.get(program)
            )
            all_ok = all_ok and ok
            turnaround = inst["end"] if inst["finished"] else None
            t_alone = alone[key].get(program)
            slowdown = turnaround / t_alone if turnaround and t_alone else None
            if slowdown:
                slowdowns.append(slowdown)
                weighted += 1 / slowdown
            app_rows.append(
                config
                + [
                    k,
                    program,
                    inst["threads"],
                    inst["start"],
                    turnaround if turnaround is not None else "",
                    round(t_alone) if t_alone else "",
                    f"{slowdown:.3f}" if slowdown else "",
                    checksum or "",
                    "yes" if ok else "no",
                ]
            )
        unfairness = max(slowdowns) / min(slowdowns) if slowdowns else None
        finished = record["finished"] == record["instances"]
        makespan = record["makespan"] if finished else ""
        rows.append(
            config
            + [
                makespan,
                f"{unfairness:.3f}" if unfairness and finished else "",
                f"{weighted:.3f}" if finished else "",
                record["req_outside_cs"],
                record["req_cs_csa"],
                record["req_cs_rr"],
                "yes" if all_ok else "no",
                record["instances"],
                record["finished"],
                f"{oat_makespan[key] / makespan:.3f}" if finished else "",
                record.get("busy", ""),
                f"{record['busy'] / (label['tiles'] * makespan):.3f}"
                if finished and "busy" in record
                else "",
                *move_costs(record),
            ]
        )
    return rows, app_rows


def move_costs(record):
    """A run's moves between kernels and what one cost on average (cycles from its start on the
    source core to the thread ready on its target, and of both kernels' work on it): empty
    without migration."""
    moved = record.get("moved")
    if not moved:
        return [moved if moved is not None else "", "", ""]
    return [moved, round(record["move_latency"] / moved), round(record["move_work"] / moved)]


def _row(rows, **match):
    index = {f: i for i, f in enumerate(CSV_FIELDS)}
    found = [r for r in rows if all(str(r[index[k]]) == str(v) for k, v in match.items())]
    return found[0] if found else None


def _val(row, field):
    return None if row is None or row[CSV_FIELDS.index(field)] == "" else float(row[CSV_FIELDS.index(field)])


def goals(rows, tiles):
    """Rows of the goal table, per set and timeslot (Subutai unless said): CSA over OAT against
    the paper's; Subutai over SW-only under OAT against the paper's; that ratio under RR and
    under CSA as a share of the one under OAT; CSA's makespan and unfairness against RR's, each
    backend. Every figure a goal needs missing counts as not met."""
    out, met = [], True
    sets = [s for s in SETS[tiles] if any(r[0] == s and r[1] == tiles for r in rows)]
    for s in sets:

        def makespan(backend, policy, ts=None):
            match = dict(set=s, tiles=tiles, backend=backend, policy=policy)
            return _val(_row(rows, **match, **({"ts_ms": ts} if ts else {})), "makespan")

        oat_hw, oat_sw = makespan("subutai", "oat"), makespan("swonly", "oat")
        oat_ratio = oat_sw / oat_hw if oat_hw and oat_sw else None
        ts_values = sorted({r[4] for r in rows if r[0] == s and r[1] == tiles and r[3] == "csa"}, key=float)
        for ts in ts_values:
            csa_hw, rr_hw = makespan("subutai", "csa", ts), makespan("subutai", "rr", ts)
            csa_sw, rr_sw = makespan("swonly", "csa", ts), makespan("swonly", "rr", ts)
            csa_over_oat = oat_hw / csa_hw if oat_hw and csa_hw else None
            keep_rr = rr_sw / rr_hw / oat_ratio if rr_sw and rr_hw and oat_ratio else None
            keep_csa = csa_sw / csa_hw / oat_ratio if csa_sw and csa_hw and oat_ratio else None
            csa_vs_rr, fair = [], True
            for backend in ("subutai", "swonly"):
                rr = _row(rows, set=s, tiles=tiles, backend=backend, policy="rr", ts_ms=ts)
                csa = _row(rows, set=s, tiles=tiles, backend=backend, policy="csa", ts_ms=ts)
                if _val(rr, "makespan") and _val(csa, "makespan"):
                    worse = 100 * (_val(csa, "makespan") / _val(rr, "makespan") - 1)
                    csa_vs_rr.append(worse)
                    fair = fair and _val(csa, "unfairness") <= _val(rr, "unfairness")
                else:
                    fair = False
            checks = [
                csa_over_oat is not None and csa_over_oat >= PAPER_CSA_OVER_OAT[s],
                oat_ratio is not None and oat_ratio >= PAPER_SUBUTAI_OVER_SWONLY_OAT[s],
                keep_rr is not None and keep_rr >= SHARING_GOAL,
                keep_csa is not None and keep_csa >= SHARING_GOAL,
                len(csa_vs_rr) == 2 and max(csa_vs_rr) <= CSA_OVER_RR_GOAL and fair,
            ]
            met = met and all(checks)

            def cell(value, paper=None, ok=True, fmt="{:.2f}×"):
                text = fmt.format(value) if value is not None else "–"
                text += f" ({fmt.format(paper)})" if paper is not None else ""
                return text if ok else f"**{text}**"

            out.append(
                [
                    s,
                    ts,
                    cell(csa_over_oat, PAPER_CSA_OVER_OAT[s], checks[0]),
                    cell(oat_ratio, PAPER_SUBUTAI_OVER_SWONLY_OAT[s], checks[1]),
                    cell(keep_rr, ok=checks[2], fmt="{:.2f}"),
                    cell(keep_csa, ok=checks[3], fmt="{:.2f}"),
                    cell(None if not csa_vs_rr else max(csa_vs_rr), ok=checks[4], fmt="{:+.1f} %"),
                    "yes" if all(checks) else "**no**",
                ]
            )
    return out, met


def busy_table(rows):
    """Rows of the busy-cores table: per set, tiles, timeslot and policy, both backends side by
    side (runs without the count are left out)."""
    out = []
    # In the runs' order (set, then its configurations), each once.
    keys = list(dict.fromkeys((r[0], r[1], r[4], r[3]) for r in rows if r[16] != ""))
    for s, tiles, ts, policy in keys:
        cells = []
        for backend in ("swonly", "subutai"):
            r = _row(rows, set=s, tiles=tiles, backend=backend, policy=policy, ts_ms=ts)
            ok = r is not None and r[16] != ""
            cells += [f"{float(r[16]):.1%}" if ok else "", f"{r[15] / 1e6:.1f}" if ok else ""]
        out.append([s, tiles, ts, policy] + cells)
    return out


def report(runs, reference, results_dir=RESULTS_DIR, name="multi"):
    """Write results/<name>.{csv,md,png} and <name>_apps.csv; return the console table."""
    rows, app_rows = metrics(runs, reference)
    save_csv(name, CSV_FIELDS, rows, results_dir)
    save_csv(f"{name}_apps", APP_FIELDS, app_rows, results_dir)
    tiles_list = sorted({r[1] for r in rows})
    header = columns(
        "set | tiles | backend | policy | TS (ms) | makespan | over OAT | unfairness | weighted speed-up | "
        "busy | req. not CS | req. CS (CSA) | req. CS (RR) | checksums | moves | move latency | move work"
    )
    # The CSV's columns in the order of the header, the backend by its name.
    table = [
        [*r[:2], BACKEND_NAMES[r[2]], *r[3:6], f"{float(r[14]):.2f}×", *r[6:8], r[16], *r[8:12], *r[17:20]]
        for r in rows
    ]
    lines = [
        "# Several applications at once: OAT, RR and CSA scheduling (TPDS'21 section VII)\n",
        "Zephyr on every tile, each application one thread per tile (a set of N puts N threads on "
        "every core), programs at `-i simsmall -s 1`. Times in cycles at 100 MHz (1 ms = 100,000 "
        "cycles). Makespan: from the set's start to its last application's end; an application's "
        "time alone is its own duration in the OAT run of the same set and backend; slowdown = "
        "turnaround / time alone; unfairness = largest / smallest slowdown (Eq. 1); weighted "
        "speed-up = sum of time alone / turnaround. Schedule requests (Table VII): a timeslot's end "
        "while an application thread runs, and each block of one, by what it held. Moves (rr-steal): "
        "threads that moved between kernels; a move's latency, from its start on the source core to "
        "the thread ready on its target, and its work, both kernels' cycles on it, on average.\n",
        "## All runs (Fig. 13's makespans)\n",
        markdown_table(header, table),
    ]
    for tiles in tiles_list:
        goal_rows, met = goals(rows, tiles)
        lines += [
            f"\n## Goals, {tiles} tiles\n",
            "TPDS'21's own comparisons, Subutai unless said, the paper's figure in brackets (eight "
            "64-thread applications on 64 cores): CSA over OAT in makespan (goal: at least the "
            "paper's); Subutai over SW-only under OAT (goal: at least the paper's); Subutai over "
            f"SW-only under RR and under CSA as a share of that ratio under OAT (goal: at least "
            f"{SHARING_GOAL:g}); CSA's makespan against RR's, the worse backend (goal: at most "
            f"+{CSA_OVER_RR_GOAL:g} %, and CSA's unfairness at most RR's with both). A goal not "
            "met is in bold.\n",
            markdown_table(
                columns(
                    "set | TS (ms) | CSA over OAT | Subutai over SW-only, OAT | kept under RR | "
                    "kept under CSA | CSA vs RR makespan | met"
                ),
                goal_rows,
            ),
            f"\nAll goals met at {tiles} tiles: {'yes' if met else 'no'}.\n",
        ]
        paper = []
        for s in SETS[tiles]:
            oat_sw = _val(_row(rows, set=s, tiles=tiles, backend="swonly", policy="oat"), "makespan")
            oat_hw = _val(_row(rows, set=s, tiles=tiles, backend="subutai", policy="oat"), "makespan")
            csa = [
                _val(r, "makespan")
                for r in rows
                if r[0] == s and r[1] == tiles and r[2] == "subutai" and r[3] == "csa"
            ]
            if not (oat_sw and oat_hw and csa):
                continue
            paper.append(
                [
                    s,
                    f"{oat_sw / oat_hw:.2f}×",
                    f"{PAPER_SUBUTAI_OVER_SWONLY_OAT[s]:.2f}×",
                    f"{oat_hw / min(csa):.2f}×",
                    f"{PAPER_CSA_OVER_OAT[s]:.2f}×",
                ]
            )
        lines += [
            f"\n## Fig. 13 beside the paper's, {tiles} tiles\n",
            "The paper: sets of eight 64-thread applications on 64 cores, simulated from traces; CSA "
            "over OAT with Subutai (ours: the best timeslot).\n",
            markdown_table(
                ["set", "Subutai over SW-only, OAT", "paper", "CSA over OAT (Subutai)", "paper"], paper
            ),
        ]
        unfair = []
        for s in SETS[tiles]:
            ts_values = sorted(
                {r[4] for r in rows if r[0] == s and r[1] == tiles and r[3] == "csa"}, key=float
            )
            for ts in ts_values:
                vals = [
                    _val(_row(rows, set=s, tiles=tiles, backend=b, policy=p, ts_ms=ts), "unfairness")
                    for b in ("swonly", "subutai")
                    for p in ("rr", "csa")
                ]
                unfair.append(
                    [s, ts]
                    + [f"{v:.3f}" if v else "" for v in vals]
                    + [" / ".join(f"{v:.2f}" for v in PAPER_UNFAIRNESS[s])]
                )
        lines += [
            f"\n## Table X: unfairness, {tiles} tiles\n",
            markdown_table(
                columns(
                    "set | TS (ms) | SW-only RR | SW-only CSA | Subutai RR | Subutai CSA | paper (same order)"
                ),
                unfair,
            ),
        ]
        requests = []
        for r in rows:
            if r[1] == tiles and r[3] in ("csa", "csa-nolimit"):
                total = r[8] + r[9] + r[10]
                share = f"{100 * (r[9] + r[10]) / total:.1f} %" if total else ""
                requests.append([r[0], BACKEND_NAMES[r[2]], *r[3:5], *r[8:11], share])
        lines += [
            f"\n## Table VII: schedule requests under CSA, {tiles} tiles\n",
            "Paper (64 cores, 1 ms): "
            + "; ".join(f"{k}: {a:,} / {b:,} / {c:,}" for k, (a, b, c) in PAPER_TABLE_VII.items())
            + " (not CS / CS under CSA / CS under RR).\n",
            markdown_table(
                ["set", "backend", "policy", "TS (ms)", "not CS", "CS (CSA)", "CS (RR)", "share in CS"],
                requests,
            ),
        ]
    lines += [
        "\n## The cores' work: what they did not sleep\n",
        "Busy: the cores' cycles from the set's start to the launcher's reading, less what they "
        "slept in their idle threads (each `wfi` timed), over tiles × makespan; work: those cycles, "
        "millions of core-cycles. They include the set's instructions, its synchronization calls, "
        "switches and stalls, and the spin of a waiter alone on its core, which waits for its "
        "wake-up without sleeping (so under OAT, with one thread a core, barrier waits count "
        "busy). The reading comes after the last end, when the launcher has woken, and what the "
        "cores did in between is counted too, so a share can pass 1: it bounds the cores' "
        "occupation over the makespan from above, it does not measure it.\n",
        markdown_table(
            columns(
                "set | tiles | TS (ms) | policy | SW-only busy | SW-only work | Subutai busy | Subutai work"
            ),
            busy_table(rows),
        ),
    ]
    lines += [
        "\n## Where the time goes: synchronization calls under sharing\n",
        "Cycles per call of every instance of a run, waiting included (the benchmark harness's "
        "counts): a hardware mutex is handed to the next waiter in its queue, which may be "
        "waiting for its core while the mutex waits for it; a software mutex goes to whichever "
        "thread runs first.\n",
        markdown_table(
            ["set", "tiles", "backend", "policy", "TS (ms)", "mutex lock", "cond wait", "barrier wait"],
            sync_costs(runs),
        ),
    ]
    with open(os.path.join(results_dir, f"{name}.md"), "w") as f:
        f.write("\n".join(lines))
    plot(rows, os.path.join(results_dir, f"{name}.png"))
    return console_table(header, table)


def sync_costs(runs):
    """Rows of the synchronization table: cycles per lock, condition wait and barrier wait."""
    out = []
    for run in runs:
        label, totals = run["label"], {}
        for output in run["output"].values():
            for key, record in output.get("sync", {}).items():
                count, time = totals.get(key, (0, 0))
                totals[key] = (count + record["count"], time + record["time"])

        def per_call(key):
            count, time = totals.get(key, (0, 0))
            return f"{time / count:,.0f}" if count else ""

        calls = [per_call(k) for k in (("mutex", "lock"), ("cond", "wait"), ("barrier", "wait"))]
        ts = f"{label['ts_us'] / 1000:g}"
        out.append(
            [label["set"], label["tiles"], BACKEND_NAMES[label["backend"]], label["policy"], ts, *calls]
        )
    return out


def plot(rows, path):
    """Fig. 13's form: makespan per set, policy (and timeslot) and backend."""
    tiles_list = sorted({r[1] for r in rows})
    sets = [s for s in ("bodytrack", "streamcluster", "x264", "mix") if any(r[0] == s for r in rows)]
    fig, axes = new_figure(
        len(tiles_list), len(sets), figsize=(4 * len(sets), 3.6 * len(tiles_list)), squeeze=False
    )
    for i, tiles in enumerate(tiles_list):
        for j, s in enumerate(sets):
            ax = axes[i][j]
            mine = [r for r in rows if r[0] == s and r[1] == tiles]
            configs = []
            for r in mine:
                c = (POLICIES.index(r[3]), float(r[4]), r[3] if r[3] == "oat" else f"{r[3]}\n{r[4]} ms")
                if c not in configs:
                    configs.append(c)
            configs.sort()
            width = 0.4
            for k, backend in enumerate(("swonly", "subutai")):
                ys = [
                    _val(
                        _row(
                            rows,
                            set=s,
                            tiles=tiles,
                            backend=backend,
                            policy=c[2].split("\n")[0],
                            ts_ms=f"{c[1]:g}",
                        ),
                        "makespan",
                    )
                    or 0
                    for c in configs
                ]
                ax.bar(
                    [x + (k - 0.5) * width for x in range(len(configs))],
                    [y / 1e6 for y in ys],
                    width,
                    label=BACKEND_NAMES[backend],
                )
            ax.set_xticks(range(len(configs)))
            ax.set_xticklabels([c[2] for c in configs], fontsize=6)
            ax.set_title(f"{s} ×{len(SETS[tiles][s])}, {tiles} tiles", fontsize=9)
            ax.set_ylabel("makespan (M cycles)")
            ax.legend(fontsize=7)
    save_figure(fig, path, 110)


MAX_CYCLES = 400_000_000
#: The launcher's deadline (ms of simulated time): several times the longest makespan.
DEADLINE_MS = {8: 300, 16: 1000}
#: Timeslots: TPDS'21's 1 ms at 1 GHz (10^6 cycles: 10 ms at 100 MHz) and a shorter one.
DEFAULT_TS_MS = (1.0, 10.0)


def configurations(ts_ms, policies=POLICIES):
    """(policy, ts_us) of a set and backend, in the order of the report: oat once, rr and csa at
    every timeslot, the variants (csa-nolimit, rr-core, rr-steal) at the longest."""
    ts_us = [round(t * 1000) for t in ts_ms]
    longest = ts_us[-1]
    every = [("oat", longest)] + [("rr", t) for t in ts_us] + [("csa", t) for t in ts_us]
    every += [(p, longest) for p in ("csa-nolimit", "rr-core", "rr-steal")]
    return [(p, t) for p, t in every if p in policies]


def kernel_policy(policy):
    """The kernel's policy of a schedule and the Kconfig it adds."""
    return VARIANTS.get(policy, (policy, []))


def multi_model(tiles):
    """The SoC of the sets: Zephyr's module's (soc.zephyr.multi_soc)."""
    from soc.zephyr import multi_soc

    return ModelConfig.of(tiles, **multi_soc(tiles))


def run_name(label):
    """How a problem names a run: its set, backend and policy."""
    return f"{label['set']} {label['backend']} {label['policy']}"


def wrong_checksums(runs, reference, name=run_name):
    """An instance whose checksum is not the host build's, for each such instance."""
    return [
        f"{name(r['label'])}: instance {k} ({o.get('checksum')})"
        for r in runs
        for k, o in r["output"].items()
        if o.get("checksum", (None, None))[1] != reference.get(o.get("checksum", (None, None))[0])
    ]


def check_instances(runs, reference, may_not_finish=lambda label: False):
    """Problems: an instance whose checksum is not the host build's, or that did not finish when
    it had to."""
    wrong = wrong_checksums(runs, reference)
    unfinished = [
        f"{run_name(r['label'])}: an instance did not finish"
        for r in runs
        for i in r["instances"]
        if not may_not_finish(r["label"]) and (not i["finished"] or i["exit"] != 0)
    ]
    return wrong + unfinished


class ApplicationSets(Experiment):
    """What multi and tidon share: sets of programs run by zephyr-app/apps/multi under Zephyr on
    every tile, at the benchmark input, every instance checked against the host build."""

    measures = MEASURES_ZEPHYR
    backends = True

    def needs_zephyr(self, args):
        return True

    def programs(self, args):
        """The programs of the sweep (their host checksums are the reference)."""
        raise NotImplementedError

    def deadline_ms(self, args):
        """The launcher's deadline (ms of simulated time)."""
        raise NotImplementedError

    def result_name(self, args):
        return self.name if args.tiles == 8 else f"{self.name}_{args.tiles}"

    def prepare(self, args):
        self.reference = host_programs.checksums(sorted(self.programs(args)), program_args("simsmall", 1))

    def build(self, model, programs, backend, policy, ts_us, args, **options):
        from soc.zephyr import build_multi

        policy, conf = kernel_policy(policy)
        conf = [f"CONFIG_SUBUTAI_MULTI_DEADLINE_MS={self.deadline_ms(args)}"] + conf
        arguments = program_args("simsmall", 1)
        return build_multi(model, list(programs), backend, policy, ts_us, arguments, conf, **options)

    def runs_and_reference(self, lines):
        """The runs of a capture and the host's checksums of their programs (the sweep's, or the
        host's build now for a saved capture)."""
        runs = set_runs(lines)
        programs = sorted({i["program"] for r in runs for i in r["instances"]})
        reference = getattr(self, "reference", None) or host_programs.checksums(
            programs, program_args("simsmall", 1)
        )
        return runs, reference


class Multi(ApplicationSets):
    name = "multi"
    title = "several applications at once (Zephyr)"
    command = "make bench-multi"
    results = ("multi_16", "multi_apps", "multi_16_apps")

    def add_arguments(self, parser):
        parser.add_argument(
            "--tiles",
            type=int,
            default=16,
            choices=sorted(SETS),
            help="SoC size (tiles): 16, the paper's load (sets of eight, 8 threads a core); 8, the "
            "quick variant (sets of four).",
        )
        parser.add_argument(
            "--sets", nargs="+", default=list(SETS[8]), choices=list(SETS[8]), help="application sets."
        )
        parser.add_argument(
            "--policies",
            nargs="+",
            default=list(POLICIES),
            choices=POLICIES,
            help="schedules (oat gives the times alone: always run).",
        )
        parser.add_argument(
            "--ts",
            type=float,
            nargs="+",
            default=list(DEFAULT_TS_MS),
            metavar="MS",
            help="timeslots of rr and csa (ms of simulated time, 0.001 to 1000).",
        )

    def validate(self, args, error):
        for t in args.ts:
            if not 0.001 <= t <= 1000 or 1_000_000 % round(t * 1000):
                error(f"--ts {t:g}: a timeslot of 1 us to 1 s that divides a second in microseconds")

    def programs(self, args):
        return {p for s in args.sets for p in SETS[args.tiles][s]}

    def deadline_ms(self, args):
        return DEADLINE_MS[args.tiles]

    def runs(self, args):
        model = multi_model(args.tiles)
        return [
            Run.of(
                f"{s} x{len(SETS[args.tiles][s])}, {b}, {p} TS {t / 1000:g} ms, {args.tiles} tiles",
                model,
                set=s,
                backend=b,
                policy=p,
                ts_us=t,
            )
            for s in args.sets
            for b in args.backends
            for p, t in configurations(sorted(args.ts), {"oat", *args.policies})
        ]

    def image(self, run, model, args):
        c = run.config
        return self.build(model, SETS[args.tiles][c["set"]], c["backend"], c["policy"], c["ts_us"], args)

    def execute(self, run, model, image, args):
        c = run.config
        # Without CSALimit a thread that keeps its critical section may keep its core: such a
        # run ends at the launcher's deadline, its unfinished applications reported (exit 3).
        exit_codes = (0, 3) if c["policy"] == "csa-nolimit" else (0,)
        label = label_record("multi_label", **c, tiles=args.tiles)
        return [label] + run_image(model, image, run.what, MAX_CYCLES, exit_codes)

    def report(self, lines, args, results_dir):
        runs, reference = self.runs_and_reference(lines)
        text = report(runs, reference, results_dir, self.result_name(args))
        # csa-nolimit may leave applications unfinished (reported as such); no other policy may.
        return text, check_instances(runs, reference, lambda label: label["policy"] == "csa-nolimit")

    def headlines(self, results):
        def parts(rows, name):
            def makespan(s, backend, policy, ts):
                for r in rows:
                    if (r["set"], r["backend"], r["policy"], r["ts_ms"]) == (s, backend, policy, ts):
                        return to_int(r["makespan"])
                raise CaptureError(
                    f"results/{name}.csv has no {s} {backend} {policy} {ts} ms run: run `{self.command}`"
                )

            out = []
            for s in dict.fromkeys(r["set"] for r in rows):
                (ts,) = {
                    r["ts_ms"]
                    for r in rows
                    if r["set"] == s and r["policy"] == "oat" and r["backend"] == "subutai"
                }
                csa = makespan(s, "subutai", "csa", ts)
                out.append(
                    f"{s} {makespan(s, 'swonly', 'rr', ts) / csa:.2f}× (CSA over OAT "
                    f"{makespan(s, 'subutai', 'oat', ts) / csa:.2f}×)"
                )
            return f"{rows[0]['tiles']} tiles, TS {ts} ms: " + ", ".join(out)

        text = [parts(results.rows("multi"), "multi")]
        sixteen = results.rows("multi_16", required=False)
        if sixteen:
            text.append(parts(sixteen, "multi_16"))
        return [
            (
                "several applications at once (Zephyr): makespan of SW-only + RR over Subutai + CSA",
                "; ".join(text),
                self.command,
            )
        ]


EXPERIMENT = Multi()
