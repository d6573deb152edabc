"""Rules benchmark: every ruling for a 2,000-point Grinding-Annihilation table.

About 80 troops in 14 formations and 20 terrain pieces on 44" x 60". Prints the
time for all rulings (`tablesight check`'s work: cohesion with removals, threat
ranges, objective control) plus every shooting ruling between enemy
formations (can-target with line of sight), the share of that time spent in
geometry/, and a baseline measured in the same run: the same shooting rulings
with the per-pair centre-line shortcut instead of region sight lines.
Run: ``python benchmarks/bench_rules.py``. Seeded; no arguments needed.
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
import time
from typing import Any

import numpy as np

from rules.grinding import Grinding
from tablesight.scene import Scene

R32 = 32 / 2 / 25.4


def build_scene(seed: int = 2000) -> Scene:
    rng = np.random.default_rng(seed)
    weapons = [
        {"name": "rifle", "range": 24, "sw": 2, "skill": 4, "s": 4, "ap": 0, "d": 1, "abilities": ["RAPID FIRE 1"]},
        {"name": "blade", "range": "melee", "sw": 2, "skill": 3, "s": 4, "ap": -1, "d": 1},
    ]
    units, models = [], []
    sizes = [10, 10, 5, 5, 5, 3, 2]  # 40 troops a side
    for p, player in enumerate(("red", "blue")):
        for u, size in enumerate(sizes):
            uid = f"{player}{u}"
            units.append(
                {
                    "id": uid,
                    "player": player,
                    "name": f"{player} formation {u}",
                    "profile": {
                        "move": 6,
                        "vigour": 4,
                        "defence": 4,
                        "wounds": 1 if size > 3 else 3,
                        "heroism": 7,
                        "be": 1,
                        "weapons": weapons,
                    },
                    "keywords": ["Infantry"],
                    "state": {},
                }
            )
            # Mid-game: both armies pushed into the middle of the table, many pairs in range.
            ux, uy = rng.uniform(4, 36), (rng.uniform(14, 26) if p == 0 else rng.uniform(33, 45))
            for k in range(size):
                models.append(
                    {"id": f"{uid}m{k}", "unit": uid, "base": "32", "x": ux + (k % 5) * 1.6, "y": uy + (k // 5) * 1.6}
                )
    kinds = ["ruins", "structure", "woods", "craters", "debris", "hill"]
    terrain = []
    for k in range(20):
        cx, cy = rng.uniform(5, 39), rng.uniform(22, 38) if k < 12 else rng.uniform(5, 55)
        w, h = rng.uniform(2, 6, 2)
        terrain.append(
            {
                "id": f"t{k}",
                "kind": kinds[k % len(kinds)],
                "polygon": [[cx, cy], [cx + w, cy], [cx + w, cy + h], [cx, cy + h]],
                "height_in": 3,
            }
        )
    objectives = [{"id": f"o{k}", "x": x, "y": 30.0, "diameter_mm": 40} for k, x in enumerate((8.0, 18.0, 28.0, 38.0))]
    data = {
        "format": "tablesight-scene/1",
        "game": "grinding-annihilation",
        "table": {"width_in": 44, "depth_in": 60},
        "players": [{"id": "red"}, {"id": "blue"}],
        "units": units,
        "models": models,
        "terrain": terrain,
        "objectives": objectives,
        "round": 2,
        "measurement": {"sigma_in": 0.02, "source": "camera"},
    }
    return Scene.from_dict(data, "bench")


def all_rulings(system: Grinding, scene: Scene) -> list[Any]:
    out = list(system.rulings(scene))
    for a in scene.units:
        for b in scene.units:
            if a.player != b.player:
                out.append(system.can_target(scene, a.id, b.id, "rifle"))
    return out


def centre_line_baseline(scene: Scene) -> int:
    """The shortcut many tools take: one line between formation centres, blocked by any terrain it crosses."""
    import shapely

    blocking = [t.shape for t in scene.terrain if t.kind in ("ruins", "structure")]
    for polygon in blocking:
        shapely.prepare(polygon)
    visible = 0
    for a in scene.units:
        for b in scene.units:
            if a.player == b.player:
                continue
            ca = np.mean([(m.x, m.y) for m in scene.models_of(a.id)], axis=0)
            cb = np.mean([(m.x, m.y) for m in scene.models_of(b.id)], axis=0)
            line = shapely.LineString([ca, cb])
            visible += not any(p.intersects(line) for p in blocking)
    return visible


def main() -> None:
    scene = build_scene()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        rulings = all_rulings(Grinding(), scene)  # a fresh referee each run: no results carried over
        times.append(time.perf_counter() - start)
    base = []
    for _ in range(5):
        start = time.perf_counter()
        centre_line_baseline(scene)
        base.append(time.perf_counter() - start)
    ours = statistics.median(times)
    naive = statistics.median(base)
    profile = cProfile.Profile()
    profile.enable()
    all_rulings(Grinding(), scene)
    profile.disable()
    stats = pstats.Stats(profile)
    raw = stats.stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in raw.values())
    # Time inside geometry/: cumulative time of geometry functions where a non-geometry function called them.
    geometry = 0.0
    for (path, _, _), (_, _, _, _, callers) in raw.items():
        if "/geometry/" in path:
            geometry += sum(c[3] for (cpath, _, _), c in callers.items() if "/geometry/" not in cpath)
    troops = len(scene.models)
    print(
        f"Grinding-Annihilation table: {troops} troops in {len(scene.units)} formations, {len(scene.terrain)} terrain pieces"
    )
    print(f"all rulings ({len(rulings)}: cohesion, threat range, objective control, can-target for every enemy pair):")
    print(f"  ours {ours * 1e3:.0f} ms (median of 5; target <= 200 ms)")
    print(f"  share spent in geometry/ (distances, sight lines, paths; under the profiler): {geometry / total:.0%}")
    print(
        f"  baseline, centre-line visibility only for the same {len(scene.units) ** 2 // 2} pairs: {naive * 1e3:.1f} ms (x{ours / naive:.0f})"
    )


if __name__ == "__main__":
    main()
