#!/usr/bin/env python3
#
# Devicetree of one Subutai SoC build, generated from its csr.json.
#
#   gen_soc_dtsi.py build/sim_2x2_standard_i8k2way/csr.json out/dts/riscv/subutai_soc.dtsi --code-size 0x60000
#
# The board subutai_litex (zephyr-app/boards/) includes the result, so a Zephyr image follows the
# SoC it was built for: CSR addresses, interrupt numbers, memories and clock all come from the SoC
# generator. Every core runs the same image, so tile-local blocks (timer, NI, Subutai engine) are
# described once at the tile-local addresses each core sees for its own tile.
#
# Memory layout of one image (see docs/architecture.md, "Zephyr on every tile"):
#   code     main RAM from its origin, --code-size bytes: text, rodata, the kernels' .data images
#            (Zephyr's "flash": XIP, nothing is copied back there)
#   shared   the rest of main RAM: application .data/.bss, the heap, thread stacks
#   tile_ram each core's private SRAM: its kernel's .data/.bss, its interrupt and idle stacks

import argparse
import json
import sys


def regs(csr, prefix):
    """(name, address, bytes) of a CSR block's registers, in address order."""
    out = []
    for name, reg in csr["csr_registers"].items():
        if name.startswith(prefix + "_"):
            out.append((name[len(prefix) + 1 :], reg["addr"], 4 * reg["size"]))
    if not out:
        raise SystemExit(f"error: csr.json has no {prefix}_* registers")
    return sorted(out, key=lambda r: r[1])


def block_size(csr, prefix):
    """Bytes a CSR block's registers span, from its base to the end of its last register."""
    base = csr["csr_bases"][prefix]
    return max(a + n for _, a, n in regs(csr, prefix)) - base


def reg_props(registers, indent):
    pad = "\t" * indent
    cells = f"\n{pad}      ".join(f"0x{a:08x} 0x{n:x}" for _, a, n in registers)
    names = f",\n{pad}\t    ".join(f'"{r}"' for r, _, _ in registers)
    return f"{pad}reg = <{cells}>;\n{pad}reg-names = {names};\n"


def chan_node(csr):
    """The tile's channel port, in a SoC built with channels (its CSR bank and window)."""
    bases, mem = csr["csr_bases"], csr["memories"]
    if "chan" not in bases or "tile_chan" not in mem:
        return ""
    irq = csr["constants"]["chan_interrupt"]
    window = mem["tile_chan"]
    return f"""
		/* Tile-local: the channel port (rdy-ack channels through the NoC). Disabled unless an
		 * application uses channels (dts/chan.overlay, soc.zephyr.chan_conf()): an enabled
		 * interrupt adds its dispatch to every image's interrupt handler. */
		chan0: channel-port@{bases["chan"]:x} {{
			compatible = "subutai,chan";
			interrupt-parent = <&intc0>;
			interrupts = <{irq} 0>;
			reg = <0x{bases["chan"]:08x} 0x{block_size(csr, "chan"):x}
			       0x{window["base"]:08x} 0x{window["size"]:x}>;
			reg-names = "csr", "window";
			status = "disabled";
		}};
"""


