"""What made a result: its stamp, and whether HEAD still measures the same thing.

A stamp is a JSON object that every capture (its first ``@subutai {"stamp": ...}`` record) and
every CSV (its first line, ``# stamp {...}``) of an experiment carries: the commit the runs were
made at and whether the tree was dirty, the experiment's arguments, the model configurations, and
the digest of the sources it measures (:attr:`Experiment.measures`).

Staleness is decided on those sources, not on the commit: a result is fresh when the digest of
the files its experiment measures, in the working tree now, equals its stamp's. The digest is
that of git's blob hashes of the tracked files under the measured paths (the committed content on
a clean clone, the edited content on a dirty tree), so a commit that touches only other files (the
docs, the reports, another experiment's program) leaves a result fresh, and any edit of what runs
(gateware, SoC generator, firmware, Zephyr module, the harness) makes it stale until it is rerun.
Untracked files are not part of it: a source that matters is committed.
"""

import csv
import hashlib
import json
import os
import subprocess
import sys

from gateware.build import ROOT

CSV_PREFIX = "# stamp "


class StaleResult(Exception):
    """A result whose stamp is missing or does not match what HEAD measures."""


def _git(*args, stdin=None):
    return subprocess.run(
        ["git", *args], cwd=ROOT, input=stdin, capture_output=True, text=True, check=True
    ).stdout


def _git_or_none(*args):
    try:
        return _git(*args).strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def sources_digest(paths):
    """sha256 of (path, blob hash) of every tracked file under ``paths``, as the working tree has
    it; None outside a git checkout."""
    try:
        files = [f for f in _git("ls-files", "-z", "--", *paths).split("\0") if f]
        hashes = _git("hash-object", "--stdin-paths", stdin="\n".join(files) + "\n").split() if files else []
    except (OSError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256()
    for f, blob in zip(files, hashes):
        h.update(f"{f} {blob}\n".encode())
    return h.hexdigest()


def make_stamp(experiment, result, options, models):
    """The stamp of a sweep of ``experiment`` writing results/<result>.* with ``options`` (a dict
    of its arguments) on ``models`` (their configurations, dicts)."""
    measures = experiment.measures_of(result)
    status = _git_or_none("status", "--porcelain", "--untracked-files=no")
    return {
        "experiment": experiment.name,
        "commit": _git_or_none("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
        "measures": list(measures),
        "sources": sources_digest(measures),
        "args": options,
        "models": models,
    }


def stamp_record(stamp):
    return "@subutai " + json.dumps({"stamp": stamp}, sort_keys=True)


def capture_stamp(records):
    """The stamp of a capture's records (the first ``stamp`` record), None without one."""
    return next((r["stamp"] for r in records if "stamp" in r), None)


def stamp_csv(path, stamp):
    """Put ``stamp`` as the first line of a CSV the report wrote (replacing an older one)."""
    with open(path, newline="") as f:
        lines = f.read().splitlines(keepends=True)
    if lines and lines[0].startswith(CSV_PREFIX):
        lines = lines[1:]
    with open(path, "w", newline="") as f:
        f.write(CSV_PREFIX + json.dumps(stamp, sort_keys=True) + "\n")
        f.writelines(lines)


def read_csv(path):
    """(stamp or None, rows as dicts) of a result CSV."""
    with open(path, newline="") as f:
        first = f.readline()
        stamp = json.loads(first[len(CSV_PREFIX) :]) if first.startswith(CSV_PREFIX) else None
        if stamp is None:
            f.seek(0)
        return stamp, list(csv.DictReader(f))


def changed_files(stamp, paths):
    """The measured files that differ between the stamp's commit and the working tree (a few)."""
    commit = stamp.get("commit")
    if not commit:
        return []
    names = _git_or_none("diff", "--name-only", commit, "--", *paths)
    return names.split("\n") if names else []


def check(stamp, measures, path, command):
    """Raise :class:`StaleResult` unless ``stamp`` (of the result at ``path``) measures what the
    working tree measures now; the message says why and what to run."""
    if stamp is None:
        raise StaleResult(f"{path} has no stamp (made before results were stamped): rerun `{command}`")
    if stamp.get("measures") != list(measures):
        raise StaleResult(
            f"{path} was made measuring {', '.join(stamp.get('measures') or ['?'])}, the experiment now "
            f"measures {', '.join(measures)}: rerun `{command}`"
        )
    now = sources_digest(measures)
    if now is None or stamp.get("sources") != now:
        commit = (stamp.get("commit") or "an unknown commit")[:10]
        changed = changed_files(stamp, measures)
        what = (
            f"{', '.join(changed[:4])}{f' and {len(changed) - 4} more' if len(changed) > 4 else ''} changed since"
            if changed
            else "what it measures differs" + (" (the tree was dirty)" if stamp.get("dirty") else "")
        )
        raise StaleResult(f"{path} was made at {commit}; {what}: rerun `{command}`")


def main():
    """python -m scripts.experiments.stamp RESULT.csv ...: each result's stamp, fresh or stale."""
    from scripts.experiments import experiment_of_result

    status = 0
    for path in sys.argv[1:]:
        stamp, _ = read_csv(path)
        experiment = experiment_of_result(os.path.basename(path))
        try:
            check(stamp, experiment.measures_of(os.path.basename(path)[:-4]), path, experiment.command)
            print(f"{path}: fresh (made at {stamp['commit'][:10]})")
        except StaleResult as e:
            print(f"{path}: stale: {e}")
            status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
