"""The project's experiments, one module each (:mod:`scripts.experiments.framework`).

``python -m scripts.experiments NAME [options]`` runs one (``make bench-*`` do); ``python -m
scripts.experiments report NAME CAPTURE`` writes its results from a saved capture (a board's);
``python -m scripts.experiments list`` names them.
"""

import importlib

#: name -> module of scripts/experiments/, in the order of the figures table (docs/benchmarks.md).
EXPERIMENTS = tuple("noc fsm prodcons apps mem rwlock switch multi tidon chan simspeed board_sim".split())


def load(name):
    """The experiment called ``name`` (an instance of its module's Experiment subclass)."""
    if name not in EXPERIMENTS:
        raise KeyError(f"no experiment {name!r} (have: {', '.join(EXPERIMENTS)})")
    return importlib.import_module(f"scripts.experiments.{name}").EXPERIMENT


def experiment_of_result(result):
    """The experiment whose results include results/<result>.csv (a file name or a name)."""
    result = result.removesuffix(".csv")
    for name in EXPERIMENTS:
        experiment = load(name)
        if experiment.owns(result):
            return experiment
    raise KeyError(f"no experiment writes results/{result}.csv")
