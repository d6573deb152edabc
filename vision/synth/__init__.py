"""Deterministic rendering of gaming tables as a webcam sees them, with exact ground truth."""
