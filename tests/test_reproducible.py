"""Reproducible firmware: one commit gives byte-identical images wherever it is checked out."""

import filecmp
import os
import shutil
import subprocess

from soc.firmware import FIRMWARE_DIR


def _build(firmware_dir, soc_dir, out_dir, app):
    subprocess.run(["make", "-s", "-C", firmware_dir, f"APP={app}", f"SOC_DIR={soc_dir}",
        f"OUT={out_dir}", "BACKEND=subutai"], check=True)
    return {ext: os.path.join(out_dir, f"{app}.{ext}") for ext in ("elf", "bin")}


def test_firmware_image_does_not_depend_on_checkout_path(sim, tmp_path):
    """Two copies of firmware/ at different paths, the SoC build seen through two different paths:
    the images and their ELF files (debug information included) are identical. The program uses
    __FILE__, which would carry the checkout path."""
    soc_dir = sim.model(2, 1).output_dir
    images = []
    for name in ("a", "checkout-b/deeper"):
        root = tmp_path / name
        shutil.copytree(FIRMWARE_DIR, root / "firmware")
        soc_link = root / "soc-build"
        os.symlink(soc_dir, soc_link)
        images.append(_build(str(root / "firmware"), str(soc_link), str(root / "out"), "radix"))
    for ext in ("bin", "elf"):
        assert filecmp.cmp(images[0][ext], images[1][ext], shallow=False), ext
    with open(images[0]["elf"], "rb") as f:
        elf = f.read()
    assert str(tmp_path).encode() not in elf
