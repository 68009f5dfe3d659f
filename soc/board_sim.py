#
# A board's own SoC in Verilator (make board-sim, boards/<board>.py --sim): the BIOS, the SDRAM
# controller and L2 with LiteDRAM's model of the board's SDRAM chip, the UART on a
# pseudo-terminal, and the firmware serial-booted through it (soc.serial_boot), as on a board.
#

import os
import shutil
import subprocess
import sys
import time

from gateware.build import BUILD_DIR, ROOT

from soc.fpga_flow import BoardError, _redirect_fds, _venv_on_path, progress
from soc.simulation import quiet_litex
from soc.subutai_soc import KiB


# Seconds the serial boot waits for each acknowledgement of the simulated BIOS (soc.serial_boot
# --reply-timeout): a simulation answers in tens of milliseconds where a board does in microseconds.
# The upload is --safe, one frame and its acknowledgement at a time: litex_term's calibration
# times the acknowledgements of a burst of frames in wall-clock time, which a simulation misses.
SIM_REPLY_TIMEOUT = 60


def sim_output_dir(args, mesh_x, mesh_y):
    return os.path.abspath(args.output_dir or os.path.join(BUILD_DIR, f"{args.board}_{mesh_x}x{mesh_y}_sim"))


def build_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq):
    """The Verilator model of this board's SoC (``make_soc(..., sim=True)``), built once and
    reused while the sources and options that shape it match (as the plain model,
    :func:`soc.simulation.build_model`). The BIOS is compiled into its ROM."""
    from soc.simulation import SimModel, harness_knobs, verilate
    from gateware.build import build_lock, source_digest

    output_dir = sim_output_dir(args, mesh_x, mesh_y)
    model = SimModel(output_dir)
    params = dict(
        board=args.board,
        mesh=[mesh_x, mesh_y],
        sys_clk_freq=sys_clk_freq,
        cpu_variant=args.cpu_variant,
        tile_ram_size=args.tile_ram_size,
        l2_size=args.l2_size,
        digest=source_digest(["gateware", "soc", "boards"], exclude=("tb",), length=64),
    )
    with build_lock(output_dir):
        if model.built_with(params):
            progress(
                f"{args.board} {mesh_x}x{mesh_y} simulation model up to date: "
                f"{os.path.relpath(model.binary, ROOT)}"
            )
            return model
        progress(
            f"{args.board}: {mesh_x}x{mesh_y} mesh ({mesh_x * mesh_y} tiles, VexRiscv "
            f"{args.cpu_variant}, {args.l2_size // KiB} KiB L2) at {sys_clk_freq / 1e6:g} MHz, in "
            f"simulation: generating gateware and the BIOS in {output_dir}"
        )
        quiet_litex()
        _venv_on_path()
        t0 = time.time()
        soc = make_soc(mesh_x, mesh_y, sys_clk_freq, sim=True)
        log_path = os.path.join(output_dir, "litex.log")
        try:
            with open(log_path, "w") as log, _redirect_fds(log):
                verilate(soc, model, dict(harness_knobs(), SIM_CTRL=0), compile_software=True, log=log.write)
        except Exception as e:
            raise BoardError(f"the simulation model did not build ({e}; log: {log_path})") from e
        model.write_stamp(params)
        progress(f"model ready in {time.time() - t0:.0f} s: {os.path.relpath(model.binary, ROOT)}")
    return model


def run_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq):
    """--sim: build the model, start it with its UART on a pseudo-terminal and, with --app,
    serial-boot the firmware with scripts/board_run.py, exactly as on a board. Returns the exit
    status: the firmware's, 124 when the cycle limit stopped it."""
    import tempfile

    model = build_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq)
    image = None
    if args.app and args.zephyr:
        from soc import zephyr

        try:
            zephyr.zephyr_environment()
        except zephyr.ZephyrUnavailable as e:
            raise BoardError(str(e)) from None
        progress(f"building the Zephyr application {args.app} ({args.backend}) for the model")
        image = zephyr.build_app(
            model, args.app, backend=args.backend, program=args.program, program_args=args.app_args
        )
    elif args.app:
        progress(f"building {args.app} ({args.backend}) against the model's headers")
        image = model.build_firmware(args.app, backend=args.backend, program_args=args.app_args)
    # What stays of a run (the capture, the UART's output) goes beside the model, the rest (the
    # memories' init files) into a directory removed afterwards.
    name = "-".join(filter(None, [args.app or "terminal", args.program, args.backend]))
    keep = os.path.join(model.output_dir, "runs")
    os.makedirs(keep, exist_ok=True)
    uart_log = os.path.join(keep, f"{name}.uart.log")
    run_dir = tempfile.mkdtemp(prefix="subutai-board-sim-")
    try:
        return _run_board_sim(args, model, image, name, keep, uart_log, run_dir)
    finally:
        if os.path.exists(os.path.join(run_dir, "uart.log")):
            shutil.copy(os.path.join(run_dir, "uart.log"), uart_log)
        shutil.rmtree(run_dir, ignore_errors=True)


def _run_board_sim(args, model, image, name, keep, uart_log, run_dir):
    from soc.simulation import EXIT_TIMEOUT

    proc, port = model.start_serial(run_dir, args.max_cycles)
    progress(
        f"the board SoC runs; its serial port is {port} (UART log, after the run: "
        f"{os.path.relpath(uart_log, ROOT)})"
    )
    try:
        if image is None:
            progress(
                "waiting for it to end (a terminal on the port: litex_term, scripts/board_run.py --port)"
            )
            code = proc.wait()
        else:
            capture = os.path.abspath(args.capture or os.path.join(keep, f"{name}.capture.txt"))
            # Its complaint about a port that closed under it is noise when the model's cycle
            # limit closed it: its error output is shown only otherwise.
            runner_err = open(os.path.join(run_dir, "board_run.err"), "w+")
            runner = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "soc.serial_boot",
                    "--port",
                    port,
                    "--image",
                    image,
                    "--csr-json",
                    model.csr_json,
                    "--output",
                    capture,
                    "--reply-timeout",
                    str(SIM_REPLY_TIMEOUT),
                    "--safe",
                ],
                cwd=ROOT,
                stderr=runner_err,
            )
            while runner.poll() is None and proc.poll() is None:
                time.sleep(0.2)
            if runner.poll() is None:
                # The model ended first: its cycle limit (or a crash) stopped the firmware.
                runner.terminate()
                runner.wait()
            code = (
                runner.returncode if proc.poll() is None or proc.returncode != EXIT_TIMEOUT else EXIT_TIMEOUT
            )
            runner_err.seek(0)
            errors = runner_err.read()
            runner_err.close()
            if errors and code != EXIT_TIMEOUT:
                sys.stderr.write(errors)
            progress(f"capture: {capture}")
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with open(os.path.join(run_dir, "sim.log")) as f:
        summary = f.read().strip().splitlines()
    for line in summary[1:]:
        progress(line)
    if proc.returncode == EXIT_TIMEOUT:
        progress(
            f"stopped by the cycle limit ({args.max_cycles:,} cycles, --max-cycles) before the firmware ended"
        )
        return EXIT_TIMEOUT
    return code
