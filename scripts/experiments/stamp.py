"""What made a result: its stamp, and whether HEAD still measures the same thing.

A stamp is a JSON object that every capture (its first ``@subutai {"stamp": ...}`` record) and
every CSV (its first line, ``# stamp {...}``) of an experiment carries: the commit the runs were
made at and whether the tree was dirty, the experiment's arguments, the model configurations, and
the digest of the sources it measures (:attr:`Experiment.measures`).

Staleness is decided on those sources, not on the commit: a result is fresh when the digest of
the files its experiment measures, in the working tree now, equals its stamp's. The digest is
that of git's blob hashes of the tracked files under the measured paths but their documentation
(``*.md``), the committed content on a clean clone, the edited content on a dirty tree; so a
commit that touches only other files (the docs, the reports, another experiment's program) leaves
a result fresh, and any edit of what runs (gateware, SoC generator, firmware, Zephyr module, the
harness) makes it stale until it is rerun. A stamp made on a tree whose measured files were all
committed ("dirty": false) is also checked against its commit's files digested as they are now,
so a change of what the digest covers does not outdate it. Untracked files are not part of it: a
source that matters is committed.
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


#: Files under a measured path that are documentation, not what runs (their edits leave results fresh).
DOCUMENTATION = (".md",)
#: The digest's rule, recorded in every stamp: 2 leaves documentation out; stamps without it were
#: made with rule 1, which counted every tracked file.
DIGEST_RULE = 2


#: What a model is built from: the same model gives the same cycles for the same image.
MODEL_SOURCES = ("gateware", "soc")


def sources_digest(paths, commit=None, rule=DIGEST_RULE):
    """sha256 of (path, blob hash) of every tracked file under ``paths`` (but documentation, by
    rule 2), as the working tree has it or as ``commit`` had it; None outside a git checkout."""
    try:
        if commit:
            listing = _git("ls-tree", "-r", "-z", commit, "--", *paths).split("\0")
            blobs = {f: meta.split()[2] for meta, f in (e.split("\t", 1) for e in listing if e)}
        else:
            files = [f for f in _git("ls-files", "-z", "--", *paths).split("\0") if f]
            hashes = (
                _git("hash-object", "--stdin-paths", stdin="\n".join(files) + "\n").split() if files else []
            )
            blobs = dict(zip(files, hashes))
    except (OSError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256()
    for f in sorted(blobs):
        if rule == 1 or not f.endswith(DOCUMENTATION):
            h.update(f"{f} {blobs[f]}\n".encode())
    return h.hexdigest()


def make_stamp(experiment, result, options, models):
    """The stamp of a sweep of ``experiment`` writing results/<result>.* with ``options`` (a dict
    of its arguments) on ``models`` (their configurations, dicts)."""
    measures = experiment.measures_of(result)
    # Dirty: what it measures differs from the commit (an edit elsewhere, of the docs, is not).
    status = _git_or_none("status", "--porcelain", "--untracked-files=no", "--", *measures)
    return {
        "experiment": experiment.name,
        "commit": _git_or_none("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
        "measures": list(measures),
        "sources": sources_digest(measures),
        "digest_rule": DIGEST_RULE,
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


def made_from_commit(stamp, measures):
    """Whether the files a stamp measured were its commit's: the commit's digest, by the stamp's own
    rule, is the stamp's."""
    commit = stamp.get("commit")
    return bool(commit) and sources_digest(measures, commit, stamp.get("digest_rule", 1)) == stamp.get(
        "sources"
    )


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
    made = stamp.get("sources")
    if made != now and made_from_commit(stamp, measures):
        # That commit's files, digested by today's rule, stand for the measured ones.
        made = sources_digest(measures, stamp["commit"])
    if now is None or made != now:
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
        try:
            experiment = experiment_of_result(os.path.basename(path))
            stamp, _ = read_csv(path)
        except (KeyError, OSError) as e:
            # A tool's table (boards, resources) or no file: nothing stamped to check.
            print(f"{path}: not checked: {e.args[-1]}")
            status = max(status, 2)
            continue
        try:
            check(
                stamp,
                experiment.measures_of(os.path.basename(path)[:-4]),
                path,
                experiment.command_of(os.path.basename(path)[:-4]),
            )
            print(f"{path}: fresh (made at {stamp['commit'][:10]})")
        except StaleResult as e:
            print(f"{path}: stale: {e}")
            status = max(status, 1)
    sys.exit(status)


if __name__ == "__main__":
    main()
