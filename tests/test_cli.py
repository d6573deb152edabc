"""The command line: readable text, stable JSON names, clear errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tablesight.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_measure_text_and_json(
    capsys: pytest.CaptureFixture[str], spec_example: dict[str, Any], write_scene: Any
) -> None:
    path = str(write_scene(spec_example))
    code, out, _ = run(capsys, "measure", path, "w1", "w2")
    assert code == 0 and out.strip() == 'w1 to w2: 1.240"'
    code, out, _ = run(capsys, "measure", path, "wardens", "s1", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["closest"] == ["w2", "s1"]
    assert data["distance_in"] == pytest.approx(((14 - 6.5) ** 2 + 25) ** 0.5 - (32 + 25) / 2 / 25.4, abs=1e-6)
    assert data["sigma_in"] == 0.0
    code, out, _ = run(capsys, "measure", path, "objective:north", "terrain:ruin", "--json")
    # Marker centre (12, 3) to the ruin's corner (11, 5), less the 40 mm marker's radius.
    assert json.loads(out)["distance_in"] == pytest.approx(5**0.5 - 20 / 25.4, abs=1e-6)


def test_los_json_names_are_stable(
    capsys: pytest.CaptureFixture[str], spec_example: dict[str, Any], write_scene: Any
) -> None:
    path = str(write_scene(spec_example))
    code, out, _ = run(capsys, "los", path, "w1", "s1", "--json")
    data = json.loads(out)
    assert code == 0
    assert {"visible", "visible_fraction", "blocked_by"} <= data.keys()
    assert data["visible"] is False and data["blocked_by"] == ["ruin"]
    code, out, _ = run(capsys, "los", path, "w2", "s1")
    assert code == 0 and out.strip() == "s1 is not visible from w2; sight is blocked (in part) by ruin"
    spec_example["models"][2]["y"] = 3.0  # s1 steps out from behind the ruin
    code, out, _ = run(capsys, "los", str(write_scene(spec_example, "moved.json")), "w2", "s1")
    assert code == 0 and out.strip() == "s1 is visible from w2: 100% of it can be seen"


def test_check_on_the_bundled_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--json")
    data = json.loads(out)
    assert code == 0
    for ruling in data["rulings"]:
        assert {"question", "verdict", "reasons", "measurements"} <= ruling.keys()
        assert ruling["verdict"] in ("yes", "no", "too_close")
        assert ruling["reasons"] and all(isinstance(r, str) for r in ruling["reasons"])
    code, text, _ = run(capsys, "check")
    assert code == 0 and "Blade Wardens" in text and "too close to call" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["measure", "{scene}", "w1", "nobody"], "nothing called 'nobody'"),
        (["measure", "{scene}", "w1", "planet:x"], "unknown kind 'planet'"),
        (["los", "{scene}", "north", "w1"], "line of sight is between models or units"),
        (["check", "{missing}"], "no such file"),
        (["check", "{broken}"], "models[0].base: '33' is not a known base size"),
        # an adapted refiner that is not there is named, never replaced by the shipped one unsaid (issue 6)
        (["eval-vision", "sample_images/games", "--refiner", "{missing}"], "base refiner {missing}: no such file"),
        # a folder with no rendered photo in it reported nan everywhere, exit 0
        (["eval-vision", "{missing}"], "{missing}: no such folder"),
        (["adapt", "{missing}"], "{missing}: no such folder (give the folder serve --keep-frames kept"),
        (["eval-vision", "docs"], "docs: no rendered photos there (NAME.jpg with NAME.empty.jpg and NAME.truth.json"),
        (["watch", "sample_images/games", "--refiner", "{missing}"], "base refiner {missing}: no such file"),
        # a detector the players name that is not there: the classical detector took its place, unsaid
        (["analyze", "sample_images/games/focal-point-900.jpg", "--model", "{missing}"], "model {missing}: no such"),
        # ...and one that is no model ended in a traceback (its error was no ValueError)
        (["analyze", "sample_images/games/focal-point-900.jpg", "--model", "README.md"], "README.md: not a model"),
        (["watch", "sample_images/games", "--refiner", "README.md"], "README.md: not a model"),
        # a recording with nothing to read said "the recording has ended" before anything was seen
        (["watch", "docs"], "docs: a folder with no photos in it"),
        # players' colours are checked before the first frame, not found wrong at the deployment (or never)
        (["watch", "sample_images/games", "--players", "red"], "--players 'red': give each player as NAME=COLOUR"),
        (["watch", "sample_images/games", "--players", "red=#d33,blue=#zzz"], "blue's colour '#zzz' is not a colour"),
        (["analyze", "sample_images/games/focal-point-900.jpg", "--players", "red=#d33,blue"], "NAME=COLOUR"),
        # a player given twice took the second colour silently; a table of nan inches reached the calibration
        (
            ["watch", "sample_images/games", "--players", "red=#d33,red=#36c"],
            "--players 'red=#d33,red=#36c': red is given twice",
        ),
        (
            ["calibrate", "sample_images/table-24x24.jpg", "--table", "nanxnan"],
            "--table 'nanxnan': sizes must be positive",
        ),
        # the players' deployment is read before the camera is opened for the game (vision/live/deployment.py)
        (["watch", "sample_images/games", "--deployment", "{missing}"], "{missing}: no such file"),
        (["watch", "sample_images/games", "--deployment", "{broken}"], "models[0].base: '33' is not a known base size"),
        (["watch", "sample_images/games", "--game", "onefinity", "--deployment", "{scene}"], "the deployment is of"),
        # ...and so is the table's terrain (find-terrain --out), whose hills put the bases on them right
        (["watch", "sample_images/games", "--terrain", "{missing}"], "{missing}: no such terrain file"),
        (["watch", "sample_images/games", "--terrain", "README.md"], "README.md: not JSON"),
        (["watch", "sample_images/games", "--keep", "{broken}"], "models[0].base: '33' is not a known base size"),
        (["watch", "sample_images/games", "--game", "onefinity", "--keep", "{scene}"], "the game kept is of"),
        # a folder that is not there was found only when the first analysed frame was to be kept
        (
            ["watch", "sample_images/games", "--keep", "{missing}/game.json"],
            "cannot keep the game there: no such folder",
        ),
        (["serve", "--camera", "sample_images/games", "--terrain", "{missing}"], "{missing}: no such terrain file"),
    ],
)
def test_errors_exit_2_with_a_message(
    capsys: pytest.CaptureFixture[str],
    spec_example: dict[str, Any],
    write_scene: Any,
    tmp_path: Path,
    argv: list[str],
    message: str,
) -> None:
    scene = write_scene(spec_example)
    spec_example["models"][0]["base"] = "33"
    broken = write_scene(spec_example, "broken.json")
    args = [a.format(scene=scene, missing=tmp_path / "missing.json", broken=broken) for a in argv]
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert message.format(missing=tmp_path / "missing.json") in err and err.startswith("tablesight: error: ")


def test_watch_keeps_the_game_it_goes_on_with_beside_it_first(
    capsys: pytest.CaptureFixture[str], spec_example: dict[str, Any], write_scene: Any
) -> None:
    # watch --keep overwrites FILE with the game it watches. Should the table be another game's (not gone on
    # with), the game kept there would be lost: it is copied to FILE.bak before the first frame is read.
    kept = write_scene(spec_example, "game.json")
    code, _, err = run(capsys, "watch", "sample_images/games", "--keep", str(kept), "--max-frames", "1")
    assert code == 0, err
    assert Path(f"{kept}.bak").read_text(encoding="utf-8") == json.dumps(spec_example)


def test_ambiguous_id_asks_for_a_kind(
    capsys: pytest.CaptureFixture[str], spec_example: dict[str, Any], write_scene: Any
) -> None:
    spec_example["objectives"][0]["id"] = "w1"
    path = str(write_scene(spec_example))
    code, _, err = run(capsys, "measure", path, "w1", "s1")
    assert code == 2 and "ambiguous" in err and "model:w1" in err and "objective:w1" in err
    code, out, _ = run(capsys, "measure", path, "model:w1", "s1")
    assert code == 0


def test_real_process_prints_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "tablesight", "check", str(bad), "--json"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert json.loads(result.stderr)["error"].startswith(f"{bad}: not valid JSON")


def test_schema_command_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0 and json.loads(out)["title"].startswith("tablesight scene")


def test_ask_and_odds(capsys: pytest.CaptureFixture[str], sample_path: str) -> None:
    code, out, _ = run(capsys, "ask", sample_path, "can-target", "lancers", "colossus", "--weapon", "melee", "--json")
    ruling = json.loads(out)
    assert code == 0 and ruling["verdict"] == "yes" and ruling["rule"].startswith("Affinity: Focal Point")
    code, out, _ = run(capsys, "ask", sample_path, "score")
    assert code == 0 and "red: 2 VP" in out and "blue: 2 VP" in out
    code, out, _ = run(capsys, "odds", "focal-point", "--dice", "1", "--hit", "4", "--defense", "4", "--json")
    outcomes = json.loads(out)["wounds"]["outcomes"]
    assert [o["value"] for o in outcomes] == [0, 1]
    assert outcomes[1]["probability"] == pytest.approx(1 / 3)
    code, out, _ = run(
        capsys, "odds", "focal-point", "--scene", sample_path, "--attacker", "knives", "--target", "wardens"
    )
    assert code == 0 and "Shard: +1 Attack die" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ask", "{sample}", "activation-order"], "'activation-order' is not a question in focal-point"),
        (["ask", "{sample}", "dance", "x"], "unknown question 'dance'"),
        (["ask", "{sample}", "coherent", "ghosts"], "no unit 'ghosts'"),
        (["ask", "{sample}", "coherent"], "coherent takes UNIT, got 0 argument(s)"),
        (["ask", "{sample}", "cover", "wardens"], "cover needs --from ATTACKER"),
        (["ask", "{sample}", "move-ok", "wardens"], "history has no move of 'wardens'"),
        (["ask", "{sample}", "can-claim", "wardens", "east"], "no objective 'east'"),
        (["odds", "focal-point", "--dice", "3"], "--hit --defense"),
        (["odds", "chess"], "odds for 'chess' are not available"),
    ],
)
def test_ask_errors_name_what_is_missing(
    capsys: pytest.CaptureFixture[str], sample_path: str, argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *[a.format(sample=sample_path) for a in argv])
    assert code == 2 and out == ""
    assert message in err


def test_missing_profile_field_is_named(
    capsys: pytest.CaptureFixture[str], spec_example: dict[str, Any], write_scene: Any
) -> None:
    del spec_example["units"][0]["profile"]["move"]
    spec_example["history"] = [{"event": "move", "unit": "wardens", "from": {"w1": [4, 4], "w2": [6.5, 4]}, "moves": 1}]
    code, _, err = run(capsys, "ask", str(write_scene(spec_example)), "move-ok", "wardens")
    assert code == 2 and "unit 'wardens' has no profile.move, which this question needs" in err


def test_calibration_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import cv2
    import numpy as np

    from calibration.layout import Layout
    from vision.synth.camera import Camera, photo_effects
    from vision.synth.markers_table import table_texture

    camera = Camera.looking_at_table((24, 24), (1280, 720), tilt_deg=10)
    photo = photo_effects(
        camera.render(table_texture(Layout.default(24, 24), 100.0, np.random.default_rng(1)), 100.0, 2.0),
        np.random.default_rng(2),
    )
    image = tmp_path / "table.jpg"
    cv2.imwrite(str(image), photo)
    code, out, _ = run(capsys, "calibrate", str(image), "--table", "24x24", "--json")
    report = json.loads(out)
    assert code == 0 and report["markers_used"] == [0, 1, 2, 3] and report["sigma_in"] > 0
    assert (tmp_path / "table.calibration.json").exists()
    code, out, _ = run(
        capsys,
        "rectify",
        str(image),
        "--out",
        str(tmp_path / "top.png"),
        "--calibration",
        str(tmp_path / "table.calibration.json"),
    )
    assert code == 0 and cv2.imread(str(tmp_path / "top.png")).shape == (480, 480, 3)
    code, out, _ = run(capsys, "print-kit", "--table", "44x60", "--paper", "letter", "--out", str(tmp_path / "kit.pdf"))
    assert code == 0 and (tmp_path / "kit.pdf").read_bytes().startswith(b"%PDF")
    # A layout with every marker in the opposite corner cannot match the photo.
    layout = Layout.default(24, 24).to_json()
    for marker in layout["markers"]:
        marker["id"] = (marker["id"] + 2) % 4
    swapped = tmp_path / "swapped.json"
    swapped.write_text(json.dumps(layout), encoding="utf-8")
    not_image = tmp_path / "notes.txt"
    not_image.write_text("hello", encoding="utf-8")
    for argv, message in (
        (["calibrate", str(not_image)], "not an image tablesight can read"),
        (["calibrate", str(image), "--table", "big"], "give the table as WIDTHxDEPTH"),
        (["calibrate", str(image), "--layout", str(tmp_path / "none.json")], "no such layout file"),
        (["calibrate-lens", str(image)], "lens calibration needs at least 4 views"),
        (["calibrate", str(image), "--layout", str(swapped)], "the markers disagree with the layout"),
    ):
        code, out, err = run(capsys, *argv)
        assert code == 2 and message in err, (argv, err)
    # A 44"x60" table measured against the default 24"x24" layout: the error says how to give the table's size.
    # With its lens the markers cannot be squeezed to fit; without it, two of the four fit loosely, no majority.
    big = Path(__file__).parents[1] / "sample_images" / "games" / "grinding-annihilation-910.empty.jpg"
    lens = str(big.parent / "lens.json")
    for with_lens in (["--lens", lens], []):
        code, out, err = run(capsys, "calibrate", str(big), *with_lens, "--out", str(tmp_path / "big.json"))
        assert code == 2 and "disagree with the layout" in err and "--table WIDTHxDEPTH" in err, (with_lens, err)
        assert not (tmp_path / "big.json").exists()  # nothing saved from a failed calibration
    sized = ("calibrate", str(big), "--lens", lens, "--table", "44x60", "--out", str(tmp_path / "big.json"))
    code, out, err = run(capsys, *sized)
    assert code == 0, err


def test_flux_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Affinity: Flux > Deck Building: "Minimum Cards 40", "Max Copies 4 per card".
    deck = tmp_path / "deck.yaml"
    deck.write_text(
        "warlord: {name: V, realm: The Gloam}\ncards:\n  - {name: A, realm: The Gloam, points: 30, count: 5}\n"
    )
    assert main(["flux", "check-deck", str(deck)]) == 1
    out = capsys.readouterr().out
    assert "5 copies of 'A'; at most 4" in out and "5 cards; at least 40" in out
    assert main(["flux", "check-deck", str(tmp_path / "missing.yaml")]) == 2
    # Spending Source: "2 yours + 2 theirs = 3 Source".
    assert main(["flux", "pay", "--own", "2", "--opponent", "2", "--cost", "3", "--json"]) == 0
    payment = json.loads(capsys.readouterr().out)
    assert payment["can_pay"] and (payment["own_cards"], payment["opponent_cards"]) == (2, 2)
    assert main(["flux", "burn-odds", "--unit-cost", "4", "--json"]) == 0
    odds = json.loads(capsys.readouterr().out)
    assert odds["unit_cost"] == 4 and odds["rule"].endswith("The Burn")


def test_find_terrain_and_analyze_with_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The bundled Focal Point sample (a hill, ruins 2.7" tall, woods): found on its empty-table photo,
    named by the player, the ruins' lean taken out, and the pieces carried into analyze's scene."""
    import shapely

    games = Path(__file__).resolve().parents[1] / "sample_images" / "games"
    empty, lens = str(games / "focal-point-900.empty.jpg"), str(games / "lens.json")
    code, out, _ = run(capsys, "find-terrain", empty, "--lens", lens, "--json")
    found = json.loads(out)["terrain"]
    assert code == 0 and [t["id"] for t in found] == ["t1", "t2", "t3"]
    truth = json.loads((games / "focal-point-900.truth.json").read_text())["scene"]["terrain"]
    true_poly = {t["kind"]: (shapely.Polygon(t["polygon"]), t["height_in"]) for t in truth}
    # Name each found piece as the players would (by the true piece it lies on), giving the ruins' wall height.
    kinds = {
        t["id"]: max(true_poly, key=lambda k: true_poly[k][0].intersection(shapely.Polygon(t["polygon"])).area)
        for t in found
    }
    assert sorted(kinds.values()) == ["hill", "ruins", "woods"]
    ruins = next(i for i, k in kinds.items() if k == "ruins")
    out_file = tmp_path / "terrain.json"
    code, out, _ = run(
        capsys,
        "find-terrain", empty, "--lens", lens, "--out", str(out_file),
        "--kinds", ",".join(f"{i}={k}" for i, k in kinds.items()),
        "--walls", f"{ruins}={true_poly['ruins'][1]}",
    )  # fmt: skip
    assert code == 0 and "lean taken out" in out
    for piece in json.loads(out_file.read_text())["terrain"]:
        poly, _ = true_poly[piece["kind"]]
        found_poly = shapely.Polygon(piece["polygon"])
        assert poly.intersection(found_poly).area / poly.union(found_poly).area >= 0.9, piece["kind"]
    scene_file = tmp_path / "scene.json"
    photo = str(games / "focal-point-900.jpg")
    code, _, _ = run(
        capsys, "analyze", photo, "--empty", empty, "--lens", lens, "--terrain", str(out_file), "--out", str(scene_file)
    )
    assert code == 0 and sorted(t["kind"] for t in json.loads(scene_file.read_text())["terrain"]) == [
        "hill",
        "ruins",
        "woods",
    ]
    # Mistakes are named, not tracebacks.
    assert run(capsys, "find-terrain", empty, "--lens", lens, "--walls", "t9=2")[2].count("no terrain piece t9") == 1
    assert "must be a number" in run(capsys, "find-terrain", empty, "--lens", lens, "--walls", "t1=tall")[2]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": 1}]')
    assert "expected" in run(capsys, "analyze", photo, "--lens", lens, "--terrain", str(bad))[2]


