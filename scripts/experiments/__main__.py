"""python -m scripts.experiments NAME [options] | report NAME CAPTURE [options] | restamp CAPTURE... | list"""

import sys

from scripts.experiments import EXPERIMENTS, load
from scripts.experiments.framework import report_capture, run_experiment


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\nexperiments: " + ", ".join(EXPERIMENTS))
        return
    if argv[0] == "list":
        for name in EXPERIMENTS:
            experiment = load(name)
            print(f"{name:10} {experiment.command:24} measures {', '.join(experiment.measures)}")
        return
    if argv[0] == "restamp":
        from scripts.experiments.restamp import main as restamp

        sys.exit(restamp(argv[1:]))
    report = argv[0] == "report"
    name = argv[1] if report and len(argv) > 1 else argv[0]
    try:
        experiment = load(name)
    except KeyError as e:
        sys.exit(f"error: {e.args[0]}")
    if report:
        report_capture(experiment, argv[2:])
    else:
        run_experiment(experiment, argv[1:])


if __name__ == "__main__":
    main()
