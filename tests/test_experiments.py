"""The experiment framework (scripts/experiments/): a sweep on a Dask LocalCluster gives the serial
run's results, a worker killed mid-sweep and a sweep stopped and started again both end with the
complete, identical results, and a result whose stamp does not match what the tree measures is
refused by the figures with a clear message."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from gateware.build import ROOT
from scripts.experiments import EXPERIMENTS, experiment_of_result, load
from scripts.experiments.stamp import CSV_PREFIX, StaleResult, check, read_csv, sources_digest, stamp_csv

# A small sweep: prodcons on 2 tiles, both backends, three layouts (six runs of about a second).
SWEEP = ["prodcons", "--tiles", "2", "--layouts", "3"]


def sweep(tmp_path, name, *extra):
    """Run the sweep as `make bench` would; (its results directory, its output)."""
    results = tmp_path / name
    p = subprocess.run(
        [sys.executable, "-m", "scripts.experiments", *SWEEP, "--results", str(results), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    return results, p.stdout + p.stderr


def table(results):
    """The CSVs of a sweep without their stamps (a stamp says which sweep made them)."""
    out = {}
    for name in ("prodcons.csv", "prodcons_layouts.csv"):
        stamp, rows = read_csv(results / name)
        assert stamp is not None and stamp["experiment"] == "prodcons"
        out[name] = rows
    return out


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The reference: the sweep in one process, one run after the other."""
    tmp = tmp_path_factory.mktemp("serial")
    results, _ = sweep(tmp, "serial", "--serial", "--store", str(tmp / "store"))
    return table(results)


def test_every_experiment_is_a_module_with_its_command():
    for name in EXPERIMENTS:
        experiment = load(name)
        assert experiment.name == name and experiment.command and experiment.title
        assert all(os.path.exists(os.path.join(ROOT, p)) for p in experiment.measures)


def test_every_experiment_takes_its_defaults_and_refuses_a_bad_size(monkeypatch, capsys):
    """What `make bench-*` pass with no options parses (an experiment with a --tiles of its own,
    such as multi's single size, included), and a mesh that cannot be is refused by name."""
    from scripts.experiments.framework import parse_arguments

    # The options, not the Zephyr tree (which test_zephyr covers): its check always passes here.
    monkeypatch.setattr("soc.zephyr.require_zephyr", lambda: None)
    for name in EXPERIMENTS:
        args = parse_arguments(load(name), [])
        assert args.results and args.jobs >= 1
    multi = parse_arguments(load("multi"), [])
    assert len(load("multi").runs(multi)) == 4 * 2 * 8  # sets x backends x (oat, rr x3, csa x3, nolimit)
    for name in ("prodcons", "apps", "rwlock"):
        with pytest.raises(SystemExit):
            parse_arguments(load(name), ["--tiles", "5"])
        assert "5" in capsys.readouterr().err
    assert experiment_of_result("zephyr_prodcons").name == "prodcons"
    assert experiment_of_result("apps_links.csv").name == "apps"
    assert experiment_of_result("noc_pingpong").name == "noc"


def test_local_cluster_gives_the_serial_results(tmp_path, serial):
    results, output = sweep(tmp_path, "dask", "--jobs", "2", "--store", str(tmp_path / "store"))
    assert table(results) == serial
    # The capture: the stamp first, then every run's configuration and image before its output.
    lines = (results / "prodcons_capture.txt").read_text().splitlines()
    assert lines[0].startswith('@subutai {"stamp": ')
    assert sum('{"run": ' in line for line in lines) == 6


def models_of(pid):
    """The models (Vsim processes) among a process's descendants now; processes come and go."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [p for p in children if running(p, "Vsim")]


def running(process, name=None):
    """Whether a process runs (not gone, not a zombie), and is called name if given."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE and name in (None, process.name())
    except psutil.NoSuchProcess:
        return False


def test_a_sweep_started_again_runs_only_what_is_missing(tmp_path, serial):
    store = tmp_path / "store"
    cmd = [sys.executable, "-m", "scripts.experiments", *SWEEP, "--results", str(tmp_path / "stopped")]
    first = subprocess.Popen(
        [*cmd, "--jobs", "2", "--store", str(store)], cwd=ROOT, stderr=subprocess.DEVNULL
    )
    # Stop it (SIGTERM, as a batch system or a user would) once some runs are kept, while its
    # workers run models.
    deadline, models = time.time() + 600, []
    while time.time() < deadline and first.poll() is None:
        kept = list(store.glob("prodcons/*.txt"))
        models = models_of(first.pid)
        if len(kept) >= 2 and models:
            break
        time.sleep(0.1)
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=120)
    kept = len(list(store.glob("prodcons/*.txt")))
    assert 2 <= kept, "the sweep ended before any run was kept"
    # No model of the stopped sweep computes on.
    assert models, "the sweep ended before its workers ran a model"
    alive = psutil.wait_procs(models, timeout=30)[1]
    assert not [p for p in alive if running(p)], "a model outlived its sweep"
    results, output = sweep(tmp_path, "restarted", "--jobs", "2", "--store", str(store))
    assert output.count(": kept") == kept
    assert table(results) == serial