def test_train_detector_names_a_missing_weights_file_and_an_unknown_game(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    code, _, err = run(capsys, "train-detector", str(tmp_path / "run"), "--from", str(tmp_path / "missing.pt"))
    assert code != 0 and "--from" in err and "missing.pt" in err and "no such weights file" in err
    code, _, err = run(capsys, "train-detector", str(tmp_path / "run"), "--games", "focal-point,chess")
    assert code != 0 and "unknown game 'chess'" in err
    assert not (tmp_path / "run").exists()  # nothing rendered or trained before the arguments were checked
    code, _, err = run(capsys, "train-terrain", str(tmp_path / "seg"), "--sets", "30000:2:oaks")
    assert code != 0 and "'30000:2:oaks' is not SEED:TABLES or SEED:TABLES:trees" in err
    assert not (tmp_path / "seg").exists()


@pytest.mark.parametrize("command", ["train-detector", "train-refiner", "train-terrain", "train-card-finder"])
def test_train_commands_without_the_train_extra_say_how_to_get_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str
) -> None:
    monkeypatch.setitem(sys.modules, "vision.training.commands", None)  # importing it now raises ImportError
    code, out, err = run(capsys, command, str(tmp_path / "run"))
    assert code == 2 and out == ""
    assert "training needs the train extra: pip install -e '.[train]'" in err
    assert not (tmp_path / "run").exists()


