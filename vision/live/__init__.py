"""The live table: frame sources, motion gating, identity across moves."""