def generate(csr, code_size):
    const = csr["constants"]
    mem = csr["memories"]
    main_ram, tile_ram = mem["main_ram"], mem["tile_ram"]
    if code_size >= main_ram["size"]:
        raise SystemExit(
            f"error: code size 0x{code_size:x} leaves no shared RAM "
            f"(main RAM is 0x{main_ram['size']:x} bytes)"
        )
    shared_base = main_ram["base"] + code_size
    shared_size = main_ram["size"] - code_size
    bases = csr["csr_bases"]
    irq = lambda name: const[f"{name}_interrupt"]
    ident = f"Subutai SoC {const['mesh_x']}x{const['mesh_y']}"
    sim = "sim_ctrl" in bases
    return f"""\
/*
 * {ident}: generated from csr.json by zephyr-app/scripts/gen_soc_dtsi.py. Do not edit.
 */

#include <mem.h>

/ {{
	#address-cells = <1>;
	#size-cells = <1>;
	model = "{ident}";
	compatible = "subutai,litex-soc", "litex,vexriscv";

	chosen {{
		zephyr,console = &uart0;
		zephyr,sram = &tile_ram;
		zephyr,flash = &code;
	}};

	cpus {{
		#address-cells = <1>;
		#size-cells = <0>;

		cpu0: cpu@0 {{
			clock-frequency = <{const["config_clock_frequency"]}>;
			compatible = "litex,vexriscv-standard", "riscv";
			device_type = "cpu";
			reg = <0>;
			riscv,isa = "rv32im_zicsr_zifencei";
			status = "okay";
		}};
	}};

	/* Each core's private SRAM, at the same address in every tile. */
	tile_ram: memory@{tile_ram["base"]:x} {{
		compatible = "mmio-sram";
		reg = <0x{tile_ram["base"]:08x} 0x{tile_ram["size"]:x}>;
	}};

	/* Main RAM, first part: the image every core executes. */
	code: flash@{main_ram["base"]:x} {{
		compatible = "soc-nv-flash";
		reg = <0x{main_ram["base"]:08x} 0x{code_size:x}>;
	}};

	/* Main RAM, second part: what the cores share. */
	shared_ram: memory@{shared_base:x} {{
		compatible = "zephyr,memory-region", "mmio-sram";
		reg = <0x{shared_base:08x} 0x{shared_size:x}>;
		zephyr,memory-region = "SHARED";
	}};

	soc {{
		#address-cells = <1>;
		#size-cells = <1>;
		compatible = "litex,vexriscv";
		ranges;

		intc0: interrupt-controller@bc0 {{
			compatible = "litex,vexriscv-intc0";
			#address-cells = <0>;
			#interrupt-cells = <2>;
			interrupt-controller;
			reg = <0xbc0 0x4 0xfc0 0x4>;
			reg-names = "irq_mask", "irq_pending";
			riscv,max-priority = <7>;
		}};

		/* Shared by all cores; its interrupt line reaches core 0 only (polled output). */
		uart0: serial@{bases["uart"]:x} {{
			compatible = "litex,uart";
			interrupt-parent = <&intc0>;
			interrupts = <{irq("uart")} 0>;
{reg_props(regs(csr, "uart"), 3)}\t\t\tcurrent-speed = <115200>;
			status = "okay";
		}};

		/* Tile-local: each core sees its own timer here. */
		timer0: timer@{bases["timer0"]:x} {{
			compatible = "litex,timer0";
			interrupt-parent = <&intc0>;
			interrupts = <{irq("timer0")} 0>;
{reg_props(regs(csr, "timer0"), 3)}\t\t\tstatus = "okay";
		}};

		/* Tile-local: the network interface (NoC messages)... */
		ni0: network-interface@{bases["ni"]:x} {{
			compatible = "subutai,ni";
			interrupt-parent = <&intc0>;
			interrupts = <{irq("ni")} 0>;
			reg = <0x{bases["ni"]:08x} 0x{block_size(csr, "ni"):x}>;
			engine = <&engine0>;
			mesh-x = <{const["mesh_x"]}>;
			mesh-y = <{const["mesh_y"]}>;
			status = "okay";
		}};

		/* ...and its Subutai-HW synchronization engine (replies). */
		engine0: sync-engine@{bases["subutai"]:x} {{
			compatible = "subutai,sync-engine";
			interrupt-parent = <&intc0>;
			interrupts = <{irq("subutai")} 0>;
			reg = <0x{bases["subutai"]:08x} 0x{block_size(csr, "subutai"):x}>;
			status = "okay";
		}};
{chan_node(csr)}{
        '''
		/* Simulation only: ends the simulation with an exit code. */
		sim_ctrl: sim-control@%x {
			compatible = "subutai,sim-control";
			reg = <0x%08x 0x%x>;
			status = "okay";
		};
'''
        % (bases["sim_ctrl"], bases["sim_ctrl"], block_size(csr, "sim_ctrl"))
        if sim
        else ""
    }\t}};
}};
"""


def main():
    p = argparse.ArgumentParser(
        description="Generate the devicetree of a Subutai SoC build from its csr.json."
    )
    p.add_argument("csr_json", help="csr.json of the SoC build")
    p.add_argument("output", help="dtsi to write")
    p.add_argument(
        "--code-size",
        type=lambda s: int(s, 0),
        required=True,
        help="bytes of main RAM for the image (SUBUTAI_CODE_SIZE of cmake/subutai.cmake); the rest is shared",
    )
    args = p.parse_args()
    try:
        with open(args.csr_json) as f:
            csr = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"error: cannot read {args.csr_json}: {e}")
    for key in ("n_tiles", "ni_interrupt", "subutai_interrupt"):
        if key not in csr["constants"]:
            raise SystemExit(f"error: {args.csr_json} is not a Subutai SoC build (no {key})")
    text = generate(csr, args.code_size)
    try:
        with open(args.output) as f:
            if f.read() == text:
                return 0  # unchanged: keep the timestamp, so Zephyr does not reconfigure
    except OSError:
        pass
    with open(args.output, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
