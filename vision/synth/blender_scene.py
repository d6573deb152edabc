"""Path-traced photos of a planned table: run by Blender's Python (``bpy``), never imported by tablesight.

    .venv-bpy/bin/python vision/synth/blender_scene.py PLAN.json

PLAN.json is written by ``vision.synth.photoreal``: the table's flat texture (mat,
objective markers, the kit's markers), the terrain, the models, the camera and
the light. This script builds the 3-D scene — terrain as solids (ruined walls,
hills with rounded edges; woods, with trees, and difficult ground as thin templates), bases as bevelled
cylinders with a coloured rim, miniature-like figures (legs, torso, shoulder pads, head, arms, a
weapon that overhangs the base; horses for oval bases) — and renders it with
Cycles twice: with the models (the photo) and without them (the empty-table
reference), same camera and light. Blender units are inches; x across the table,
y up the table (table y flipped), z up.
"""

from __future__ import annotations

import colorsys
import json
import math
import random
import sys
from typing import Any

# isort: off
import bpy  # type: ignore[import-not-found]  # first: bmesh and mathutils exist only once bpy is loaded
import bmesh  # type: ignore[import-not-found]
from mathutils import Matrix, Vector  # type: ignore[import-not-found]

# isort: on

BASE_HEIGHT_IN = 0.15  # as geometry.shapes (this script runs in Blender's Python, without the package)


def _material(name: str, rgb: list[float], roughness: float = 0.7, metallic: float = 0.0, noise: float = 0.0) -> Any:
    """A Principled material; ``noise`` mottles the colour (paint, stone) by that fraction."""
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    bsdf = nodes["Principled BSDF"]
    bsdf.inputs["Roughness"].default_value = roughness
    bsdf.inputs["Metallic"].default_value = metallic
    if noise <= 0:
        bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
        return mat
    tex = nodes.new("ShaderNodeTexNoise")
    tex.inputs["Scale"].default_value = 3.0
    ramp = nodes.new("ShaderNodeValToRGB")
    lo, hi = ramp.color_ramp.elements
    lo.color = (*(c * (1 - noise) for c in rgb), 1.0)
    hi.color = (*(min(1.0, c * (1 + noise)) for c in rgb), 1.0)
    links.new(tex.outputs["Fac"], ramp.inputs["Fac"])
    links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
    return mat


def _object(name: str, bm: Any, materials: list[Any]) -> Any:
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    for m in materials:
        mesh.materials.append(m)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _tagged(bm: Any, material_index: int, smooth: bool, make: Any) -> None:
    """Run a bmesh op that adds geometry and give its new faces one material."""
    before = set(bm.faces)
    make()
    for face in set(bm.faces) - before:
        face.material_index = material_index
        face.smooth = smooth


def _prism(bm: Any, polygon: list[tuple[float, float]], z0: float, z1: float, material_index: int = 0) -> None:
    """A solid standing on a footprint polygon (Blender x, y), from z0 to z1."""

    def make() -> None:
        bottom = [bm.verts.new((x, y, z0)) for x, y in polygon]
        top = [bm.verts.new((x, y, z1)) for x, y in polygon]
        bm.faces.new(bottom[::-1])
        bm.faces.new(top)
        n = len(polygon)
        for k in range(n):
            j = (k + 1) % n
            bm.faces.new((bottom[k], bottom[j], top[j], top[k]))

    _tagged(bm, material_index, False, make)


def _box(bm: Any, centre: tuple[float, float, float], size: tuple[float, float, float], m: Any, index: int) -> None:
    matrix = m @ Matrix.Translation(centre) @ Matrix.Diagonal((*size, 1.0))
    _tagged(bm, index, False, lambda: bmesh.ops.create_cube(bm, size=1.0, matrix=matrix))