def test_a_stopped_sweep_stops_the_models_its_workers_run():
    """What a sweep stopped by SIGTERM or Ctrl-C does to its workers (campaign.stop_models): a
    worker computing `busy` for ever (no end but its cycle limit) has its model killed, and the
    run ends at once instead of computing on as an orphan."""
    from dask.distributed import Client, LocalCluster

    from scripts.experiments.campaign import stop_models
    from scripts.experiments.framework import ModelConfig, RunFailed, run_image

    model = ModelConfig.of(2)
    model.build(log=lambda msg: None)

    def forever():
        built = model.build(log=lambda msg: None)
        return run_image(built, built.build_firmware("busy"), "busy", 10**12)

    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0", silence_logs=40) as cluster:
        with Client(cluster) as client:
            future = client.submit(forever, pure=False)
            deadline = time.time() + 300
            while time.time() < deadline and not sum(client.run(stop_models_count_only).values()):
                time.sleep(0.2)
            assert list(client.run(stop_models).values()) == [1]
            # Killed, the run fails (the timeout only keeps a model that outlived it from hanging
            # the suite: left alone, it would compute for days).
            with pytest.raises(RunFailed):
                future.result(timeout=120)


def stop_models_count_only():
    """On a worker: the models it runs (soc.simulation's registry), left running."""
    from soc import simulation

    with simulation._RUNNING_LOCK:
        return len(simulation._RUNNING)


def test_a_worker_killed_mid_sweep_is_replaced_and_its_run_done_again(tmp_path, serial):
    from dask.distributed import Client, LocalCluster

    from scripts.experiments.framework import parse_arguments, write_report, capture

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0", silence_logs=40) as cluster:
        # The sweep's client is the only one while it runs (as with `--scheduler`, where the
        # scheduler is another process): a second client of this process would share its futures.
        with Client(cluster) as client:
            pids = list(client.run(os.getpid).values())
        experiment = load("prodcons")
        args = parse_arguments(
            experiment,
            SWEEP[1:] + ["--scheduler", cluster.scheduler_address, "--store", str(tmp_path / "store")],
        )

        def kill_one_worker_when_a_run_is_kept():
            deadline = time.time() + 600
            while time.time() < deadline and not list((tmp_path / "store").glob("prodcons/*.txt")):
                time.sleep(0.1)
            os.kill(pids[0], signal.SIGKILL)

        killer = threading.Thread(target=kill_one_worker_when_a_run_is_kept)
        killer.start()
        lines, stamp = capture(experiment, args)
        killer.join()
        with Client(cluster) as client:
            assert pids[0] not in client.run(os.getpid).values()
    results = tmp_path / "killed"
    write_report(experiment, lines, args, str(results), stamp)
    assert table(results) == serial


# -- stamps ---------------------------------------------------------------------------------


def test_a_result_whose_sources_changed_is_refused_by_the_figures(tmp_path):
    from scripts.figures import rows

    results = tmp_path / "results"
    shutil.copytree(os.path.join(ROOT, "results"), results)
    stamp, _ = read_csv(results / "bench_fsm.csv")
    assert stamp is not None, "results/bench_fsm.csv is not stamped: run `make bench-fsm`"
    check(stamp, load("fsm").measures, "bench_fsm.csv", "make bench-fsm")  # fresh as committed
    fresh = [r for r in rows(str(results)) if r[2] == "make bench-fsm"]
    assert fresh and not fresh[0][1].startswith("refused")
    stamp_csv(results / "bench_fsm.csv", dict(stamp, sources="0" * 64))
    refused = []
    (figure, value, command) = next(r for r in rows(str(results), refused) if r[2] == "make bench-fsm")
    assert value.startswith("refused: ") and "rerun `make bench-fsm`" in value
    message = value[len("refused: ") :]
    assert message in refused and f"bench_fsm.csv was made at {stamp['commit'][:10]}" in message


