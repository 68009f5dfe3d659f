#!/usr/bin/env python3
"""Machine-readable results from firmware output: the ``@subutai {json}`` lines of a UART capture.

The firmware prints one JSON object per result line after the prefix ``@subutai `` amid ordinary
text; the same reader serves a simulation log, a saved board capture (file or stdin) and a live
board (``serial:/dev/ttyUSB0``, read until the firmware's ``@exit N`` line).

Usage: python scripts/capture.py SOURCE [--baud N] [--timeout S] [--prefixed]
prints the records as JSON lines; with --prefixed, as ``@subutai`` lines that the report
scripts can read back.
"""

import argparse
import json
import signal
import sys

from soc.serial_boot import SerialError, open_serial, read_serial_lines


PREFIX = "@subutai "
SERIAL = "serial:"


class CaptureError(ValueError):
    """A capture that cannot be read or parsed; the message says what and where."""


def numbered_lines(lines):
    """(line number from 1, line, record or None) of every line: the record of a line holding the
    prefix, None for the others (a program's own output).

    The prefix is searched anywhere in the line because output of several cores (or a UART
    glitch) may put text before it; a malformed record is an error rather than skipped, so a
    corrupted capture cannot silently lose a measurement.
    """
    for number, line in enumerate(lines, 1):
        at = line.find(PREFIX)
        if at < 0:
            yield number, line, None
            continue
        text = line[at + len(PREFIX) :].strip()
        try:
            record = json.loads(text)
        except json.JSONDecodeError as e:
            raise CaptureError(f"line {number}: malformed JSON ({e.msg}): {line.rstrip()}") from None
        if not isinstance(record, dict):
            raise CaptureError(f"line {number}: expected a JSON object: {line.rstrip()}")
        yield number, line, record


def parse_lines(lines):
    """Records of every line holding the prefix, in order (see :func:`numbered_lines`)."""
    return [record for _, _, record in numbered_lines(lines) if record is not None]


def program_records(lines, program, fields):
    """The records of ``program`` in a capture, each checked to hold ``fields`` (a record without
    one is a firmware bug worth naming, not a KeyError later)."""
    records = [r for r in parse_lines(lines) if r.get("program") == program]
    for r in records:
        missing = [f for f in fields if f not in r]
        if missing:
            raise CaptureError(f"{program} record without {', '.join(map(repr, missing))}: {r}")
    return records


def read_capture(source, baud=115200, timeout=None):
    """Text lines of a capture: a file path, "-" for stdin, or "serial:PORT" for a live board.

    ``baud`` and ``timeout`` (seconds in all, None for no limit) only apply to a serial port.
    """
    if source == "-":
        return sys.stdin.read().splitlines()
    if source.startswith(SERIAL):
        return _read_serial(source[len(SERIAL) :], baud, timeout)
    try:
        with open(source, errors="replace") as f:
            return f.read().splitlines()
    except OSError as e:
        raise CaptureError(f"cannot read capture {source}: {e.strerror or e}") from None


def _read_serial(port, baud, timeout):
    """Lines from the port until ``@exit`` or the timeout; Ctrl-C stops early and keeps what was read."""
    try:
        with open_serial(port, baud) as link:
            return read_serial_lines(link, port, timeout)
    except SerialError as e:
        raise CaptureError(str(e)) from None


def add_source_arguments(parser):
    """SOURCE, --baud and --timeout, shared by the scripts that read a capture."""
    parser.add_argument(
        "source",
        metavar="SOURCE",
        help='capture file, "-" for stdin, or serial:PORT (e.g. serial:/dev/ttyUSB0)',
    )
    parser.add_argument("--baud", type=int, default=115200, help="serial baud rate (default 115200)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="serial: stop after this many seconds if no @exit line came (default: wait)",
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(p)
    p.add_argument(
        "--prefixed", action="store_true", help="print '@subutai {json}' lines, readable again as a capture"
    )
    args = p.parse_args()
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    try:
        records = parse_lines(read_capture(args.source, args.baud, args.timeout))
    except CaptureError as e:
        p.exit(2, f"{p.prog}: error: {e}\n")
    for record in records:
        print((PREFIX if args.prefixed else "") + json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
