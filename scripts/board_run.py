#!/usr/bin/env python3
"""Run a firmware image on a board: LiteX serial boot, then capture its output.

    .venv/bin/python scripts/board_run.py --port /dev/ttyUSB0 --image app.bin [--output F] ...

The command line of :mod:`soc.serial_boot` (``--help`` says the rest).
"""

import sys

from soc.serial_boot import main

if __name__ == "__main__":
    sys.exit(main())