def test_a_stale_optional_part_is_refused_apart_from_its_headline(tmp_path):
    """prodcons's headline with a fresh bare-metal result and a stale Zephyr one: the figure
    stands, and the Zephyr result gets a row of its own that refuses it and names its command."""
    from scripts.figures import rows

    results = tmp_path / "results"
    shutil.copytree(os.path.join(ROOT, "results"), results)
    prodcons = load("prodcons")
    fresh = {"commit": None, "measures": list(prodcons.measures_of("prodcons"))}
    stamp_csv(results / "prodcons.csv", dict(fresh, sources=sources_digest(fresh["measures"])))
    stamp_csv(results / "zephyr_prodcons.csv", dict(fresh, measures=["zephyr-app"], sources="0" * 64))
    ours = [r for r in rows(str(results)) if r[0].startswith(prodcons.title)]
    assert len(ours) == 2 and not ours[0][1].startswith("refused")
    assert ours[1][0].endswith("(zephyr_prodcons)") and ours[1][1].startswith("refused: ")
    assert ours[1][2] == "make zephyr-bench"


def test_make_figures_names_the_refused_results(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(os.path.join(ROOT, "results"), results)
    path = results / "bench_fsm.csv"
    path.write_text(
        "".join(line for line in path.read_text().splitlines(True) if not line.startswith(CSV_PREFIX))
    )
    readme = tmp_path / "benchmarks.md"
    shutil.copy(os.path.join(ROOT, "docs", "benchmarks.md"), readme)
    p = subprocess.run(
        [
            sys.executable,
            "scripts/figures.py",
            "--results",
            str(results),
            "--doc",
            str(readme),
            "--strict",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1
    assert (
        "refused: " in p.stderr and "bench_fsm.csv has no stamp" in p.stderr and "make bench-fsm" in p.stderr
    )


def test_the_sources_digest_follows_the_content_of_what_is_measured(tmp_path):
    digest = sources_digest(["gateware/subutai"])
    assert digest == sources_digest(["gateware/subutai"]) and len(digest) == 64
    assert digest != sources_digest(["gateware/noc"])
    stamp = {"commit": None, "measures": ["gateware/subutai"], "sources": digest}
    check(stamp, ["gateware/subutai"], "x.csv", "make x")
    with pytest.raises(StaleResult, match="measuring gateware/subutai, the experiment now measures"):
        check(stamp, ["gateware"], "x.csv", "make x")
    with pytest.raises(StaleResult, match="has no stamp"):
        check(None, ["gateware"], "x.csv", "make x")


def test_documentation_under_a_measured_path_leaves_results_fresh():
    """gateware/noc/README.md is documentation: the digest leaves it out (rule 2), and a stamp made
    when the digest still counted it (rule 1) is fresh while its commit's code is the tree's."""
    paths = ["gateware/noc"]
    assert any(f.endswith(".md") for f in os.listdir(os.path.join(ROOT, *paths)))
    now, by_rule_1 = sources_digest(paths), sources_digest(paths, rule=1)
    assert now != by_rule_1
    assert sources_digest(paths, "HEAD") == now and sources_digest(paths, "HEAD", rule=1) == by_rule_1
    # Made at HEAD by rule 1, with every measured file committed: fresh.
    check({"commit": "HEAD", "measures": paths, "sources": by_rule_1}, paths, "x.csv", "make x")
    # Made at HEAD with a measured file that HEAD does not have (an edit never committed): stale.
    with pytest.raises(StaleResult, match="made at HEAD"):
        check({"commit": "HEAD", "measures": paths, "sources": "1" * 64}, paths, "x.csv", "make x")


def test_a_result_whose_images_did_not_change_is_restamped(tmp_path, monkeypatch):
    """A 2-tile rwlock sweep, its stamp made at HEAD: with a measured file edited (the tree's
    digest differs) but every image and the model the same, restamp proves it run by run and
    stamps the same rows fresh; a run whose recorded image differs is refused by name."""
    from scripts.capture import parse_lines
    from scripts.experiments import stamp as stamps
    from scripts.experiments.restamp import MODEL_SOURCES, Unprovable, restamp

    results = tmp_path / "rw"
    p = subprocess.run(
        [sys.executable, "-m", "scripts.experiments", "rwlock", "--tiles", "2", "--serial"]
        + ["--store", str(tmp_path / "store"), "--results", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    capture = results / "rwlock_capture.txt"
    lines = capture.read_text().splitlines()
    stamp = stamps.capture_stamp(parse_lines(lines))
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    stamp.update(commit=head, sources=sources_digest(stamp["measures"], head), digest_rule=2)
    capture.write_text("\n".join([stamps.stamp_record(stamp)] + lines[1:]) + "\n")
    _, rows = read_csv(results / "rwlock.csv")
    real = stamps.sources_digest

    def edited(paths, commit=None, rule=2):
        # The tree's measured files differ from the commit's; the model's sources do not.
        return real(paths, commit, rule) if commit or tuple(paths) == MODEL_SOURCES else "e" * 64

    monkeypatch.setattr(stamps, "sources_digest", edited)
    new = restamp(str(capture), log=lambda msg: None)
    assert new["restamped"] == {"commit": head, "sources": stamp["sources"], "images": 2}
    fresh, again = read_csv(results / "rwlock.csv")
    assert fresh == new and again == rows
    # Made at HEAD again, its first run's image recorded otherwise: refused, by that run's name.
    lines = capture.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"image"' in line)
    digest = lines[first].split('"image": "')[1][:64]
    lines[0], lines[first] = stamps.stamp_record(stamp), lines[first].replace(digest, "0" * 64)
    capture.write_text("\n".join(lines) + "\n")
    with pytest.raises(Unprovable, match="rwbench, swonly, 2 tiles: its image is not the one"):
        restamp(str(capture), log=lambda msg: None)
    # The model's sources edited too: the 2-tile model generated from HEAD's tree and from this one
    # is the same hardware, so the result is restamped; a model whose hardware differs is refused.
    from scripts.experiments import restamp as restamping

    capture.write_text(
        "\n".join(
            [stamps.stamp_record(stamp)]
            + lines[1:first]
            + [lines[first].replace("0" * 64, digest)]
            + lines[first + 1 :]
        )
        + "\n"
    )
    monkeypatch.setattr(
        stamps,
        "sources_digest",
        lambda paths, commit=None, rule=2: real(paths, commit, rule) if commit else "e" * 64,
    )
    new = restamp(str(capture), log=lambda msg: None)
    assert new["restamped"]["commit"] == head and read_csv(results / "rwlock.csv")[1] == rows
    capture.write_text("\n".join([stamps.stamp_record(stamp)] + capture.read_text().splitlines()[1:]) + "\n")
    real_netlist = restamping.netlist
    monkeypatch.setattr(
        restamping, "netlist", lambda tree, model: real_netlist(tree, model) + ("x" if tree == ROOT else "")
    )
    with pytest.raises(Unprovable, match="the 2-tile model is not the hardware of"):
        restamp(str(capture), log=lambda msg: None)


def test_a_netlist_in_another_order_is_the_same_and_another_statement_is_not():
    """restamp's netlist digest: the same items of a module in another order (Migen orders some
    by where Python allocated its objects) are the same hardware; an item changed is not."""
    from scripts.experiments.hardware import canonical_verilog

    a = "module top (\n\tinput wire clk\n);\nreg x = 1'd0;\nalways @(*) begin\n\tx <= 1'd1;\nend\nassign y = x;\nendmodule\n"
    b = "module top (\n\tinput wire clk\n);\nassign y = x;\nreg x = 1'd0;\nalways @(*) begin\n\tx <= 1'd1;\nend\nendmodule\n"
    c = b.replace("x <= 1'd1", "x <= 1'd0")
    assert canonical_verilog(a) == canonical_verilog(b)
    assert canonical_verilog(a) != canonical_verilog(c)


def test_the_store_keeps_a_run_by_the_hardware_restamp_proves():
    """The campaign keeps a run by its model's hardware, generated from the tree as restamp
    generates it (not read from the model's directory, where the variants of a model, a hierarchy
    of blocks or partitions, each write their own Verilog): the same digest for the same
    configuration whatever was built there last, another for another mesh."""
    from scripts.experiments import hardware
    from scripts.experiments.framework import ModelConfig
    from scripts.experiments.restamp import netlist

    config = ModelConfig.of(4)
    key = hardware.model_digest(config)
    assert netlist(ROOT, config) == hardware.netlist(ROOT, config) and key in hardware._DIGESTS.values()
    # Never built: the digest needs no model directory.
    assert hardware.model_digest(ModelConfig.of(4, mem_banks=2)) != key


def test_the_hardware_digest_leaves_out_what_names_the_build(tmp_path):
    """The generator's header (LiteX's commit line, which names the checkout LiteX is installed
    in, and the dates) and the model's directory are not hardware: a model built at another
    commit, in another directory, keeps its runs; a changed statement does not."""
    from scripts.experiments.hardware import hardware_digest

    def digest(name, sha, statement):
        gateware = tmp_path / name / "gateware"
        gateware.mkdir(parents=True)
        (gateware / "sim.v").write_text(
            f"// LiteX sha1 : {sha}\n// Date       : 2026-11-29 23:06:48\n"
            f'module top ();\nreg x = 1\'d0;\ninitial $readmemh("{gateware}/sim_mem.init", x);\n'
            f"assign y = {statement};\nendmodule\n"
        )
        (gateware / "sim_mem.init").write_text("00\n")
        return hardware_digest(str(gateware), str(tmp_path / name), str(gateware), ())

    assert digest("a", "bec8afc", "x") == digest("b", "f8db2a4", "x")
    assert digest("c", "bec8afc", "x") != digest("d", "bec8afc", "~x")
