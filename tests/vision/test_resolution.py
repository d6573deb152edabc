"""A photo too coarse to read base sizes and teams by says so, with its pixels to the inch (vision/resolution.py)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.lens import LensModel
from calibration.table_frame import TableFrame, calibrate
from tablesight.cli import main
from tablesight.scene import Scene
from vision.analyze import analyze
from vision.evaluate import match_scene, write_rendered
from vision.resolution import COARSE_PX_PER_IN, coarse_note, describe_coarse, table_px_per_in
from vision.synth.table import RenderedTable, render_table

GAME = "grinding-annihilation"


def _frame(table: RenderedTable) -> tuple[TableFrame, LensModel]:
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    return calibrate(table.empty, table.layout, lens), lens


def test_the_coarsest_scale_grows_with_the_cameras_pixels() -> None:
    # The same seeded table and camera pose, photographed at 1920x1080 and at 2880x1620.
    scales = []
    for size in [(1920, 1080), (2880, 1620)]:
        table = render_table(21001, GAME, size=size)
        frame, _ = _frame(table)
        scales.append(table_px_per_in(frame, table.layout.width_in, table.layout.depth_in))
    assert 10.0 < scales[0].min() < 16.0  # a 44"x60" table at 1080p: 11-14 px/in at its far edge (docs/vision.md)
    assert scales[0].max() < 1.5 * scales[0].min()  # tilted: nearer parts are seen finer
    assert np.allclose(scales[1] / scales[0], 1.5, rtol=0.01)


def test_a_note_only_where_part_of_the_table_is_seen_under_the_scale_sizes_are_read_surely_from() -> None:
    assert coarse_note([COARSE_PX_PER_IN, 30.0]) is None
    note = coarse_note([8.04, 9.0, 20.0, 30.0])
    assert note == {"px_per_in": 8.0, "needed_px_per_in": COARSE_PX_PER_IN, "table_share": 0.5}
    assert coarse_note([11.9] + [20.0] * 999) == {  # a sliver is never said as 0 %
        "px_per_in": 11.9,
        "needed_px_per_in": COARSE_PX_PER_IN,
        "table_share": 0.01,
    }
    said = describe_coarse(note)
    assert said.startswith(f"the camera sees 50% of the table at under {COARSE_PX_PER_IN:g} pixels to the inch")
    assert "(8.0 at the coarsest)" in said and "confirm them" in said


def test_a_720p_photo_of_a_big_table_says_it_is_too_coarse_and_a_1080p_one_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Rendered 44"x60" tables at 1280x720 (8-10 px/in) read base sizes 90.5 % right and teams 94.9 %; at
    # 1920x1080, 99.5 % and 99.2 % (docs/vision.md, session 45). The players are told, with the figures.
    coarse = render_table(21005, GAME, size=(1280, 720))
    frame, lens = _frame(coarse)
    scene = analyze(coarse.image, coarse.layout, coarse.empty, frame, lens, GAME).scene
    measured = scene["measurement"]
    assert measured["px_per_in"] < 10.0 and measured["coarse"]["px_per_in"] == measured["px_per_in"]
    assert measured["coarse"]["table_share"] == 1.0  # all of it: 8-10 px/in
    Scene.from_dict(scene, "a coarse photo's scene")  # the schema knows the fields
    fine = render_table(21005, GAME)
    frame, lens = _frame(fine)
    measured = analyze(fine.image, fine.layout, fine.empty, frame, lens, GAME).scene["measurement"]
    assert measured["px_per_in"] > COARSE_PX_PER_IN and "coarse" not in measured
    # On the command line, as the scene says it.
    photo = write_rendered(coarse, tmp_path / "coarse")
    LensModel(coarse.camera.K, coarse.camera.dist, coarse.camera.size).save(tmp_path / "lens.json")
    code = main(
        [
            "analyze",
            str(photo),
            "--empty",
            str(tmp_path / "coarse.empty.jpg"),
            "--lens",
            str(tmp_path / "lens.json"),
            "--table",
            "44x60",
            "--game",
            GAME,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "the camera sees 100% of the table at under 12 pixels to the inch" in out


def test_render_tables_photographs_at_the_size_asked_with_its_own_lens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # eval-vision at 720p, 1080p and 4K (docs/vision.md, session 45) runs on sets made this way.
    assert main(["render-tables", str(tmp_path), "--count", "1", "--seed", "21005", "--size", "1280x720"]) == 0
    photo = cv2.imread(str(tmp_path / "21005.jpg"))
    assert photo is not None and photo.shape[:2] == (720, 1280)
    assert LensModel.load(tmp_path / "lens.json").image_size == (1280, 720)
    for bad, said in [("1280", "give the photo size as WIDTHxHEIGHT"), ("200x100", "too small to see a base")]:
        capsys.readouterr()
        assert main(["render-tables", str(tmp_path / "bad"), "--size", bad]) != 0
        assert f"--size '{bad}': {said}" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()  # refused before anything was written


def test_watch_says_at_deployment_when_the_camera_sees_the_table_too_coarsely(tmp_path: Path) -> None:
    # As with players' colours too alike (tests/vision/test_live.py): said once, right after the set-up.
    from vision.live.sources import FolderSource
    from vision.live.watch import watch

    table = render_table(21005, GAME, size=(1280, 720))
    for k, frame in enumerate([table.empty] + [table.image] * 4):
        cv2.imwrite(str(tmp_path / f"{k:03d}.png"), frame)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    events = list(watch(lambda: FolderSource(tmp_path), table.layout, GAME, lens, players))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    warnings = [m for m in said if "pixels to the inch" in m]
    assert len(warnings) == 1 and said.index(warnings[0]) == 1
    assert warnings[0].startswith("the camera sees 100% of the table at under 12 pixels to the inch")


def test_the_size_reader_reads_sizes_on_a_720p_photo_of_a_big_table() -> None:
    # docs/detector.md, session 45: run L trained the size reader on 44"x60" tables at 720p-900p too. On the first
    # four tables of the 720p test set (25000-25003, never trained on) session 43's reader named 66 of the 71
    # sizes right (93.0 %), the shipped one 69 (97.2 %); on all 40, 85.5 % and 94.0 %.
    right = matched = 0
    for seed in range(25000, 25004):
        table = render_table(seed, GAME, size=(1280, 720))
        frame, lens = _frame(table)
        players = {p["id"]: p["color"] for p in table.scene["players"]}
        scene = analyze(
            table.image, table.layout, table.empty, frame, lens, GAME, players, table.scene["terrain"]
        ).scene
        matches, _ = match_scene(table.scene, scene)
        matched += len(matches)
        right += sum(table.scene["models"][i]["base"] == scene["models"][j]["base"] for i, j, _ in matches)
    assert matched >= 69 and right >= 0.96 * matched
