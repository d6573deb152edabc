"""Camera calibration: pixels <-> table inches (fiducials, lens model, camera pose).

Empty until the calibration issue lands; the package exists so the layout and
the dependency direction (calibration never imports rules or web) are fixed now.
"""
