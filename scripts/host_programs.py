#!/usr/bin/env python3
"""The benchmark programs built and run on the host (gcc and glibc's pthreads).

The host build goes through the same harness as on the SoC (firmware/programs/Makefile), so its
output has the same checksum line and records; its checksums are the reference the simulated
runs must reproduce.

Usage: python scripts/host_programs.py [PROGRAM ...] [--threads 1 2 4 8] [--args '-i test']
runs each program with each thread count and prints its checksums.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

from gateware.build import BUILD_DIR, ROOT

from soc.firmware import benchmark_programs as programs

#: A benchmark program's checksum line ("<program>: checksum 0x........").
CHECKSUM_RE = re.compile(r"^\s*([A-Za-z0-9_.-]+): checksum (0x[0-9a-f]{8})\s*$")

PROGRAMS_DIR = os.path.join(ROOT, "firmware", "programs")
HOST_DIR = os.path.join(BUILD_DIR, "host")


class HostProgramError(RuntimeError):
    """The host build failed, a program failed or printed no checksum."""


def build(names=None, out_dir=HOST_DIR, extra_cflags=""):
    """Build the programs for the host; return {program: path of its executable}."""
    names = list(names or programs())
    if shutil.which("gcc") is None:
        raise HostProgramError("gcc not found: install the Debian package gcc (make setup)")
    cmd = ["make", "-s", "-C", PROGRAMS_DIR, f"OUT={out_dir}", f"PROGRAMS={' '.join(names)}"]
    if extra_cflags:
        cmd.append(f"EXTRA_CFLAGS={extra_cflags}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise HostProgramError(f"host build failed:\n{proc.stdout}{proc.stderr}")
    return {n: os.path.join(out_dir, n) for n in names}


def run(executable, args, timeout=300):
    """Run a host build; return its output. A failure or a missing checksum is an error."""
    program = os.path.basename(executable)
    proc = subprocess.run([executable, *shlex.split(args)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise HostProgramError(
            f"{program} {args}: exit code {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    if checksum(proc.stdout, program) is None:
        raise HostProgramError(f"{program} {args}: no checksum line in its output")
    return proc.stdout


def checksum(output, program):
    """The checksum a program printed ("<program>: checksum 0x........"), or None."""
    for line in output.splitlines():
        m = CHECKSUM_RE.match(line)
        if m and m.group(1) == program:
            return m.group(2)
    return None


def checksums(programs, args):
    """{program: checksum} of the host builds of these programs, each run with one thread and
    these arguments ("-i simsmall -s 1"): the references of the simulated runs."""
    return {p: checksum(run(exe, f"-t 1 {args}"), p) for p, exe in build(programs).items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("programs", nargs="*", metavar="PROGRAM", help=f"default: all ({', '.join(programs())})")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--args", default="-i test", help="program arguments besides -t (default: '-i test')")
    args = p.parse_args()
    unknown = sorted(set(args.programs) - set(programs()))
    if unknown:
        p.error(f"no such program: {', '.join(unknown)} (have: {', '.join(programs())})")
    if any(t < 1 for t in args.threads):
        p.error("--threads must be >= 1")
    try:
        for name, exe in build(args.programs).items():
            sums = [checksum(run(exe, f"-t {t} {args.args}"), name) for t in args.threads]
            same = "same" if len(set(sums)) == 1 else "DIFFERENT"
            print(
                f"{name}: " + ", ".join(f"{t} threads {s}" for t, s in zip(args.threads, sums)) + f" ({same})"
            )
    except (HostProgramError, subprocess.TimeoutExpired) as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
