"""Perception: detections in pixels -> pieces in table inches with uncertainty.

Empty until the perception issue lands.
"""
