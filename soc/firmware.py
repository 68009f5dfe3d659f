#
# Bare-metal firmware of the SoC: what exists (applications, programs, PThreads backends) and how
# an image is built against one SoC build's generated headers.
#
"""Firmware images for a SoC build directory.

The firmware tree (``firmware/``) is the source of truth of what can be built: the applications
are the folders of ``firmware/apps/``, the benchmark programs those of ``firmware/programs/``, and
the PThreads backends the ``firmware/lib/pthread/backend_<name>.c`` files (the firmware Makefile
reads the same list).
"""

import argparse
import dataclasses
import functools
import glob
import hashlib
import importlib.util
import os
import re
import subprocess

from gateware.build import ROOT, build_lock

FIRMWARE_DIR = os.path.join(ROOT, "firmware")


def _backends():
    names = [
        os.path.basename(p)[len("backend_") : -2]
        for p in glob.glob(os.path.join(FIRMWARE_DIR, "lib", "pthread", "backend_*.c"))
    ]
    # The hardware backend first: it is every command's default.
    return tuple(sorted(names, key=lambda n: (n != "subutai", n)))


#: PThreads backends a program can be linked with (link time): ``subutai`` (the engines in the
#: NIs), ``swonly`` (the software-only baseline).
BACKENDS = _backends()


