"""Run a firmware image on a board: LiteX serial boot, then capture its output
(``scripts/board_run.py``; the board SoC in simulation, :mod:`soc.board_sim`, runs it the same way).

Usage::

    .venv/bin/python scripts/board_run.py --port /dev/ttyUSB0 --image app.bin \\
        [--output capture.txt] [--baud 115200] [--csr-json build/.../csr.json] [--timeout S] [--safe]

Waits for the BIOS's serial-boot request (reset the board, or leave the BIOS at its prompt: the
script types ``serialboot``), uploads the image to main RAM (its address from the board build's
``csr.json``: ``--csr-json``, or the first ``csr.json`` above the image, which is where
``make -C firmware SOC_DIR=<board build>`` puts it) with LiteX's serial boot protocol
(the frame, CRC and upload code of ``litex.tools.litex_term``), jumps to it, then keeps the lines
the firmware prints until its ``@exit N`` line. The capture (``@subutai {json}`` lines among the
rest) is written to ``--output`` and is read by ``scripts/capture.py``,
``scripts/prodcons_report.py`` and ``scripts/apps_report.py`` like a simulation log.

Exit status: the firmware's ``@exit`` code; 2 for a usage or serial-port error,
:data:`soc.simulation.EXIT_TIMEOUT` (124, as in simulation) when the timeout elapsed before the
boot or before ``@exit``.
"""

import argparse
import json
import os
import sys
import time

from litex.tools import litex_term
from litex.tools.litex_term import LiteXTerm

from soc.simulation import EXIT_TIMEOUT


class SerialError(ValueError):
    """A serial port that cannot be opened or read; the message says which and why."""


def open_serial(port, baud=115200):
    """An open pyserial port."""
    try:
        import serial
    except ImportError:
        raise SerialError(f"reading serial port {port} needs pyserial (pip install pyserial)") from None
    try:
        return serial.serial_for_url(port, baud, timeout=0.2)
    except (serial.SerialException, OSError, ValueError) as e:
        raise SerialError(f"cannot open serial port {port}: {e}") from None


def read_serial_lines(link, port="", timeout=None, echo=None):
    """Lines read from an open port until ``@exit`` or the timeout (seconds, None: no limit);
    ``echo(line)`` is called on each. Ctrl-C stops early and keeps what was read."""
    import serial

    deadline = None if timeout is None else time.monotonic() + timeout
    lines, pending = [], b""
    try:
        while deadline is None or time.monotonic() < deadline:
            pending += link.readline()  # may return a partial line on its own timeout
            if not pending.endswith(b"\n"):
                continue
            line = pending.decode(errors="replace").rstrip("\r\n")
            pending = b""
            lines.append(line)
            if echo:
                echo(line)
            if line.lstrip().startswith("@exit"):
                break
    except KeyboardInterrupt:
        pass
    except (serial.SerialException, OSError) as e:
        raise SerialError(f"serial port {port} failed: {e}") from None
    if pending:
        lines.append(pending.decode(errors="replace").rstrip("\r\n"))
    return lines


def find_csr_json(image):
    """The csr.json of the SoC build an image was made for: the first one in the directories
    above it (firmware images are built under <build>/firmware/), or None."""
    d = os.path.dirname(os.path.abspath(image))
    while True:
        path = os.path.join(d, "csr.json")
        if os.path.isfile(path):
            return path
        if os.path.dirname(d) == d:
            return None
        d = os.path.dirname(d)


def main_ram_base(csr_json):
    with open(csr_json) as f:
        return json.load(f)["memories"]["main_ram"]["base"]


