"""Reproducible firmware: one commit gives byte-identical images wherever it is checked out."""

import filecmp
import os
import shutil

from soc.firmware import FIRMWARE_DIR, build_firmware


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
        images.append(
            build_firmware(
                str(soc_link), "radix", out_dir=str(root / "out"), firmware_dir=str(root / "firmware")
            )
        )
    for ext in (".bin", ".elf"):
        files = [os.path.splitext(image)[0] + ext for image in images]
        assert filecmp.cmp(files[0], files[1], shallow=False), ext
    with open(os.path.splitext(images[0])[0] + ".elf", "rb") as f:
        elf = f.read()
    assert str(tmp_path).encode() not in elf
