#
# Build helpers shared by every layer: where the project and its build directory are, the digest
# that decides when a generated model is stale, and the Verilator build of a Migen testbench.
#
"""Project paths, source digests and cached Verilator testbench builds.

The lowest layer of the project's Python (``gateware`` <- ``soc`` <- ``boards`` <- ``scripts``),
so that the gateware's own testbenches (``gateware/noc/tb``, ``gateware/subutai/tb``), the SoC
model (:mod:`soc.simulation`) and the report caches all decide staleness the same way.
"""

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import time

#: The project's checkout (this file is ``<ROOT>/gateware/build.py``).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Everything generated: models, firmware, bitstreams (``make clean`` removes it).
BUILD_DIR = os.path.join(ROOT, "build")

#: Files whose content shapes a generated model.
SOURCE_SUFFIXES = (".py", ".cpp", ".h", ".v", "Makefile")


def source_digest(paths, extra="", exclude=(), suffixes=SOURCE_SUFFIXES, length=16):
    """Digest of the sources under ``paths`` (files, or directories walked recursively for
    ``suffixes``), of their names relative to the project, and of ``extra`` (the build
    parameters). A generated model is rebuilt when its digest changes.

    ``exclude``: directory names skipped in the walk (e.g. a testbench folder that does not
    shape the SoC model). Names are relative to :data:`ROOT`, so a checkout anywhere gives the
    same digest."""
    h = hashlib.sha256(extra.encode())
    files = []
    for p in paths:
        p = os.path.join(ROOT, p)
        if os.path.isfile(p):
            files.append(p)
            continue
        for d, dirs, fs in os.walk(p):
            dirs[:] = sorted(x for x in dirs if x not in exclude and x != "__pycache__")
            files += [os.path.join(d, f) for f in sorted(fs) if f.endswith(suffixes)]
    for f in files:
        h.update(os.path.relpath(f, ROOT).encode())
        with open(f, "rb") as fd:
            h.update(fd.read())
    return h.hexdigest()[:length]


@contextlib.contextmanager
def build_lock(output_dir):
    """Serialize builds in one build directory across processes (a test run and a benchmark, or
    two workers of a parallel test run, regenerate the same models, headers and images)."""
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def built_testbench(outdir, top, digest):
    """The binary of ``V<top>`` in ``outdir`` if it was built from sources of this ``digest``
    (a caller can then skip generating its Verilog), else None."""
    binary = os.path.join(outdir, "obj_dir", f"V{top}")
    stamp = os.path.join(outdir, "stamp")
    if os.path.exists(binary) and os.path.exists(stamp) and open(stamp).read().strip() == digest:
        return binary
    return None


def build_verilator_testbench(
    outdir, top, sources, tb_cpp, digest, jobs=2, cxx_opt=("-O2", "-O1", "-O2"), log=print, tag="tb"
):
    """Build ``V<top>`` in ``outdir`` from generated files, unless its stamp matches ``digest``.

    ``sources``: {file name: text} written into ``outdir`` (the Verilog of ``top`` and headers
    the harness includes); ``tb_cpp``: the C++ harness; ``cxx_opt``: C++ -O levels of the fast,
    slow and global parts of the model. Returns the path of the binary.
    """
    binary = built_testbench(outdir, top, digest)
    if binary:
        return binary
    # Another process (a parallel test run's other worker, a benchmark) may be building it.
    with build_lock(outdir):
        binary = built_testbench(outdir, top, digest)
        if binary:
            return binary
        binary = os.path.join(outdir, "obj_dir", f"V{top}")
        stamp = os.path.join(outdir, "stamp")
        if shutil.which("verilator") is None:
            raise RuntimeError("verilator not found: install the Debian package verilator (make setup)")
        t0 = time.time()
        log(f"{tag}: building Verilator model in {outdir}")
        if os.path.exists(stamp):
            os.remove(stamp)
        # Verilator's make dependencies name the sources by path: a moved harness would leave them stale.
        shutil.rmtree(os.path.join(outdir, "obj_dir"), ignore_errors=True)
        os.makedirs(outdir, exist_ok=True)
        for name, text in sources.items():
            with open(os.path.join(outdir, name), "w") as f:
                f.write(text)
        env = dict(os.environ)
        if shutil.which("ccache"):
            env["OBJCACHE"] = "ccache"
        fast, slow, glob = cxx_opt
        verilog = [n for n in sources if n.endswith(".v")]
        cmd = [
            "verilator",
            "--cc",
            "--exe",
            "--build",
            "-j",
            str(jobs),
            "--top-module",
            top,
            "--prefix",
            f"V{top}",
            "-o",
            f"V{top}",
            "--x-assign",
            "fast",
            "--x-initial",
            "fast",
            "-Wno-fatal",
            "-Wno-lint",
            "-Wno-style",
            "-O2",
            "--output-split",
            "20000",
            "-CFLAGS",
            f"-I{outdir}",
            "-MAKEFLAGS",
            f"OPT_FAST={fast} OPT_SLOW={slow} OPT_GLOBAL={glob}",
            *verilog,
            tb_cpp,
        ]
        p = subprocess.run(cmd, cwd=outdir, env=env, capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(binary):
            raise RuntimeError(f"verilator build of {outdir} failed:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
        with open(stamp, "w") as f:
            f.write(digest + "\n")
        log(f"{tag}: built in {time.time() - t0:.1f} s")
        return binary