class SerialBoot(LiteXTerm):
    """LiteX's terminal without its console: same serial boot (magic answer, calibrated upload,
    jump), driven from a script on an already open port."""

    def __init__(self, port, image, address, safe=False, log=print):
        # LiteXTerm.__init__ also takes over the console (termios on stdin) and SIGINT, which a
        # script (or a test without a terminal) must not: set its state here instead.
        self.serial_boot = True
        self.mem_regions = {image: f"0x{address:08x}"}
        self.boot_address = f"0x{address:08x}"
        self.prompt_detect_buffer = bytes(len(litex_term.sfl_prompt_req))
        self.magic_detect_buffer = bytes(len(litex_term.sfl_magic_req))
        self.safe = safe
        self.delay = 0
        self.length = 64
        self.outstanding = 0 if safe else 128
        self.port = port
        self.log = log

    def wait_and_boot(self, timeout=None, echo=None):
        """Read the BIOS output until its serial-boot request, answer it, upload, jump.
        Returns False when the timeout elapsed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while deadline is None or time.monotonic() < deadline:
            c = self.port.read(1)
            if not c:
                continue
            if echo:
                echo(c)
            if self.detect_prompt(c):
                self.answer_prompt()
            if self.detect_magic(c):
                self.answer_magic()  # Upload every region, then the jump frame.
                return True
        return False


def main():
    p = argparse.ArgumentParser(
        prog="board_run.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("--port", required=True, help="serial port of the board, e.g. /dev/ttyUSB0")
    p.add_argument("--image", required=True, help="raw binary to run (firmware .bin)")
    p.add_argument(
        "--output", default=None, help="capture file (default: <image name>.capture.txt beside the image)"
    )
    p.add_argument("--baud", type=int, default=115200, help="baud rate (default 115200)")
    p.add_argument(
        "--csr-json",
        default=None,
        help="csr.json of the board build: the image goes to its main RAM (default: the first "
        "csr.json in the directories above the image)",
    )
    p.add_argument(
        "--address",
        type=lambda s: int(s, 0),
        default=None,
        help="load and jump address instead of csr.json's main RAM",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds to wait for the boot, then again for @exit (default: wait)",
    )
    p.add_argument(
        "--reply-timeout",
        type=float,
        default=None,
        help="seconds the upload waits for each acknowledgement of the BIOS (default: the port's "
        "0.2 s; a board SoC in simulation answers far slower)",
    )
    p.add_argument(
        "--safe",
        action="store_true",
        help="upload one frame at a time without calibration (slow, for unreliable links)",
    )
    p.add_argument(
        "--no-command",
        action="store_true",
        help="do not type 'serialboot' at the BIOS prompt (wait for a board reset instead)",
    )
    p.add_argument("--quiet", action="store_true", help="do not echo the board's output")
    args = p.parse_args()
    if not os.path.isfile(args.image):
        p.error(f"--image {args.image}: no such file")
    if args.baud <= 0:
        p.error("--baud must be positive")
    if args.reply_timeout is not None and args.reply_timeout <= 0:
        p.error("--reply-timeout must be positive")
    output = args.output or os.path.splitext(args.image)[0] + ".capture.txt"
    address = args.address
    if address is None:
        csr_json = args.csr_json or find_csr_json(args.image)
        if csr_json is None:
            p.error(f"no csr.json above {args.image}: give the board build's --csr-json (or --address)")
        try:
            address = main_ram_base(csr_json)
        except (OSError, ValueError, KeyError) as e:
            p.error(f"--csr-json {csr_json}: no main RAM in it ({e})")

    def echo_bytes(c):
        if not args.quiet:
            sys.stdout.buffer.write(c)
            sys.stdout.flush()

    def echo_line(line):
        if not args.quiet:
            print(line, flush=True)

    try:
        with open_serial(args.port, args.baud) as port:
            boot = SerialBoot(port, args.image, address, safe=args.safe)
            if not args.no_command:
                # A BIOS already at its prompt starts serial boot; a booting one ignores it.
                port.write(b"\nserialboot\n")
            print(
                f"[board_run] waiting for the BIOS serial boot on {args.port} "
                f"(reset the board if nothing happens)",
                flush=True,
            )
            port_timeout = port.timeout
            if args.reply_timeout is not None:
                port.timeout = args.reply_timeout
            if not boot.wait_and_boot(args.timeout, echo_bytes):
                print(f"[board_run] no serial-boot request within {args.timeout} s", file=sys.stderr)
                return EXIT_TIMEOUT
            port.timeout = port_timeout
            lines = read_serial_lines(port, args.port, args.timeout, echo_line)
    except SerialError as e:
        p.exit(2, f"{p.prog}: error: {e}\n")
    with open(output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"[board_run] capture: {output}", flush=True)
    last = lines[-1].strip() if lines else ""
    if not last.startswith("@exit"):
        print("[board_run] no @exit line: the firmware did not end in time", file=sys.stderr)
        return EXIT_TIMEOUT
    try:
        return int(last.split()[1])
    except (IndexError, ValueError):
        return 1


if __name__ == "__main__":
    sys.exit(main())
