"""How finely the photo sees the table, and where that is too coarse to read bases by.

A base's size class is told from a millimetre or two of its outline, and its player from a thin rim. A camera
far from a big table, or with few pixels, gives each inch of the far edge only a few pixels, and those
readings then go wrong where nobody can see it. The scene says so, with the figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame

# Under this many photo pixels to the inch, base sizes and team colours are read less surely. 44"x60" tables
# rendered at 1280x720 to 1920x1080 (3,541 bases found, by the photo's scale where each stands; docs/vision.md,
# session 45): sizes right 92 % under 11 px/in, 96.7 % at 11-12, 98.6-99.5 % from 12 up; teams 96 %, 98 %, 99 %.
# With the size reader trained on coarse photos too (session 45): 95-96 %, 98.0 %, 98.9-99.5 %.
COARSE_PX_PER_IN = 12.0
GRID_POINTS = 17  # per side: the scale is sampled on a 17x17 grid over the table


def table_px_per_in(frame: TableFrame, width_in: float, depth_in: float) -> npt.NDArray[np.float64]:
    """The photo's pixels to the table's inch on a grid over the table (fewest at a tilted view's far edge)."""
    xs, ys = np.linspace(0.0, width_in, GRID_POINTS), np.linspace(0.0, depth_in, GRID_POINTS)
    grid = np.array([(x, y) for x in xs for y in ys])
    scales: npt.NDArray[np.float64] = 1.0 / frame.inches_per_pixel(grid)
    return scales


def coarse_note(scales_px_per_in: npt.ArrayLike, needed_px_per_in: float = COARSE_PX_PER_IN) -> dict[str, Any] | None:
    """The scene's ``measurement.coarse`` where part of the table is seen under ``needed_px_per_in``: the fewest
    pixels to the inch and the share of the table seen that coarsely; None where none is."""
    scales = np.asarray(scales_px_per_in, dtype=np.float64)
    share = float(np.mean(scales < needed_px_per_in))
    if share == 0.0:
        return None
    return {
        "px_per_in": round(float(scales.min()), 1),
        "needed_px_per_in": needed_px_per_in,
        "table_share": max(round(share, 2), 0.01),
    }


def describe_coarse(entry: dict[str, Any]) -> str:
    """The players' warning for a scene's ``measurement.coarse``."""
    return (
        f"the camera sees {entry['table_share']:.0%} of the table at under {entry['needed_px_per_in']:g} pixels to "
        f"the inch ({entry['px_per_in']} at the coarsest): base sizes, players' colours and objective markers there "
        "are read less surely - confirm them, or use a higher resolution or bring the camera closer"
    )
