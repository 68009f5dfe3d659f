"""Cached Verilator builds of the Migen testbenches (NoC mesh, Subutai engines)."""

import hashlib
import os
import shutil
import subprocess
import time


def source_digest(gateware_dir, files, extra=""):
    """Digest of the ``.py`` files of ``gateware_dir`` and of ``files`` (harness, builder), plus
    ``extra`` (the build parameters): a testbench is rebuilt when any of them changes."""
    h = hashlib.sha256(extra.encode())
    paths = [os.path.join(gateware_dir, f) for f in sorted(os.listdir(gateware_dir)) if f.endswith(".py")]
    for f in paths + list(files):
        h.update(os.path.basename(f).encode())
        with open(f, "rb") as fd:
            h.update(fd.read())
    return h.hexdigest()[:16]


def build_testbench(outdir, top, sources, tb_cpp, digest, jobs=2, cxx_opt=("-O2", "-O1", "-O2"),
        log=print, tag="tb"):
    """Build ``V<top>`` in ``outdir`` from generated files, unless the stamp matches ``digest``.

    ``sources``: {file name: text} written into ``outdir`` (the Verilog of ``top`` and headers
    the harness includes); ``tb_cpp``: the C++ harness; ``cxx_opt``: C++ -O levels of the fast,
    slow and global parts of the model. Returns the path of the binary.
    """
    binary = os.path.join(outdir, "obj_dir", f"V{top}")
    stamp  = os.path.join(outdir, "stamp")
    if os.path.exists(binary) and os.path.exists(stamp) and open(stamp).read().strip() == digest:
        return binary
    t0 = time.time()
    log(f"{tag}: building Verilator model in {outdir}")
    if os.path.exists(stamp):
        os.remove(stamp)
    os.makedirs(outdir, exist_ok=True)
    for name, text in sources.items():
        with open(os.path.join(outdir, name), "w") as f:
            f.write(text)
    env = dict(os.environ)
    if shutil.which("ccache"):
        env["OBJCACHE"] = "ccache"
    fast, slow, glob = cxx_opt
    verilog = [n for n in sources if n.endswith(".v")]
    cmd = ["verilator", "--cc", "--exe", "--build", "-j", str(jobs),
        "--top-module", top, "--prefix", f"V{top}", "-o", f"V{top}",
        "--x-assign", "fast", "--x-initial", "fast", "-Wno-fatal", "-Wno-lint", "-Wno-style",
        "-O2", "--output-split", "20000",
        "-CFLAGS", f"-I{outdir}",
        "-MAKEFLAGS", f"OPT_FAST={fast} OPT_SLOW={slow} OPT_GLOBAL={glob}",
        *verilog, tb_cpp]
    p = subprocess.run(cmd, cwd=outdir, env=env, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(binary):
        raise RuntimeError(f"verilator build of {outdir} failed:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    with open(stamp, "w") as f:
        f.write(digest + "\n")
    log(f"{tag}: built in {time.time() - t0:.1f} s")
    return binary
