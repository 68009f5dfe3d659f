"""Campaigns: an experiment's runs, and the models they need, as tasks of a Dask graph.

Dask (``distributed``) runs the graph on whatever it is given: by default a ``LocalCluster`` of
``--jobs`` single-threaded worker processes on this machine; ``--scheduler tcp://host:port`` a
scheduler someone started (``dask scheduler``, with ``dask worker`` processes on other machines);
``--cluster slurm`` batch jobs of a Slurm cluster through dask-jobqueue (its ``SLURMCluster``,
configured the jobqueue way, ``~/.config/dask/jobqueue.yaml``; ``--cluster-jobs`` jobs of one
worker each). A remote worker needs this checkout (the same path, on a shared file system: the
models and images it builds go to build/, the runs it keeps to build/experiments/) and the
toolchain (``make setup`` on the node's image: Verilator, the RISC-V compiler, the venv).

Each model configuration is one task, built once; each run is a task that depends on its model's.
A run's task builds its image, digests it, and looks in build/experiments/<name>/ for a run of the
same configuration, image and model (the digest of the model's hardware, what Verilator compiles:
``hardware.model_digest``; the simulation is cycle-accurate and deterministic, so they give the
same output): a sweep stopped and started again runs only what is missing, and one after a change
that left some images and the hardware as they were (code of another program, a comment, the
generator's build helpers) runs only the others. A store is plain files named by their keys: one
copied to another machine (``--store``) resumes the sweep there.
A task whose worker dies is given to another worker by the scheduler (``distributed``'s
``allowed-failures``, 3), and a run that raised is retried once (``--retries``). Runs come back in
the experiment's order whatever order they end in, so the capture does not depend on the
cluster. ``--serial`` runs everything in this process, one run after the other, through the same
functions (what a Dask-less machine, or a test's reference, uses).

Progress: a tqdm bar on the terminal with the runs done, running and left, and the time left at
the rate so far; each run's end is a line above it (its cycles and seconds, or "kept" for a run
found in the store).
"""

import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import time

from gateware.build import BUILD_DIR

#: The options of the campaign, not of the results (left out of the stamp).
CAMPAIGN_OPTIONS = ("jobs", "scheduler", "cluster", "cluster_jobs", "serial", "retries", "rerun", "store")
STORE_DIR = os.path.join(BUILD_DIR, "experiments")


def add_campaign_arguments(parser):
    from scripts.experiments.framework import positive

    group = parser.add_argument_group("campaign (Dask)")
    group.add_argument(
        "--jobs",
        "-j",
        type=positive,
        default=os.cpu_count() or 1,
        help="workers of the local cluster: runs at once (default: the cores, %(default)s).",
    )
    group.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a running Dask scheduler to use.")
    group.add_argument(
        "--cluster", choices=("local", "slurm"), default="local", help="where the workers come from."
    )
    group.add_argument(
        "--cluster-jobs", type=positive, default=4, help="--cluster slurm: batch jobs (a worker each)."
    )
    group.add_argument("--serial", action="store_true", help="no Dask: every run here, one at a time.")
    group.add_argument("--retries", type=int, default=1, help="times a run that failed is run again.")
    group.add_argument("--rerun", action="store_true", help="run everything again, ignoring kept runs.")
    group.add_argument(
        "--store",
        default=STORE_DIR,
        help="where runs are kept for a sweep started again (default: %(default)s).",
    )


@dataclasses.dataclass
class Outcome:
    """What a run's task gives back: the output lines, the image's digest, whether the run was
    kept from an earlier sweep, and its simulated cycles and host seconds."""

    lines: list
    image: "str | None"
    kept: bool
    seconds: float


