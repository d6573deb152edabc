"""Where the fiducial markers lie on the table (inches), and the printed kit's fixed IDs.

A layout file (JSON):
    {"table": {"width_in": 24, "depth_in": 24},
     "markers": [{"id": 0, "x_in": 1.5, "y_in": 1.5, "size_in": 2.0, "rotation_deg": 0}, ...]}
``x_in, y_in`` is the marker's centre; ``rotation_deg`` turns the printed marker
(its top edge) from the table's +x axis towards +y.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MARKER_DICTIONARY = "DICT_5X5_100"  # corner/edge markers and objective tokens
CORNER_IDS = (0, 1, 2, 3)  # top-left, top-right, bottom-right, bottom-left of the calibrated view
SIDE_IDS = (4, 5)  # the kit's optional markers at the middle of the long edges (the left or top one first)
TOKEN_IDS = tuple(range(40, 52))  # printable objective tokens
DEFAULT_MARKER_IN = 2.0
LARGE_MARKER_IN = 3.0
DEFAULT_INSET_IN = 0.5  # gap between the printed marker and the table edges


class LayoutError(ValueError):
    """A layout that cannot be right: names the file, the marker and the reason."""


@dataclass(frozen=True)
class MarkerPlacement:
    id: int
    x_in: float
    y_in: float
    size_in: float
    rotation_deg: float = 0.0

    def corners_in(self) -> npt.NDArray[np.float64]:
        """The marker's 4 corners on the table, in ArUco's order (its top-left, top-right, bottom-right, bottom-left)."""
        h = self.size_in / 2
        local = np.array([[-h, -h], [h, -h], [h, h], [-h, h]])
        a = math.radians(self.rotation_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        out: npt.NDArray[np.float64] = local @ rot.T + np.array([self.x_in, self.y_in])
        return out


@dataclass(frozen=True)
class Layout:
    width_in: float
    depth_in: float
    markers: tuple[MarkerPlacement, ...]

    def by_id(self) -> dict[int, MarkerPlacement]:
        return {m.id: m for m in self.markers}

    def on_marker(self, x_in: npt.ArrayLike, y_in: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Which points lie on a calibration marker's printed square. No objective marker is put down there: it
        would hide the square the camera is calibrated by."""
        x, y = np.atleast_1d(np.asarray(x_in, np.float64)), np.atleast_1d(np.asarray(y_in, np.float64))
        on = np.zeros(x.shape, dtype=bool)
        for m in self.markers:
            a = math.radians(m.rotation_deg)
            u = (x - m.x_in) * math.cos(a) + (y - m.y_in) * math.sin(a)
            v = -(x - m.x_in) * math.sin(a) + (y - m.y_in) * math.cos(a)
            on |= (np.abs(u) <= m.size_in / 2) & (np.abs(v) <= m.size_in / 2)
        return on

    def to_json(self) -> dict[str, Any]:
        return {
            "table": {"width_in": self.width_in, "depth_in": self.depth_in},
            "markers": [
                {"id": m.id, "x_in": m.x_in, "y_in": m.y_in, "size_in": m.size_in, "rotation_deg": m.rotation_deg}
                for m in self.markers
            ],
        }

    @classmethod
    def default(
        cls, width_in: float, depth_in: float, size_in: float | None = None, side_markers: bool = False
    ) -> Layout:
        """The kit's four corner markers, 0.5" in from both edges at each corner.
        2" markers, or 3" on tables over 36" so a 720p camera still resolves them.
        ``side_markers``: two more (SIDE_IDS), 0.5" in from the middle of each long edge. The map from four
        corners is least sure in the middle of a tilted 44"x60" table's far half: with six markers on those tables
        the held-out centre p95 was 0.959 mm against 0.993 (docs/calibration.md, session 38)."""
        if size_in is None:
            size_in = DEFAULT_MARKER_IN if max(width_in, depth_in) <= 36 else LARGE_MARKER_IN
        c = DEFAULT_INSET_IN + size_in / 2
        spots = [(c, c), (width_in - c, c), (width_in - c, depth_in - c), (c, depth_in - c)]
        ids = list(CORNER_IDS)
        if side_markers:
            if depth_in >= width_in:
                spots += [(c, depth_in / 2), (width_in - c, depth_in / 2)]
            else:
                spots += [(width_in / 2, c), (width_in / 2, depth_in - c)]
            ids += SIDE_IDS
        return cls(
            width_in,
            depth_in,
            tuple(MarkerPlacement(i, x, y, size_in) for i, (x, y) in zip(ids, spots, strict=True)),
        )

    @classmethod
    def load(cls, path: str | Path) -> Layout:
        source = str(path)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise LayoutError(f"{source}: no such layout file") from None
        except (OSError, json.JSONDecodeError) as error:
            raise LayoutError(f"{source}: not a readable JSON layout ({error})") from None
        return cls.from_json(data, source)

    @classmethod
    def from_json(cls, data: Any, source: str = "<layout>") -> Layout:
        try:
            table = data["table"]
            width, depth = float(table["width_in"]), float(table["depth_in"])
            markers = tuple(
                MarkerPlacement(
                    int(m["id"]),
                    float(m["x_in"]),
                    float(m["y_in"]),
                    float(m.get("size_in", DEFAULT_MARKER_IN)),
                    float(m.get("rotation_deg", 0.0)),
                )
                for m in data["markers"]
            )
        except (KeyError, TypeError, ValueError) as error:
            raise LayoutError(
                f"{source}: malformed layout ({error!r}); expected table.width_in/depth_in and markers[].id/x_in/y_in"
            ) from None
        layout = cls(width, depth, markers)
        layout.validate(source)
        return layout

    def validate(self, source: str = "<layout>") -> None:
        """Raise LayoutError if the layout contradicts itself."""
        if not (self.width_in > 0 and self.depth_in > 0):
            raise LayoutError(f"{source}: table size {self.width_in} x {self.depth_in} is not positive")
        if len(self.markers) < 2:
            raise LayoutError(f"{source}: a layout needs at least 2 markers, has {len(self.markers)}")
        seen: set[int] = set()
        for k, m in enumerate(self.markers):
            if m.id in seen:
                raise LayoutError(f"{source}: markers[{k}].id: marker {m.id} is listed twice")
            seen.add(m.id)
            if not m.size_in > 0:
                raise LayoutError(f"{source}: markers[{k}].size_in: {m.size_in} is not positive")
            corners = m.corners_in()
            if (
                corners.min() < -1e-9
                or np.any(corners[:, 0] > self.width_in + 1e-9)
                or np.any(corners[:, 1] > self.depth_in + 1e-9)
            ):
                raise LayoutError(
                    f"{source}: markers[{k}]: marker {m.id} at ({m.x_in}, {m.y_in}) does not fit on the {self.width_in:g} x {self.depth_in:g} in table"
                )
        for i, a in enumerate(self.markers):
            for b in self.markers[i + 1 :]:
                if math.hypot(a.x_in - b.x_in, a.y_in - b.y_in) < (a.size_in + b.size_in) / 2:
                    raise LayoutError(f"{source}: markers {a.id} and {b.id} overlap")