def _cone(bm: Any, a: Vector, b: Vector, r1: float, r2: float, m: Any, index: int, segments: int = 16) -> None:
    """A (truncated) cone from point a (radius r1) to point b (radius r2), in the local frame m."""
    axis = b - a
    rot = axis.to_track_quat("Z", "Y").to_matrix().to_4x4()
    matrix = m @ Matrix.Translation((a + b) / 2) @ rot
    _tagged(
        bm,
        index,
        True,
        lambda: bmesh.ops.create_cone(
            bm, cap_ends=True, segments=segments, radius1=r1, radius2=r2, depth=axis.length, matrix=matrix
        ),
    )


def _sphere(bm: Any, centre: Vector, radii: tuple[float, float, float], m: Any, index: int) -> None:
    matrix = m @ Matrix.Translation(centre) @ Matrix.Diagonal((*radii, 1.0))
    _tagged(
        bm, index, True, lambda: bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=10, radius=1.0, matrix=matrix)
    )


def _flip(points: list[list[float]]) -> list[tuple[float, float]]:
    """Table (x, y down) to Blender (x, y up), keeping the polygon's winding counter-clockwise."""
    out = [(float(x), -float(y)) for x, y in points]
    area = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(out, out[1:] + out[:1], strict=True))
    return out if area > 0 else out[::-1]


def build_terrain(piece: dict[str, Any], rng: random.Random) -> None:
    kind, h = piece["kind"], float(piece["height_in"])
    poly = _flip(piece["polygon"])
    stone = _material(f"{piece['id']}-mat", piece["rgb"], roughness=0.9, noise=0.25)
    bm = bmesh.new()
    if kind == "ruins":  # a floor and broken walls along the outline, with gaps to see through
        _prism(bm, poly, 0.0, 0.12)
        for k in range(len(poly)):
            (x0, y0), (x1, y1) = poly[k], poly[(k + 1) % len(poly)]
            length = math.hypot(x1 - x0, y1 - y0)
            ux, uy = (x1 - x0) / length, (y1 - y0) / length
            nx, ny = -uy, ux  # inward for a counter-clockwise outline
            pieces = max(1, round(length / 1.0))
            for s in range(pieces):
                if rng.random() < 0.2:
                    continue  # a gap
                t0, t1 = s / pieces * length, (s + 1) / pieces * length
                wall_h = h * rng.uniform(0.45, 1.0)
                quad = [
                    (x0 + ux * t0, y0 + uy * t0),
                    (x0 + ux * t1, y0 + uy * t1),
                    (x0 + ux * t1 + nx * 0.25, y0 + uy * t1 + ny * 0.25),
                    (x0 + ux * t0 + nx * 0.25, y0 + uy * t0 + ny * 0.25),
                ]
                _prism(bm, quad, 0.0, wall_h)
        _object(piece["id"], bm, [stone])
        return
    if "template_in" in piece:  # area terrain (woods, difficult ground): a thin template models stand in
        h = float(piece["template_in"])
        _prism(bm, poly, 0.0, h)
        _object(piece["id"], bm, [stone])
        if kind != "woods":
            return
        trunk = _material(f"{piece['id']}-trunk", [0.08, 0.05, 0.03], roughness=0.9)
        leaves = _material(f"{piece['id']}-leaves", piece["leaves_rgb"], roughness=0.8, noise=0.35)
        bm = bmesh.new()
        ident = Matrix.Identity(4)
        for tx, ty, height, radius in piece["trees"]:
            _cone(bm, Vector((tx, -ty, h)), Vector((tx, -ty, h + 0.45 * height)), 0.16, 0.12, ident, 0, 8)
            _cone(bm, Vector((tx, -ty, h + 0.3 * height)), Vector((tx, -ty, h + height)), radius, 0.05, ident, 1, 12)
        _object(f"{piece['id']}-trees", bm, [trunk, leaves])
        return
    _prism(bm, poly, 0.0, h)
    obj = _object(piece["id"], bm, [stone])
    bevel = obj.modifiers.new("round", "BEVEL")
    bevel.width = min(0.6 * h, 0.5) if kind == "hill" else min(0.06, 0.2 * h)
    bevel.segments = 4 if kind == "hill" else 1
    bevel.limit_method = "ANGLE"


