"""Writing results: CSV, Markdown tables and console tables under results/."""

import csv
import os

from gateware.build import ROOT

RESULTS_DIR = os.path.join(ROOT, "results")


def spread(values):
    """(largest − smallest) / smallest of some figures, in percent (0 when the smallest is 0): how
    far a figure moves across layouts, links or runs of one configuration."""
    low = min(values)
    return 100.0 * (max(values) - low) / low if low else 0.0


def to_int(text):
    """An integer of a CSV cell (written as 12 or 12.0)."""
    return int(float(text))


def cycles_text(n):
    """3.39 M, 511 k, 856: three significant figures for large cycle counts."""
    if n >= 1e6:
        return f"{n / 1e6:#.3g}".rstrip(".") + " M"
    if n >= 1e4:
        return f"{n / 1e3:#.3g}".rstrip(".") + " k"
    return f"{n:,}"


def range_text(values, fmt):
    """ "a–b" of some figures formatted by ``fmt``, or one figure when they format alike."""
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def new_figure(nrows=1, ncols=1, figsize=None, **subplots):
    """A Matplotlib figure and its axes (``Figure.subplots``), drawn off-screen without pyplot's
    global state (reports run in threads and workers)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(nrows, ncols, **subplots)


def save_figure(fig, path, dpi=100):
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)


def columns(text):
    """Column names written as a Markdown header reads: ``"tiles | SW-only (cycles) | ..."``."""
    return text.split(" | ")


def markdown_table(header, rows):
    lines = [
        "| " + " | ".join(str(h) for h in header) + " |",
        "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def console_table(header, rows):
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for n, row in enumerate(cells):
        out.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def save_csv(name, header, rows, results_dir=RESULTS_DIR):
    """Write results/<name>.csv alone, for reports whose Markdown is not one table; return its path."""
    os.makedirs(results_dir, exist_ok=True)
    csv_path = os.path.join(results_dir, f"{name}.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return csv_path


def save_table(name, header, rows, title=None, notes=None, results_dir=RESULTS_DIR):
    """Write results/<name>.csv and results/<name>.md; return their paths."""
    csv_path = save_csv(name, header, rows, results_dir)
    md_path = os.path.join(results_dir, f"{name}.md")
    with open(md_path, "w") as f:
        if title:
            f.write(f"# {title}\n\n")
        f.write(markdown_table(header, rows))
        if notes:
            f.write("\n" + notes.strip() + "\n")
    return csv_path, md_path
