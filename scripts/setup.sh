#!/usr/bin/env bash
# Installs everything the project needs on a Debian 12 machine: apt packages
# (Verilator, the RISC-V cross compiler, picolibc, ccache, clang-format, cppcheck, Open MPI for a
# simulation model cut into partitions across hosts) and a Python
# virtual environment with LiteX and its data packages from PyPI.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
venv=${VENV:-$here/.venv}
python=${PYTHON:-python3}

APT_PACKAGES=(
    verilator libevent-dev libjson-c-dev zlib1g-dev
    gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
    device-tree-compiler ccache make cmake clang-format cppcheck
    openmpi-bin libopenmpi-dev
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "[setup] apt: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    echo "[setup] apt: all packages present"
fi

if [ ! -x "$venv/bin/python" ]; then
    echo "[setup] creating virtual environment $venv"
    "$python" -m venv "$venv"
fi
echo "[setup] pip: installing the project (editable) and its dependencies (pyproject.toml)"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q -e "$here[test,zephyr]"
# From any directory: the project's packages come from this checkout.
(cd / && "$venv/bin/python" -c "import gateware, soc, boards, scripts, litex, migen") \
    || { echo "[setup] error: the project is not importable from the venv" >&2; exit 1; }
echo "[setup] done: project and LiteX importable from $venv"
