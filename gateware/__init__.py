"""Migen/LiteX gateware of the Subutai SoC: tiles, control blocks, NoC and NIs."""
