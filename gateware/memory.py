#
# Memory system of the tiles: a crossbar from every tile uplink to main RAM banks interleaved at
# cache-line granularity, and to one port towards the SoC's own bus for everything else.
#
"""Interleaved, multi-bank main RAM behind a crossbar.

One shared, unpipelined bus into one RAM does not scale: every refill, fetch miss and
write-through store of every core queues on it (a many-core whose 8 tiles ran slower than one).
Here main RAM is ``n_banks`` single-ported SRAMs, each with its own round-robin arbiter, and a
crossbar (:class:`gateware.crossbar.Crossbar`, LiteX's in linear terms) decodes every master onto
them:

- **Interleaving at line granularity.** Consecutive cache lines (``line_bytes``) live in
  consecutive banks, so a refill burst stays in one bank while the streams of different cores,
  and the instruction fetches of all cores, spread over all of them.
- **Hashed bank selection.** The bank of a line is its low index bits XOR-folded with all its
  higher index bits (:func:`bank_of`): data split among cores at power-of-two strides (one slice
  per core, the usual partitioning) would otherwise put every core in the same bank at the same
  time and keep them there, one convoy moving from bank to bank.
- **Bursts.** The banks honour Wishbone incrementing bursts (``cti``): a refill of 8 words is
  acknowledged on consecutive cycles instead of every other cycle. A burst that left its line
  would simply be decoded to the next bank as a new access (the VexRiscv caches burst exactly
  one aligned line).
- **Uncached I/O** (atomic unit, global CSRs, UART, boot ROM) goes out on ``io``, a master of the
  SoC's bus, so every core reaches it as before.

Bank ``bank_of(line)`` holds a line at the bank-local line index ``line >> log2(n_banks)`` (the
hash only decides the bank, so this stays one-to-one); inside a line the word offset is kept. In simulation each bank's
content is loaded at start from ``<build>_main_ram_bank<k>.init`` (see
:func:`bank_images`).
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone

from gateware.crossbar import Crossbar


def bank_of(line, bank_bits, line_index_bits):
    """Bank of a line index: the XOR of its ``bank_bits``-wide groups of bits (the low group and
    every higher one, up to ``line_index_bits``). Works on ints and on Migen values."""
    if bank_bits == 0:
        return 0
    if isinstance(line, int):
        group = lambda lsb: (line >> lsb) & ((1 << bank_bits) - 1)
    else:
        group = lambda lsb: line[lsb : min(lsb + bank_bits, line_index_bits)]
    bank = group(0)
    for lsb in range(bank_bits, line_index_bits, bank_bits):
        bank = bank ^ group(lsb)
    return bank


def log2_exact(n, what):
    if n < 1 or n & (n - 1):
        raise ValueError(f"{what} must be a power of two (got {n})")
    return n.bit_length() - 1


def geometry(n_banks, size, line_bytes):
    """(line_bits, bank_bits, index_bits) of a main RAM of ``size`` bytes in ``n_banks`` banks of
    whole ``line_bytes`` lines: bits of a word inside a line, of a bank number, of a line index."""
    line_bits = log2_exact(line_bytes // 4, "line_bytes/4")
    bank_bits = log2_exact(n_banks, "n_banks")
    index_bits = log2_exact(size // line_bytes, "main RAM lines")
    if size % (n_banks * line_bytes):
        raise ValueError(f"main RAM of {size} bytes does not hold whole lines in {n_banks} banks")
    return line_bits, bank_bits, index_bits


class InterleavedMainRAM(LiteXModule):
    """Main RAM of ``size`` bytes at ``region`` in ``n_banks`` line-interleaved SRAM banks.

    ``masters``: Wishbone masters (word addressing), e.g. the tile uplinks; each reaches every
    bank and ``io``. ``init``: if not None, the initial content of every bank (a one-word list
    makes the simulation read the bank's ``.init`` file at start).
    """

    def __init__(self, masters, region, n_banks=4, line_bytes=32, init=None):
        self.n_banks = n_banks
        self.line_bytes = line_bytes
        self.size = region.size
        self.io = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        line_bits, bank_bits, index_bits = geometry(n_banks, region.size, line_bytes)
        in_main_ram = region.decoder(self.io)
        self.banks = []
        slaves = []
        for k in range(n_banks):
            bank = wishbone.SRAM(
                region.size // n_banks,
                init=init,
                name=f"main_ram_bank{k}",
                bus=wishbone.Interface(data_width=32, address_width=32, addressing="word", bursting=True),
            )
            setattr(self.submodules, f"bank{k}", bank)
            self.banks.append(bank)
            port = wishbone.Interface(data_width=32, address_width=32, addressing="word")
            # The bank's own word address: the bank bits taken out of the line index.
            self.comb += [
                port.connect(bank.bus, omit={"adr"}),
                bank.bus.adr.eq(Cat(port.adr[:line_bits], port.adr[line_bits + bank_bits :])),
            ]
            selects = lambda adr, k=k: (
                in_main_ram(adr)
                & (bank_of(adr[line_bits : line_bits + index_bits], bank_bits, index_bits) == k)
            )
            slaves.append((selects, port))
        slaves.append((lambda adr: ~in_main_ram(adr), self.io))
        # The matches above at once: one hash of the line index per master.
        select = lambda adr: Mux(
            in_main_ram(adr), bank_of(adr[line_bits : line_bits + index_bits], bank_bits, index_bits), n_banks
        )
        self.crossbar = Crossbar(masters, slaves, select=select)


def bank_images(words, n_banks, size, line_bytes=32):
    """Split a main-RAM image (a list of 32-bit words from address 0) into the images of the
    ``n_banks`` banks of a main RAM of ``size`` bytes, in the layout of
    :class:`InterleavedMainRAM`."""
    line_words = line_bytes // 4
    _, bank_bits, index_bits = geometry(n_banks, size, line_bytes)
    banks = [[] for _ in range(n_banks)]
    for start in range(0, len(words), line_words):
        line = start // line_words
        bank = banks[bank_of(line, bank_bits, index_bits)]
        local = (line >> bank_bits) * line_words
        chunk = words[start : start + line_words]
        bank.extend([0] * (local + line_words - len(bank)))
        bank[local : local + line_words] = chunk + [0] * (line_words - len(chunk))
    return banks


class RegisteredSRAM(LiteXModule):
    """LiteX's :class:`~litex.soc.interconnect.wishbone.SRAM` whose read data and acknowledgement
    leave through a register: one cycle more per access (3 instead of 2), and no path from the
    block RAM's read data into the bus's read multiplexer.

    For the memories of the boards' shared SoC bus (the BIOS ROM and its SRAM): a block RAM's
    data comes late in the cycle (its output register is not used) and the placer puts the
    ROM's dozen blocks wherever room is left, so on 8 tiles the path from them through the bus's
    read multiplexer into a tile's uplink was the longest of the device (22.1 ns at a 20 ns
    period; docs/architecture.md, Boards). Only the BIOS reads them; every program runs from
    main RAM and the tiles' own memories.

    Bursts are answered as classic cycles, one word per access (Wishbone B4 lets a slave ignore
    ``cti``; the tiles' uplinks move to the next beat on each acknowledgement). ``bus``,
    ``init``, ``read_only`` and ``name`` are LiteX's; ``mem`` is the SRAM's (LiteX's
    ``init_rom`` sets its contents)."""

    # As LiteX's SRAM: the memory is the bus's alone, not also a CSR-mapped one (a second port).
    autocsr_exclude = {"mem"}

    def __init__(self, mem_or_size, read_only=None, init=None, bus=None, name=None):
        if bus is None:
            bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.bus = bus
        # The SRAM's own port: classic cycles only, so its address is always the request's.
        inner = wishbone.Interface(data_width=len(bus.dat_w), address_width=len(bus.adr), addressing="word")
        self.sram = wishbone.SRAM(mem_or_size, read_only=read_only, init=init, bus=inner, name=name)
        self.mem = self.sram.mem

        # # #

        self.comb += [
            bus.connect(inner, keep={"adr", "dat_w", "sel", "we"}),
            # While the registered answer is out, the SRAM is not asked again.
            inner.cyc.eq(bus.cyc & ~bus.ack),
            inner.stb.eq(bus.stb & ~bus.ack),
        ]
        self.sync += [
            bus.ack.eq(inner.ack),
            bus.dat_r.eq(inner.dat_r),
        ]