def build_model(model: dict[str, Any], materials: dict[str, Any], rng: random.Random) -> Any:
    """A base with a coloured rim and a miniature on it; local x is the model's facing."""
    a, b, height = float(model["a"]), float(model["b"]), float(model["height_in"])
    place = Matrix.Translation((model["x"], -model["y"], model["z"])) @ Matrix.Rotation(
        math.radians(-model["facing_deg"]), 4, "Z"
    )
    bm = bmesh.new()
    rim = max(0.06, 0.12 * a)
    base = place @ Matrix.Translation((0, 0, BASE_HEIGHT_IN / 2)) @ Matrix.Diagonal((a, b, 1.0, 1.0))
    _tagged(
        bm,
        0,
        True,
        lambda: bmesh.ops.create_cone(
            bm, cap_ends=True, segments=64, radius1=1.0, radius2=0.97, depth=BASE_HEIGHT_IN, matrix=base
        ),
    )
    top = place @ Matrix.Translation((0, 0, BASE_HEIGHT_IN + 0.003)) @ Matrix.Diagonal((a - rim, b - rim, 1.0, 1.0))
    _tagged(
        bm,
        1,
        False,
        lambda: bmesh.ops.create_cone(
            bm, cap_ends=True, segments=64, radius1=1.0, radius2=1.0, depth=0.006, matrix=top
        ),
    )
    # The figure leans a little, from its feet.
    lean = Matrix.Rotation(math.radians(rng.gauss(0, 5)), 4, "X") @ Matrix.Rotation(
        math.radians(rng.gauss(0, 5)), 4, "Y"
    )
    m = place @ Matrix.Translation((0, 0, BASE_HEIGHT_IN)) @ lean
    r = min(a, b)
    if a > 1.25 * b:  # an oval base: a horse (or beast) with a rider
        body_z = 0.42 * height
        for lx in (-0.55 * a, 0.55 * a):
            for ly in (-0.3 * b, 0.3 * b):
                _cone(bm, Vector((lx, ly, 0)), Vector((lx, ly, body_z)), 0.07 * a, 0.09 * a, m, 2)
        _sphere(bm, Vector((0, 0, body_z + 0.05 * height)), (0.8 * a, 0.42 * b, 0.16 * height), m, 2)
        _cone(bm, Vector((0.7 * a, 0, body_z)), Vector((1.05 * a, 0, body_z + 0.25 * height)), 0.14 * b, 0.1 * b, m, 2)
        hip, h_top, scale = body_z + 0.18 * height, height, 0.8 * b
    else:
        stride = rng.uniform(0.1, 0.3) * r
        for side, dx in ((-1, stride), (1, -stride * 0.6)):
            _cone(
                bm,
                Vector((dx, side * 0.22 * r, 0)),
                Vector((0, side * 0.2 * r, 0.42 * height)),
                0.12 * r,
                0.15 * r,
                m,
                3,
            )
        hip, h_top, scale = 0.4 * height, height, r
    shoulder_z = hip + 0.62 * (h_top - hip)
    _cone(bm, Vector((0, 0, hip)), Vector((0, 0, shoulder_z)), 0.34 * scale, 0.5 * scale, m, 2)
    for side in (-1, 1):  # shoulder pads wider than the base, arms reaching forward
        pad = Vector((0, side * 0.62 * scale, shoulder_z - 0.02 * height))
        _sphere(bm, pad, (0.24 * scale, 0.24 * scale, 0.18 * scale), m, 4)
        hand = Vector((0.45 * scale, side * 0.4 * scale, hip + 0.2 * (h_top - hip)))
        _cone(bm, pad, hand, 0.1 * scale, 0.08 * scale, m, 2)
    _sphere(bm, Vector((0.03 * scale, 0, shoulder_z + 0.16 * height)), (0.12 * height,) * 3, m, 5)
    weapon = rng.choice(["gun", "spear", "sword", "banner"])
    grip = Vector((0.45 * scale, 0.4 * scale, hip + 0.2 * (h_top - hip)))
    if weapon == "gun":  # held forward, past the base's edge
        length = rng.uniform(1.0, 1.7) * scale
        _box(bm, (grip.x + length / 2 - 0.2 * scale, grip.y, grip.z), (length, 0.12 * scale, 0.16 * scale), m, 6)
    elif weapon == "spear":
        tip = grip + Vector((rng.uniform(0.5, 1.2) * scale, 0, rng.uniform(0.6, 1.0) * height))
        _cone(bm, grip - (tip - grip) * 0.2, tip, 0.035, 0.02, m, 6, 8)
    elif weapon == "sword":
        _box(bm, (grip.x + 0.4 * scale, grip.y, grip.z + 0.1 * height), (0.8 * scale, 0.05, 0.12 * scale), m, 6)
    else:  # a banner pole and its flag
        pole = Vector((-0.3 * scale, -0.3 * scale, 0))
        _cone(bm, pole, pole + Vector((0, 0, 1.5 * height)), 0.03, 0.03, m, 6, 8)
        _box(bm, (-0.3 * scale - 0.4 * scale, -0.3 * scale, 1.3 * height), (0.8 * scale, 0.02, 0.35 * height), m, 3)
    mats = [materials["rim"], materials["top"], materials["armour"], materials["cloth"], materials["trim"]]
    return _object(model["id"], bm, [*mats, materials["skin"], materials["metal"]])


