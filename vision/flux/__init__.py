"""Reading an Affinity: Flux table from the camera: cards, their owners' designs, zones, Life Tokens."""
