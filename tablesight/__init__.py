"""tablesight: an overhead-camera referee for tabletop miniature games."""

__version__ = "0.1.0"