def test_eval_vision_judges_the_detector_analyze_uses(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --detector, eval-vision measures what `analyze` runs by default (the shipped learned model),
    not the classical fallback: the bundled photos of each game's table, against their truth."""
    code, out, _ = run(capsys, "eval-vision", str(Path(__file__).parents[1] / "sample_images" / "games"), "--json")
    report = json.loads(out)
    assert code == 0 and report["detector"] == "learned" and report["images"] == 9
    assert report["bases"]["recall"] > 0.95 and report["objectives"]["recall"] == 1.0


def test_serve_adapts_the_refiner_during_camera_games_only_where_it_can(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from tablesight import cli
    from web import refiner_adapting

    def serve_args(**given: Any) -> argparse.Namespace:
        return argparse.Namespace(**{"adapt_after": 2, "keep_frames": str(tmp_path), "refiner": None, **given})

    monkeypatch.setattr(refiner_adapting, "can_train", lambda: True)
    adapting = cli._adapting_for(serve_args())
    assert isinstance(adapting, refiner_adapting.RefinerAdapting) and adapting.after_rounds == 2
    assert "adapts to each game's table after 2 confirmed rounds" in capsys.readouterr().out
    assert cli._adapting_for(serve_args(adapt_after=0)) is None
    assert cli._adapting_for(serve_args(keep_frames="")) is None  # nothing kept: nothing to train on
    assert cli._adapting_for(serve_args(refiner="mine.onnx")) is None  # the players' choice is not swapped
    assert "reading with mine.onnx; not adapting" in capsys.readouterr().out
    monkeypatch.setattr(refiner_adapting, "can_train", lambda: False)
    assert cli._adapting_for(serve_args()) is None
    assert "needs the training stack (pip install -e '.[train]')" in capsys.readouterr().out


def test_los_says_too_close_to_call_where_the_models_sigma_could_flip_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The golden scene whose sight clears a wall by 0.02" with models measured to sigma 0.02" (and 0.005").
    golden = Path(__file__).parent / "golden" / "miniature-skirmish"
    for name, verdict in (("measured", "too_close"), ("sure", "yes")):
        scene = json.loads((golden / f"15-rifle-over-a-wall-edge-{name}.json").read_text(encoding="utf-8"))["scene"]
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(scene), encoding="utf-8")
        code, out, _ = run(capsys, "los", str(path), "r1m", "b1m", "--json")
        data = json.loads(out)
        assert code == 0 and data["visible"] is True and data["verdict"] == verdict
        assert data["pairs"][0]["verdict"] == verdict
        code, out, _ = run(capsys, "los", str(path), "r1m", "b1m")
        assert ("Too close to call" in out) is (verdict == "too_close"), out


def test_analyze_without_an_empty_table_says_what_that_costs(capsys: pytest.CaptureFixture[str]) -> None:
    """Without the empty table the reference is the photo smoothed, so terrain that looks like a base from above
    can be read as one (docs/vision.md, session 52: path-traced precision 98 % -> 95-96 %): analyze says so."""
    from tablesight.cli import NO_EMPTY_NOTE

    games = Path(__file__).resolve().parents[1] / "sample_images" / "games"
    photo, empty, lens = (str(games / f) for f in ("focal-point-900.jpg", "focal-point-900.empty.jpg", "lens.json"))
    code, out, _ = run(capsys, "analyze", photo, "--lens", lens, "--json")
    assert code == 0 and NO_EMPTY_NOTE in json.loads(out)["notes"]
    code, out, _ = run(capsys, "analyze", photo, "--lens", lens)
    assert code == 0 and "read without an empty table (--empty" in out
    code, out, _ = run(capsys, "analyze", photo, "--empty", empty, "--lens", lens, "--json")
    assert code == 0 and NO_EMPTY_NOTE not in json.loads(out)["notes"]
    assert json.loads(out)["scene"]["models"]  # the bases are found either way


def test_analyze_refuses_an_empty_table_photographed_at_another_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Read against the photo's calibration, an empty table taken at another size was seen as covered all over
    ("something covers 283 sq in of the table ... (a hand?)") and every ruling was lost: now it is refused,
    naming both files and sizes."""
    import cv2

    games = Path(__file__).resolve().parents[1] / "sample_images" / "games"
    photo, empty, lens = (str(games / f) for f in ("focal-point-900.jpg", "focal-point-900.empty.jpg", "lens.json"))
    smaller = tmp_path / "empty-720p.jpg"
    cv2.imwrite(str(smaller), cv2.resize(cv2.imread(empty), (1280, 720), interpolation=cv2.INTER_AREA))
    code, out, err = run(capsys, "analyze", photo, "--empty", str(smaller), "--lens", lens)
    assert code == 2 and out == ""
    assert f"--empty {smaller} is 1280x720, {photo} is 1920x1080: take both with the same camera" in err
    # The same from the library's side (vision.analyze.analyze), for callers that are not the command line.
    from calibration.layout import Layout
    from vision.analyze import analyze

    with pytest.raises(ValueError, match="the empty table is 1280x720 and the photo 1920x1080"):
        analyze(cv2.imread(photo), Layout.default(24, 24), cv2.imread(str(smaller)))


@pytest.mark.parametrize("command", ["analyze", "watch"])
def test_a_game_tablesight_does_not_know_is_refused_before_anything_is_read(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `analyze --game chess` wrote a scene no scene file may hold; `watch --game chess` failed at the first ruling.
    with pytest.raises(SystemExit) as stop:
        main([command, "sample_images/games/focal-point-900.jpg", "--game", "chess"])
    assert stop.value.code == 2
    assert "argument --game: invalid choice: 'chess' (choose from 'focal-point', 'grinding-annihilation'" in (
        capsys.readouterr().err
    )


def test_analyze_refuses_a_calibration_made_on_photos_of_another_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A saved calibration (tablesight calibrate) is a map of one photo size's pixels: on a 720p photo a 1080p
    one was used as it was, and 2 of 15 bases went missing unsaid."""
    import cv2

    games = Path(__file__).resolve().parents[1] / "sample_images" / "games"
    photo, empty, lens = (str(games / f) for f in ("focal-point-900.jpg", "focal-point-900.empty.jpg", "lens.json"))
    saved = tmp_path / "table.calibration.json"
    code, _, _ = run(capsys, "calibrate", photo, "--lens", lens, "--out", str(saved))
    assert code == 0 and saved.is_file()
    small = tmp_path / "photo-720p.jpg"
    cv2.imwrite(str(small), cv2.resize(cv2.imread(photo), (1280, 720), interpolation=cv2.INTER_AREA))
    code, out, err = run(capsys, "analyze", str(small), "--calibration", str(saved))
    assert code == 2 and out == ""
    assert "the calibration was made on 1920x1080 photos, not this 1280x720 one: calibrate again" in err
    code, _, _ = run(capsys, "analyze", photo, "--empty", empty, "--calibration", str(saved))
    assert code == 0  # the photo it was made for


def test_analyze_says_what_the_calibration_found_wrong(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`calibrate` printed its warnings (a marker hidden or bent, the kit printed small, the lens file's size) and
    `analyze`, which calibrates the same way, said none of them. Here the kit is printed at 94 % of its layout."""
    games = Path(__file__).resolve().parents[1] / "sample_images" / "games"
    photo, empty, lens = (str(games / f) for f in ("focal-point-900.jpg", "focal-point-900.empty.jpg", "lens.json"))
    layout = json.loads((games / "focal-point-900.truth.json").read_text())["layout"]
    for marker in layout["markers"]:
        marker["size_in"] /= 0.94
    layout_file = tmp_path / "layout.json"
    layout_file.write_text(json.dumps(layout))
    code, out, _ = run(
        capsys, "analyze", photo, "--empty", empty, "--lens", lens, "--layout", str(layout_file), "--json"
    )
    notes = json.loads(out)["notes"]
    assert code == 0 and any(n.startswith('calibration: the markers measure 2.00" across') for n in notes), notes
    code, out, _ = run(capsys, "analyze", photo, "--empty", empty, "--lens", lens)
    assert code == 0 and "calibration:" not in out  # a kit as laid out, a lens file of the photo's size: nothing to say


@pytest.mark.parametrize(
    ("count", "said"), [("0", "0: give 1 or more"), ("-3", "-3: give 1 or more"), ("x", "'x' is not")]
)
def test_render_tables_wants_a_count_of_one_or_more(count: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    # --count 0 or -3 "wrote 0 rendered tables", exit 0
    with pytest.raises(SystemExit) as stop:
        main(["render-tables", "unused-folder", "--count", count])
    assert stop.value.code == 2 and f"argument --count: {said}" in capsys.readouterr().err
    assert not Path("unused-folder").exists()


def test_a_terrain_file_with_a_broken_piece_is_named_before_the_photo_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--terrain` pieces are checked as a scene's terrain when the file is read (session 74: an outline point that
    was no [x, y] stopped `analyze` inside shapely with a traceback; a self-crossing outline or a negative height
    went on into the scene)."""
    games = Path(__file__).resolve().parents[1] / "sample_images" / "games"
    photo, empty = str(games / "focal-point-900.jpg"), str(games / "focal-point-900.empty.jpg")
    square = [[2.0, 2.0], [6.0, 2.0], [6.0, 6.0], [2.0, 6.0]]
    for piece, says in (
        (
            {"id": "t1", "kind": "hill", "polygon": [[2.0, 2.0], -1, [6.0, 6.0]], "height_in": 1.0},
            "terrain[0].polygon[1]: -1 is not of type 'array'",
        ),
        (
            {"id": "t1", "kind": "hill", "polygon": [[0, 0], [2, 2], [2, 0], [0, 2]], "height_in": 1.0},
            "terrain[0].polygon: the polygon is not simple",
        ),
        (
            {"id": "t1", "kind": "hill", "polygon": square, "height_in": -1},
            "terrain[0].height_in: -1 is less than the minimum of 0",
        ),
        ({"id": "t1", "kind": "hill", "polygon": square}, "terrain[0]: 'height_in' is a required property"),
    ):
        path = tmp_path / "terrain.json"
        path.write_text(json.dumps({"terrain": [piece]}), encoding="utf-8")
        assert main(["analyze", photo, "--empty", empty, "--terrain", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{path}: {says}" in err, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ask", "{scene}", "in-range", "wardens", "knives", "--range", "nan"], "--range: 'nan': give the distance"),
        (["ask", "{scene}", "in-range", "wardens", "knives", "--range", "-1"], "--range: '-1': give the distance"),
        (["rectify", "sample_images/table-24x24.jpg", "--px-per-in", "-5"], "--px-per-in: '-5': give the view's scale"),
        (["rectify", "sample_images/table-24x24.jpg", "--px-per-in", "1e9"], "--px-per-in: '1e9': give the view's"),
        (["serve", "--tick", "0"], "--tick: '0': give the seconds between updates"),
        (["serve", "--motion", "nan"], "--motion: 'nan': give how far the units drift"),
    ],
)
def test_a_distance_or_scale_of_nan_below_zero_or_huge_is_refused_as_the_option_is_read(
    capsys: pytest.CaptureFixture[str], spec_example: dict[str, Any], write_scene: Any, argv: list[str], message: str
) -> None:
    """Session 74: `ask ... in-range --range nan` answered (within nan": NO; within -1": NO), `rectify --px-per-in -5`
    stopped with a traceback and 1e9 reached the maths. Now argparse refuses the option, saying what it is for."""
    scene = write_scene(spec_example)
    with pytest.raises(SystemExit) as stopped:
        main([a.format(scene=scene) for a in argv])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
