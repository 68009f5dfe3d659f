#!/usr/bin/env python3
"""Generate the Verilog of the project's VexRiscv variants (gateware.cpu.CORE_VARIANTS).

The generator (generator/GenSubutaiCore.scala, LiteX's GenCoreDefault with the caches' way counts
as options) is compiled with Maven against the VexRiscv sources that the installed
pythondata-cpu-vexriscv ships and SpinalHDL 1.7.1 from Maven Central (the 1.7.0a those sources
name is not published there; they compile unchanged against 1.7.1). The Verilog is written to
gateware/cpu/verilog/ and committed: building an SoC needs neither Maven nor a JDK, only
changing a variant does.

Usage: python gateware/cpu/generate.py [VARIANT ...]     (default: every variant)
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from gateware.build import ROOT
from gateware.cpu import CORE_VARIANTS, CPU_DIR, VERILOG_DIR

BUILD_DIR = os.path.join(ROOT, "build", "vexriscv-gen")
TOOLS = [("mvn", "maven"), ("java", "openjdk-17-jdk-headless")]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def vexriscv_sources():
    """The VexRiscv sources of the installed pythondata-cpu-vexriscv."""
    import pythondata_cpu_vexriscv

    src = os.path.join(pythondata_cpu_vexriscv.data_location, "ext", "VexRiscv", "src", "main", "scala")
    if not os.path.isdir(os.path.join(src, "vexriscv")):
        raise SystemExit(f"error: no VexRiscv sources in {src} (pythondata-cpu-vexriscv)")
    return src


def compile_generator():
    """Compile the generator in build/vexriscv-gen; return the Java class path to run it."""
    src = os.path.join(BUILD_DIR, "src", "main", "scala")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(os.path.join(src, "subutai"))
    for name in ("vexriscv", "spinal"):
        os.symlink(os.path.join(vexriscv_sources(), name), os.path.join(src, name))
    shutil.copy(os.path.join(CPU_DIR, "generator", "GenSubutaiCore.scala"), os.path.join(src, "subutai"))
    shutil.copy(os.path.join(CPU_DIR, "generator", "pom.xml"), BUILD_DIR)
    log(f"[cpu] compiling the generator with Maven in {BUILD_DIR} (a few minutes the first time)")
    classpath = os.path.join(BUILD_DIR, "classpath.txt")
    subprocess.run(
        ["mvn", "-q", "-B", "compile", "dependency:build-classpath", f"-Dmdep.outputFile={classpath}"],
        cwd=BUILD_DIR,
        check=True,
    )
    with open(classpath) as f:
        return os.path.join(BUILD_DIR, "target", "classes") + os.pathsep + f.read().strip()


def generate(variant, classpath):
    """Write the variant's Verilog to gateware/cpu/verilog/."""
    # Outside any git work tree: SpinalHDL would write the tree's commit into the file.
    with tempfile.TemporaryDirectory(prefix="vexriscv-gen-") as work:
        name = os.path.splitext(os.path.basename(variant.verilog))[0]
        subprocess.run(
            ["java", "-cp", classpath, "subutai.GenSubutaiCore", *variant.options, "--outputFile", name],
            cwd=work,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with open(os.path.join(work, name + ".v")) as f:
            # The generation date would make every run a different file.
            text = "".join(line for line in f if not line.startswith("// Date"))
    os.makedirs(VERILOG_DIR, exist_ok=True)
    with open(variant.verilog, "w") as f:
        f.write(text)
    log(f"[cpu] {variant.name}: {os.path.relpath(variant.verilog, ROOT)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "variants",
        nargs="*",
        metavar="VARIANT",
        help=f"variants to generate (default: all: {', '.join(CORE_VARIANTS)})",
    )
    args = parser.parse_args()
    unknown = [v for v in args.variants if v not in CORE_VARIANTS]
    if unknown:
        parser.error(f"no such variant {', '.join(unknown)} (have: {', '.join(CORE_VARIANTS)})")
    for tool, package in TOOLS:
        if shutil.which(tool) is None:
            raise SystemExit(f"error: {tool} not found: install the Debian package {package}")
    classpath = compile_generator()
    for name in args.variants or CORE_VARIANTS:
        generate(CORE_VARIANTS[name], classpath)


if __name__ == "__main__":
    main()
