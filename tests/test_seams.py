"""The C seams run one way: the OS-agnostic library (firmware/include, firmware/lib) branches on no
operating system and reaches its runtime only through the port contract, subutai/port.h, which
every port's subutai_port.h fulfils whole (the bare-metal port in firmware/port/baremetal, Zephyr's in
zephyr-app/include). Static checks of the sources: no build, no simulation."""

import os
import re

from gateware.build import ROOT

CONTRACT = os.path.join(ROOT, "firmware", "include", "subutai", "port.h")
PORTS = {
    "bare metal": os.path.join(ROOT, "firmware", "port", "baremetal", "subutai_port.h"),
    "Zephyr": os.path.join(ROOT, "zephyr-app", "include", "subutai_port.h"),
}
#: What a branch or an include per operating system looks like.
OS_BRANCH = re.compile(r"__ZEPHYR__|SUBUTAI_ZEPHYR\b|#\s*include\s*<zephyr/")


def sources(*parts):
    top = os.path.join(ROOT, *parts)
    for directory, _, files in os.walk(top):
        for name in files:
            if name.endswith((".c", ".h", ".S")):
                yield os.path.join(directory, name)


def test_the_library_branches_on_no_operating_system():
    found = [
        f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}"
        for path in sources("firmware")
        for number, line in enumerate(open(path, errors="replace"), 1)
        if OS_BRANCH.search(line)
    ]
    assert not found, "a branch per operating system in firmware/:\n" + "\n".join(found)


def contract_names():
    """The primitives the contract names (subutai_port_*, SUBUTAI_PORT_*), less what it defines
    itself (its guard, its shared constants)."""
    text = open(CONTRACT).read()
    named = set(re.findall(r"\b(subutai_port_\w+|SUBUTAI_PORT_\w+)\b", text))
    own = set(re.findall(r"#define\s+(SUBUTAI_PORT_\w+)", text)) | {"SUBUTAI_PORT_API_H"}
    return named - own


def test_every_port_provides_the_whole_contract():
    names = contract_names()
    assert {"subutai_port_wait", "subutai_port_spin_wait", "subutai_port_chan_sleep"} <= names
    for port, path in PORTS.items():
        text = open(path).read()
        missing = [
            n
            for n in sorted(names)
            if not re.search(rf"#define\s+{n}\b|\b{n}\s*\(\s*(void|unsigned|uint32_t|struct|bool)", text)
        ]
        assert not missing, f"the {port} port ({os.path.relpath(path, ROOT)}) lacks {', '.join(missing)}"


def test_the_library_includes_no_port_but_through_the_contract():
    """A port's own headers (subutai/zephyr.h, irq.h of the bare-metal port) are the port's: the
    library reaches them only through <subutai_port.h>."""
    port_headers = re.compile(r"#\s*include\s*[<\"](subutai/zephyr\.h|subutai/sched\.h|irq\.h|ult\.h)[>\"]")
    found = [
        f"{os.path.relpath(path, ROOT)}: {m.group(0)}"
        for parts in (("firmware", "include"), ("firmware", "lib"))
        for path in sources(*parts)
        for m in port_headers.finditer(open(path).read())
    ]
    assert not found, "\n".join(found)


def defined_functions(path):
    """The functions a C file defines with external linkage."""
    text = open(path).read()
    return set(re.findall(r"^(?!static)[A-Za-z_][\w \*]*?\b(\w+)\(([^;{]*)\)\s*\{", text, re.M))


def test_the_bare_metal_scheduler_calls_nothing_of_the_ports_threads():
    """The user-level thread scheduler (ult.c) is what the port's threads (thread_baremetal.c) run
    on: they call it, and it calls them only through what they hand it (a thread's main, the
    spawn handler), so the two files do not call each other."""
    port = os.path.join(ROOT, "firmware", "port", "baremetal")
    threads = {name for name, _ in defined_functions(os.path.join(port, "thread_baremetal.c"))}
    assert {"rt_spawn", "pthread_exit"} <= threads
    scheduler = open(os.path.join(port, "ult.c")).read()
    called = sorted(n for n in threads if re.search(rf"\b{n}\s*\(", scheduler))
    assert not called, f"ult.c calls {', '.join(called)} of thread_baremetal.c"


def test_the_library_is_apart_from_its_ports():
    """firmware/lib is the OS-agnostic library: the bare-metal port's files (start-up, linker
    script, threads, the NI's waits) are in firmware/port/baremetal, as Zephyr's are in
    zephyr-app/, and nothing of the library includes them."""
    port_files = {os.path.basename(p) for p in sources("firmware", "port", "baremetal")}
    assert {"crt0.S", "ult.c", "thread_baremetal.c", "subutai_port.h"} <= port_files
    library = {os.path.basename(p) for p in sources("firmware", "lib")}
    assert not port_files & library, f"port files in firmware/lib: {sorted(port_files & library)}"
    include = re.compile(r"#\s*include\s*\"(\w+\.h)\"")
    found = [
        f"{os.path.relpath(path, ROOT)}: {m.group(1)}"
        for path in sources("firmware", "lib")
        for m in include.finditer(open(path).read())
        if m.group(1) in port_files
    ]
    assert not found, "\n".join(found)