def _digest(path):
    if path is None:
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run_key(experiment_name, run, image_digest, hardware):
    """The store's key of a run: its experiment, configuration, model, image and the digest of
    the model's hardware."""
    text = json.dumps(
        {
            "experiment": experiment_name,
            "run": run.label,
            "model": run.model.describe() if run.model else None,
            "image": image_digest,
            "hardware": hardware,
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def build_model_task(config):
    """A model, built unless built already (on the worker; the build lock serializes two workers
    of one machine). Returns the config for the runs that depend on it."""
    config.build(log=lambda msg: None)
    return config


def run_task(name, run, args, _model=None):
    """Build a run's image, then run it unless the store has it; its :class:`Outcome`."""
    from scripts.experiments import load
    from scripts.experiments.hardware import model_digest
    from scripts.experiments.stamp import MODEL_SOURCES, sources_digest

    experiment = load(name)
    model = run.model.build(log=lambda msg: None) if run.model else None
    image = experiment.image(run, model, args)
    digest = _digest(image)
    # A run without a model of the campaign's (a board's own SoC, built by its image step) is
    # kept by the generator's sources, which make that SoC.
    hardware = model_digest(run.model) if model else sources_digest(MODEL_SOURCES)
    path = os.path.join(args.store, name, run_key(name, run, digest, hardware) + ".txt")
    if experiment.cacheable and not args.rerun and os.path.exists(path):
        with open(path) as f:
            return Outcome(f.read().splitlines(), digest, True, 0.0)
    start = time.time()
    lines = experiment.execute(run, model, image, args)
    if experiment.cacheable:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)  # whole or absent: a run killed while writing is not kept
    return Outcome(lines, digest, False, time.time() - start)


class Progress:
    """The bar: runs done, running and left, and the time left."""

    def __init__(self, total, name):
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=name, unit="run", file=sys.stderr, dynamic_ncols=True)

    def ended(self, run, outcome, running):
        what = "kept" if outcome.kept else f"{outcome.seconds:.1f} s"
        self.bar.write(f"  {run.what}: {what}", file=sys.stderr)
        self.bar.set_postfix_str(f"running {running}, left {self.bar.total - self.bar.n - 1}", refresh=False)
        self.bar.update(1)

    def close(self):
        self.bar.close()


def _serial(experiment, runs, args):
    progress = Progress(len(runs), experiment.name)
    outcomes = []
    try:
        for config in dict.fromkeys(r.model for r in runs if r.model):
            config.build()
        for run in runs:
            outcome = run_task(experiment.name, run, args)
            progress.ended(run, outcome, 0)
            outcomes.append(outcome)
    finally:
        progress.close()
    return outcomes


def _cluster(args, workers):
    """The Dask cluster the options ask for (None: a scheduler's address is given)."""
    if args.scheduler:
        return None
    if args.cluster == "slurm":
        from dask_jobqueue import SLURMCluster

        cluster = SLURMCluster(processes=1, cores=1)
        cluster.scale(jobs=args.cluster_jobs)
        return cluster
    from dask.distributed import LocalCluster

    return LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
    )


def _running(client):
    """Tasks running now: the tasks the workers are processing, at most a thread's worth each."""
    try:
        processing = client.processing()
        threads = client.nthreads()
    except Exception:  # the scheduler's view is a courtesy of the bar, never a failure of the run
        return 0
    return sum(min(len(keys), threads.get(w, 1)) for w, keys in processing.items())


def stop_models():
    """On a worker: kill the models it is running (a sweep that was stopped, whose tasks will not
    be waited for); how many. Workers live on (``--scheduler``), so later runs may start."""
    from soc import simulation

    # The registry soc.simulation keeps of its process's running models (its SIGTERM handler's).
    with simulation._RUNNING_LOCK:
        running = list(simulation._RUNNING)
    for proc in running:
        proc.kill()
    return len(running)


def _dask(experiment, runs, args):
    from dask.distributed import Client, as_completed

    # An exclusive experiment measures the host: one worker, one run at a time.
    workers = 1 if experiment.exclusive else args.jobs
    cluster = _cluster(args, workers)
    client = Client(args.scheduler or cluster)
    progress = Progress(len(runs), experiment.name)
    futures = []
    try:
        models = {
            config: client.submit(build_model_task, config, pure=False, retries=args.retries)
            for config in dict.fromkeys(r.model for r in runs if r.model)
        }
        futures = [
            client.submit(
                run_task,
                experiment.name,
                run,
                args,
                models.get(run.model),
                pure=False,
                retries=args.retries,
                priority=experiment.priority(run),
            )
            for run in runs
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        outcomes = [None] * len(runs)
        # This client's loop, not the process's default client's (dask/distributed#4357).
        for future in as_completed(futures, loop=client.loop):
            i = index[future.key]
            outcomes[i] = future.result()  # a run that failed every try raises here
            progress.ended(runs[i], outcomes[i], _running(client))
        return outcomes
    except BaseException:
        # Stopped (SIGTERM, Ctrl-C) or failed: the workers' models would compute on as orphans.
        client.cancel(futures)
        try:
            client.run(stop_models)
        except Exception:  # a worker gone already has no model left either
            pass
        raise
    finally:
        progress.close()
        client.close()
        if cluster is not None:
            cluster.close()


def sweep(experiment, runs, args):
    """Every run's :class:`Outcome`, in the order of ``runs``."""
    if args.serial:
        return _serial(experiment, runs, args)
    return _dask(experiment, runs, args)