@functools.cache
def _program_args_generator():
    # The generator the builds run (firmware/lib/program_args.py): one splitting of a command line.
    path = os.path.join(FIRMWARE_DIR, "lib", "program_args.py")
    spec = importlib.util.spec_from_file_location("subutai_program_args", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_program_args(text, own_program=False):
    """Check a program's command line (ARGS); ValueError, with the reason, if it cannot be given.
    A program of one's own (``own_program``, PROGRAM_DIR) gets its words split as a POSIX shell
    splits them, quotes and backslashes included, by the generator its builds run: a line a shell
    would refuse (an unclosed quote, say) is refused. The project's applications and programs get
    words separated by spaces, compiled in as they are: no quotes."""
    if own_program:
        _program_args_generator().source(text)
    elif "'" in text or '"' in text:
        raise ValueError(f"program arguments {text!r}: no quotes allowed (words separated by spaces)")
    return text


def firmware_apps():
    """Applications written for this SoC (firmware/apps/)."""
    return sorted(os.listdir(os.path.join(FIRMWARE_DIR, "apps")))


#: Programs of firmware/programs/ that use channels (subutai/chan.h): built and run as the others
#: are, but their figure is a stream's service time and they synchronize through channels, not
#: pthread objects, so they are not of the PThreads benchmark set (make bench-apps, the suite's
#: checks of every program's objects and events); make bench-chan runs them.
CHANNEL_PROGRAMS = ("farm",)


def benchmark_programs(channels=False):
    """Plain PThreads benchmark programs (firmware/programs/, except their common headers); with
    ``channels`` also those that use channels (:data:`CHANNEL_PROGRAMS`)."""
    base = os.path.join(FIRMWARE_DIR, "programs")
    return sorted(
        d
        for d in os.listdir(base)
        if d != "common" and os.path.isdir(os.path.join(base, d)) and (channels or d not in CHANNEL_PROGRAMS)
    )


def slug(text):
    """A build directory's name for some text (program arguments, Kconfig settings): letters and
    digits kept, anything else an underscore."""
    return "".join(c if c.isalnum() else "_" for c in text.strip())


def _make_lists(path):
    """The ``NAME := words`` lines of a make fragment (firmware/lib/library.mk, the port's
    port.mk): {NAME: [word, ...]}."""
    lists = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^([A-Z_]+)\s*:=(.*)$", line)
            if m:
                lists[m.group(1)] = m.group(2).split()
    return lists


#: The bare-metal port of the library, relative to firmware/ (firmware/Makefile's PORT).
BAREMETAL_PORT = "port/baremetal"


def library_members(backend, chan=None):
    """Sources of a bare-metal image's PThreads archive, relative to firmware/, in their link
    order (firmware/Makefile's LIB_MEMBERS): the library's lists of firmware/lib/library.mk (the
    Makefile's and the Zephyr module's one source), the bare-metal port's of its port.mk, the
    backend's file and the channel implementation's."""
    check_backend(backend)
    chan = check_chan(chan)
    lib = _make_lists(os.path.join(FIRMWARE_DIR, "lib", "library.mk"))
    port = _make_lists(os.path.join(FIRMWARE_DIR, BAREMETAL_PORT, "port.mk"))
    return (
        [f"lib/{m}" for m in lib["SUBUTAI_DRIVER_SRCS"] + lib["SUBUTAI_PTHREAD_SRCS"]]
        + [f"{BAREMETAL_PORT}/{m}" for m in port["SUBUTAI_BAREMETAL_SRCS"]]
        + [f"lib/pthread/backend_{backend}.c"]
        + [f"lib/{m}" for m in lib["SUBUTAI_CHAN_SRCS"]]
        + [f"lib/chan/chan_{chan}.c"]
    )


#: The 1 KiB function of the synchronization paths that nothing calls (firmware/Makefile's
#: LAYOUT_FILLER).
LAYOUT_FILLER = f"{BAREMETAL_PORT}/layout_filler.S"


@dataclasses.dataclass(frozen=True)
class LinkPerturbation:
    """Another link of the same image (firmware/Makefile LIB_ORDER): the library's members in
    another order, or with :data:`LAYOUT_FILLER` among them. ``variant`` is the number the
    image's results carry (0: the image as built by default)."""

    variant: int
    order: tuple
    what: str


def link_perturbations(backend, orders=4, filler_places=4, seed=1):
    """The perturbations of scripts/bench.py --perturb: ``orders`` shuffles of the library's
    members (fixed seeds from ``seed``), then the filler inserted at ``filler_places`` places of
    the default order spread from its start to its end. Variants are numbered from 1."""
    import random

    members = library_members(backend)
    result = []
    for k in range(orders):
        order = list(members)
        random.Random(seed + k).shuffle(order)
        result.append(LinkPerturbation(len(result) + 1, tuple(order), f"order {seed + k}"))
    for k in range(filler_places):
        at = round(k * len(members) / max(1, filler_places - 1)) if filler_places > 1 else 0
        order = members[:at] + [LAYOUT_FILLER] + members[at:]
        where = f"before {members[at]}" if at < len(members) else "after the last member"
        result.append(LinkPerturbation(len(result) + 1, tuple(order), f"1 KiB {where}"))
    return result


def _chans():
    names = sorted(
        os.path.basename(p)[len("chan_") : -2]
        for p in glob.glob(os.path.join(FIRMWARE_DIR, "lib", "chan", "chan_*.c"))
    )
    # NoC messages first: the firmware Makefile's default.
    return sorted(names, key=lambda n: n != "noc")


#: Implementations of channels (firmware/include/subutai/chan.h), chosen when an image is built:
#: the ``firmware/lib/chan/chan_<name>.c`` files; the first (``noc``) is the default.
CHANS = _chans()
DEFAULT_CHAN = CHANS[0]


def check_chan(chan):
    """``chan`` (None: the default) if it names an implementation of channels, else ValueError."""
    if chan is None:
        return DEFAULT_CHAN
    if chan not in CHANS:
        raise ValueError(f"channel implementation {chan!r}: must be one of {', '.join(CHANS)}")
    return chan


def check_backend(backend):
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: must be one of {', '.join(BACKENDS)}")


def define_arg(text):
    """A C macro for an application's build, ``NAME`` or ``NAME=VALUE``: a C identifier and a value
    without spaces or quotes (it goes through make and the shell unquoted)."""
    name, _, value = text.partition("=")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise argparse.ArgumentTypeError(f"{text!r}: NAME or NAME=VALUE with NAME a C identifier")
    if re.search(r"[\s'\"$`\\]", value):
        raise argparse.ArgumentTypeError(f"{text!r}: the value may not hold spaces, quotes, $, ` or \\")
    return text


def build_firmware(
    soc_dir,
    app,
    out_dir=None,
    extra_cflags="",
    backend="subutai",
    program_args="",
    firmware_dir=FIRMWARE_DIR,
    layout_pad=0,
    perturbation=None,
    program_dir=None,
    chan=None,
):
    """Compile a firmware application (firmware/apps/) or benchmark program (firmware/programs/,
    run with "-t <tiles> program_args") against the generated headers of the SoC build
    ``soc_dir``, linked with a PThreads backend; return the path of its raw image (.bin).
    ``firmware_dir`` is the firmware/ tree to build (another checkout's, say); ``layout_pad``
    shifts all but the timed code and data by that many bytes (firmware/port/baremetal/linker.ld);
    ``perturbation`` (a :class:`LinkPerturbation`) links the library another way; ``program_dir``
    is a plain PThreads program of one's own (its .c files, any directory), built and run as the
    benchmark programs are but with exactly ``program_args``, split as a shell splits them, ``app``
    then being the directory's name (or None for it); ``chan``
    the implementation of channels (:data:`CHANS`, None the default)."""
    check_backend(backend)
    if chan is not None:
        check_chan(chan)
    if program_dir is not None:
        program_dir = os.path.abspath(program_dir)
        if not glob.glob(os.path.join(program_dir, "*.c")):
            raise ValueError(f"program directory {program_dir}: no C sources (*.c) there")
        app = app or os.path.basename(program_dir)
    if not isinstance(layout_pad, int) or layout_pad < 0 or layout_pad % 4:
        raise ValueError(f"layout_pad {layout_pad!r}: a non-negative multiple of 4 bytes")
    check_program_args(program_args, own_program=program_dir is not None)
    soc_dir = os.path.abspath(soc_dir)
    if out_dir is None:
        tag = slug(program_args)
        name = app
        if program_dir is not None:
            # Programs of one's own of the same name from other directories build apart: the
            # dependency files of one name the other's sources.
            name += "-" + hashlib.sha1(program_dir.encode()).hexdigest()[:8]
        if chan is not None:
            name += f"-chan_{chan}"
        out_dir = os.path.join(soc_dir, "firmware", f"{name}-{backend}" + (f"-{tag}" if tag else ""))
    cmd = [
        "make",
        "-s",
        "-C",
        firmware_dir,
        f"APP={app}",
        f"SOC_DIR={soc_dir}",
        f"OUT={out_dir}",
        f"BACKEND={backend}",
        f"ARGS={program_args}",
        f"LAYOUT_PAD={layout_pad}",
    ]
    if extra_cflags:
        cmd.append(f"EXTRA_CFLAGS={extra_cflags}")
    if chan is not None:
        cmd.append(f"CHAN={chan}")
    if perturbation is not None:
        cmd += [f"LIB_ORDER={' '.join(perturbation.order)}", f"LAYOUT_VARIANT={perturbation.variant}"]
    if program_dir is not None:
        cmd.append(f"PROGRAM_DIR={program_dir}")
    with build_lock(soc_dir):
        subprocess.run(cmd, check=True)
    return os.path.join(out_dir, f"{app}.bin")