def _srgb_to_linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _rgb(values: list[float]) -> list[float]:
    """sRGB 0-255 to Blender's linear colours."""
    return [_srgb_to_linear(v / 255.0) for v in values]


def build(plan: dict[str, Any]) -> list[Any]:
    """The whole scene; returns the models' objects (hidden for the empty-table render)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.unit_settings.scale_length = 0.0254  # one Blender unit is an inch (depth of field needs the scale)
    width, depth = plan["table_in"]
    border = plan["border_in"]
    # The table top, textured with the mat, the objective markers and the kit's markers.
    image = bpy.data.images.load(plan["texture"])
    table_mat = bpy.data.materials.new("table")
    table_mat.use_nodes = True
    nodes, links = table_mat.node_tree.nodes, table_mat.node_tree.links
    tex = nodes.new("ShaderNodeTexImage")
    tex.image = image
    tex.interpolation = "Cubic"
    bsdf = nodes["Principled BSDF"]
    bsdf.inputs["Roughness"].default_value = plan["mat_roughness"]
    links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    bm = bmesh.new()
    uv = bm.loops.layers.uv.new()
    x0, x1, y0, y1 = -border, width + border, -border, depth + border
    corners = [(x0, y1), (x1, y1), (x1, y0), (x0, y0)]  # table coordinates, counter-clockwise seen from above
    verts = [bm.verts.new((x, -y, 0.0)) for x, y in corners]
    face = bm.faces.new(verts)
    for loop, (x, y) in zip(face.loops, corners, strict=True):
        loop[uv].uv = ((x - x0) / (x1 - x0), 1.0 - (y - y0) / (y1 - y0))
    _object("table", bm, [table_mat])
    # The room's floor far below, and the table's sides.
    bm = bmesh.new()
    _prism(bm, [(-200, -200), (200, -200), (200, 200), (-200, 200)], -31.0, -30.0)
    _prism(bm, _flip([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]), -30.0, -0.01)
    _object("room", bm, [_material("floor", _rgb([40, 40, 45]), roughness=0.9)])

    rng = random.Random(plan["seed"])
    for piece in plan["terrain"]:
        build_terrain({**piece, "rgb": _rgb(piece["bgr"][::-1]), "leaves_rgb": _rgb(piece["leaves_bgr"][::-1])}, rng)

    shared = {
        "top": _material("base-top", _rgb(plan["base_top_bgr"][::-1]), roughness=0.9, noise=0.2),
        "metal": _material("metal", [0.55, 0.55, 0.58], roughness=0.35, metallic=1.0),
    }
    team = {p: _material(f"rim-{p}", _rgb(bgr[::-1]), roughness=0.5) for p, bgr in plan["team_bgr"].items()}
    paint: dict[str, dict[str, Any]] = {}
    objects = []
    for model in plan["models"]:
        unit = model["unit"]
        if unit not in paint:  # a unit is painted alike
            urng = random.Random(f"{plan['seed']}-{unit}")
            paint[unit] = {
                name: _material(
                    f"{unit}-{name}", _rgb(_hsv(urng, lo, hi)), roughness=urng.uniform(0.35, 0.7), noise=0.15
                )
                for name, lo, hi in (("armour", 40, 220), ("cloth", 30, 200), ("trim", 90, 240))
            }
        mrng = random.Random(f"{plan['seed']}-{model['id']}")
        skin = _material(f"{model['id']}-skin", _rgb(_hsv(mrng, 120, 220, hue=(5, 20), sat=(60, 140))), roughness=0.6)
        materials = {"rim": team[model["player"]], "skin": skin, **shared, **paint[unit]}
        objects.append(build_model(model, materials, mrng))

    _light(plan["light"])
    _camera(plan["camera"], plan["size_px"])
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = plan["samples"]
    scene.cycles.use_adaptive_sampling = True
    scene.cycles.use_denoising = True
    scene.cycles.max_bounces = 4
    scene.cycles.seed = plan["seed"] % 100000
    scene.view_settings.view_transform = "Standard"
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    return objects


def _hsv(
    rng: random.Random,
    v_lo: float,
    v_hi: float,
    hue: tuple[float, float] = (0, 180),
    sat: tuple[float, float] = (40, 220),
) -> list[float]:
    """A colour drawn from OpenCV-style HSV ranges (hue 0-180, the rest 0-255), as sRGB 0-255 (R, G, B)."""
    r, g, b = colorsys.hsv_to_rgb(rng.uniform(*hue) / 180.0, rng.uniform(*sat) / 255.0, rng.uniform(v_lo, v_hi) / 255.0)
    return [r * 255, g * 255, b * 255]


def _light(light: dict[str, Any]) -> None:
    scene = bpy.context.scene
    world = bpy.data.worlds.new("room")
    world.use_nodes = True
    background = world.node_tree.nodes["Background"]
    background.inputs["Color"].default_value = (*light["ambient_rgb"], 1.0)
    background.inputs["Strength"].default_value = light["ambient"]
    scene.world = world
    sun = bpy.data.lights.new("sun", "SUN")
    sun.energy = light["sun"]
    sun.angle = math.radians(light["sun_angle_deg"])
    sun.color = light["sun_rgb"]
    obj = bpy.data.objects.new("sun", sun)
    scene.collection.objects.link(obj)
    towards_table = -Vector(light["sun_from"]).normalized()
    obj.rotation_euler = towards_table.to_track_quat("-Z", "Y").to_euler()
    lamp = bpy.data.lights.new("ceiling", "AREA")  # a room light: soft fill from above
    lamp.energy = light["area_w"]
    lamp.size = 40.0
    lobj = bpy.data.objects.new("ceiling", lamp)
    lobj.location = light["area_at"]
    scene.collection.objects.link(lobj)


def _camera(cam: dict[str, Any], size: list[int]) -> None:
    scene = bpy.context.scene
    data = bpy.data.cameras.new("webcam")
    data.sensor_fit = "HORIZONTAL"
    data.sensor_width = cam["sensor_mm"]
    data.lens = cam["lens_mm"]
    data.clip_start = 1.0
    data.clip_end = 2000.0
    data.dof.use_dof = True
    data.dof.focus_distance = cam["focus_in"]
    data.dof.aperture_fstop = cam["fstop"]
    obj = bpy.data.objects.new("webcam", data)
    rot = Matrix(cam["rotation"]).to_4x4()
    obj.matrix_world = Matrix.Translation(cam["location"]) @ rot
    scene.collection.objects.link(obj)
    scene.camera = obj
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100


def main(plan_path: str) -> None:
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    models = build(plan)
    scene = bpy.context.scene
    scene.render.filepath = plan["out_photo"]
    bpy.ops.render.render(write_still=True)
    for obj in models:
        obj.hide_render = True
    scene.render.filepath = plan["out_empty"]
    bpy.ops.render.render(write_still=True)


if __name__ == "__main__":
    main(sys.argv[-1])
