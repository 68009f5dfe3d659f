"""Writing results: CSV, Markdown tables and console tables under results/."""

import csv
import os
import threading

from gateware.build import ROOT

RESULTS_DIR = os.path.join(ROOT, "results")


def spread(values):
    """(largest − smallest) / smallest of some figures, in percent (0 when the smallest is 0): how
    far a figure moves across layouts, links or runs of one configuration."""
    low = min(values)
    return 100.0 * (max(values) - low) / low if low else 0.0


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


def save_capture(name, lines, results_dir=RESULTS_DIR):
    """Keep a run's whole output as results/<name>_capture.txt (the reports' input); its path."""
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{name}_capture.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


class PartialCapture:
    """The lines of every run that ended, appended to a file as it ends (runs end in any order;
    each run's lines stay together, its label record first)."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()

    def add(self, lines):
        with self.lock, open(self.path, "a") as f:
            f.write("\n".join(lines) + "\n")
        return lines


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
