"""The referee page in a real browser: Playwright driving Debian's chromium against a real server.

Needs ``chromium`` on the PATH (Debian's package; ``make test`` installs it
where it can). The sample game is played still (``--motion 0``) so the
numbers read off the page are known.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tablesight.cli import bundled_sample
from tests.web.server import Server

from .conftest import FluxFiles

LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-background-networking", "--disable-gpu", "--no-first-run"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("browser") / "game.sqlite", "--motion", "0", "--tick", "0.5")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    assert chromium, "the page tests need Debian's chromium: apt-get install chromium chromium-driver"
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        yield launched
        launched.close()


def open_page(
    browser: Browser, server: Server, ready: str = "ellipse[data-id=w1]", timeout_ms: float = 30_000, **context: Any
) -> tuple[Page, list[str]]:
    """The page, opened once ``ready`` shows (the sample game's first model), and the script errors it raises."""
    page = browser.new_page(**context)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server.url)
    page.wait_for_selector(ready, timeout=timeout_ms)
    return page, errors


def serve_frames(folder: Path, table: Any, later: Any, count: int) -> Server:
    """``serve --camera`` on a folder of frames: ``table`` (a rendered table) set up empty, deployed for four
    frames, then ``later`` (a photo of the same table) ``count`` times."""
    import cv2

    from calibration.lens import LensModel

    for k, frame in enumerate([table.empty] + [table.image] * 4 + [later] * count):
        cv2.imwrite(str(folder / f"{k:03d}.png"), frame)
    lens = folder.with_name(f"{folder.name}-lens.json")  # (beside the frames: each test's own)
    LensModel(table.camera.K, table.camera.dist, table.camera.size).save(lens)
    return Server(
        folder.with_name(f"{folder.name}.sqlite"),
        "--camera",
        str(folder),
        "--lens",
        str(lens),
        "--tick",
        "0.2",
        "--adapt-after",
        "0",
    )


def test_click_two_models_and_read_the_distance(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server, viewport={"width": 1400, "height": 900})
    page.click("ellipse[data-id=w1]")
    page.wait_for_selector("#select-unit")
    assert "Blade Wardens" in page.inner_text("#selection")
    page.click("ellipse[data-id=w2]")
    page.wait_for_function("document.querySelector('#distance').textContent.length > 0")
    # w1 (4, 4) and w2 (6.5, 4) on 32 mm bases: 2.5 - 1.26 = 1.24", sigma 0.02" each -> +/-0.06" at 2 sigma.
    assert page.inner_text("#distance") == '1.24" ± 0.06" (2σ)'
    assert errors == []


def test_select_a_unit_and_read_its_targets(browser: Browser, server: Server, tmp_path: Path) -> None:
    page, errors = open_page(browser, server, viewport={"width": 1400, "height": 900})
    page.click("ellipse[data-id=l1]")
    page.click("#select-unit")
    page.wait_for_selector("#targets li[data-target=knives]")
    knives = page.inner_text("#targets li[data-target=knives]")
    # Focal Point > Combat > 1. Check Range; Keywords > Ranged(X): the lancers' Ranged(10) reaches the knives.
    assert "Glass Knives" in knives and "YES" in knives.upper() and "Ranged(10)" in knives
    assert "Rule:" in knives
    # Core Concepts > Coherency: l1 and l2 stand about 1.6" apart, within 2".
    coherency = page.inner_text("#unit-coherency")
    assert "YES" in coherency.upper() and "Coherency" in coherency
    assert page.locator("line.sight.visible").count() > 0
    assert page.locator("polygon.range.threat").count() >= 1
    page.screenshot(path=str(tmp_path / "unit.png"))
    assert errors == []


def test_a_units_last_move_is_drawn_and_judged(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server, viewport={"width": 1400, "height": 900})
    page.click("ellipse[data-id=k1]")
    page.click("#select-unit")
    page.wait_for_selector("#unit-last-move")
    # Focal Point > Activation (Move): the knives (Move 6") came 4.5" from where the sample's history
    # says they stood, round no terrain, and ended in coherency.
    judged = page.inner_text("#unit-last-move")
    assert "YES" in judged.upper() and '6.00"' in judged and '4.50"' in judged and "Rule:" in judged
    assert page.locator("circle.move-start").count() == 3 and page.locator("line.move-path").count() == 3
    start = page.locator("circle.move-start[data-id=k1]")
    assert (float(start.get_attribute("cx") or 0), float(start.get_attribute("cy") or 0)) == (14.0, 4.5)
    # A unit with no move recorded shows none.
    page.click("ellipse[data-id=l1]")
    # The model panel is drawn after its fetch: wait for l1's, or the click would select the knives again.
    page.wait_for_function("(document.querySelector('#selection h2') || {}).textContent === 'Model l1'")
    page.click("#select-unit")
    page.wait_for_selector("#targets li[data-target=knives]")
    assert page.locator("#unit-last-move").count() == 0 and page.locator("circle.move-start").count() == 0
    assert errors == []


def test_blocked_sight_lines_are_drawn_and_named(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server, viewport={"width": 1400, "height": 900})
    page.click("ellipse[data-id=w1]")
    page.click("#select-unit")
    page.wait_for_selector("#targets li[data-target=knives]")
    assert page.locator("line.sight.blocked").count() > 0
    assert "ruin" in page.inner_text("#targets li[data-target=knives]")
    assert errors == []


def test_end_a_round_and_read_the_score(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server, viewport={"width": 1400, "height": 900})
    round_before = int(page.inner_text("#round-no"))
    page.keyboard.press("e")  # the keyboard shortcut for End round
    page.wait_for_selector("#score-table")
    # Focal Point > Winning the Game: 2 VP per objective controlled; red holds north, blue holds south.
    assert page.inner_text("td.vp[data-player=red]") == "2"
    assert page.inner_text("td.vp[data-player=blue]") == "2"
    assert "controls objective north" in page.inner_text("#round")
    page.click("#confirm-round")
    page.wait_for_selector("#round-done")
    assert f"round {round_before + 1}" in page.inner_text("#round-done")
    page.wait_for_function(f"document.querySelector('#round-no').textContent === '{round_before + 1}'")
    assert errors == []


def test_the_page_fits_a_phone(browser: Browser, server: Server, tmp_path: Path) -> None:
    page, errors = open_page(browser, server, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    board = page.locator("#board").bounding_box()
    panel = page.locator("#panel").bounding_box()
    assert board and panel
    assert board["width"] <= 390 and panel["y"] >= board["y"] + board["height"] - 1  # panel below the table
    page.tap("ellipse[data-id=k1]")
    page.wait_for_selector("#select-unit")
    assert re.search(r"Glass Knives", page.inner_text("#selection"))
    page.screenshot(path=str(tmp_path / "phone.png"))
    assert errors == []


def _screen_point(page: Page, x_in: float, y_in: float) -> tuple[float, float]:
    """Where a table point (inches) is on the screen, by the SVG's own transform."""
    point = page.evaluate(
        """([x, y]) => {
            const svg = document.querySelector('#table');
            const p = svg.createSVGPoint(); p.x = x; p.y = y;
            const s = p.matrixTransform(svg.getScreenCTM());
            return [s.x, s.y];
        }""",
        [x_in, y_in],
    )
    return float(point[0]), float(point[1])


def test_move_a_misdetected_model_and_it_stays_moved(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server, viewport={"width": 1400, "height": 900})
    page.click("ellipse[data-id=k3]")
    page.wait_for_selector("#select-unit")
    page.keyboard.press("m")
    x, y = _screen_point(page, 20.0, 20.0)
    page.mouse.click(x, y)
    page.wait_for_selector("ellipse[data-id=k3].corrected")
    cx = float(page.get_attribute("ellipse[data-id=k3]", "cx") or 0)
    cy = float(page.get_attribute("ellipse[data-id=k3]", "cy") or 0)
    assert abs(cx - 20.0) < 0.05 and abs(cy - 20.0) < 0.05
    version = int(page.get_attribute("#table", "data-version") or 0)
    page.wait_for_function(f"+document.querySelector('#table').dataset.version > {version}")  # a new frame came
    assert page.locator("ellipse[data-id=k3].corrected").count() == 1
    assert errors == []


def test_a_move_whose_start_the_camera_did_not_see_is_not_drawn_nor_judged(browser: Browser, tmp_path: Path) -> None:
    """Affinity: Focal Point > Activation (Move): "Move the entire formation up to Move stat in inches". The camera
    did not see where k1 stood when the knives were activated (picked up, or hidden whole, then: the record gives
    where it was last seen, ``unseen_from``). The page draws no start nor line for k1 and says why its move is too
    close to call; k2's and k3's are drawn as before."""
    scene = json.loads(Path(bundled_sample()).read_text(encoding="utf-8"))
    move = next(e for e in scene["history"] if e.get("unit") == "knives")
    move["from"]["k1"] = [8.0, 4.5]  # 10.5" from where k1 stands: past its Move, were that place its start
    move["unseen_from"] = ["k1"]
    (tmp_path / "scene.json").write_text(json.dumps(scene), encoding="utf-8")
    running = Server(tmp_path / "game.sqlite", "--scene", str(tmp_path / "scene.json"), "--motion", "0")
    try:
        page, errors = open_page(browser, running, viewport={"width": 1400, "height": 900})
        page.click("ellipse[data-id=k2]")
        page.click("#select-unit")
        page.wait_for_selector("#unit-last-move")
        judged = page.inner_text("#unit-last-move")
        assert "TOO CLOSE" in judged.upper().replace("_", " "), judged
        assert "k1: where it stood when its unit was activated was not seen" in judged
        assert page.locator("circle.move-start").count() == 2 and page.locator("line.move-path").count() == 2
        assert page.locator("circle.move-start[data-id=k1]").count() == 0
        assert errors == []
    finally:
        running.stop()


def test_set_the_base_of_a_model_whose_size_was_read_unsurely(browser: Browser, tmp_path: Path) -> None:
    """A base read unsurely is drawn for the players to check; they pick it and set its base, and the rulings
    lose the doubt: "within 2 inches of at least one other model" (Affinity: Focal Point > Coherency), from
    base edges, goes from too close to call (2.04" +/- 0.15") to yes (1.90")."""
    scene = json.loads(Path(bundled_sample()).read_text(encoding="utf-8"))
    w3 = next(m for m in scene["models"] if m["id"] == "w3")
    w3.update(x=6.5 + 1.9 + 2 * 0.63, y=4.0, base="25", base_sigma_in=0.15)  # truly 32 mm, read as 25 mm
    (tmp_path / "scene.json").write_text(json.dumps(scene), encoding="utf-8")
    running = Server(tmp_path / "game.sqlite", "--scene", str(tmp_path / "scene.json"), "--motion", "0")
    try:
        page, errors = open_page(browser, running, viewport={"width": 1400, "height": 900})
        assert page.locator("ellipse[data-id=w3].unsure-size").count() == 1
        assert page.locator("ellipse.unsure-size").count() == 1
        assert next(u for u in running.get("/api/view")["units"] if u["id"] == "wardens")["coherency"] == "too_close"
        page.click("ellipse[data-id=w3]")
        page.wait_for_selector("#unsure-size")
        assert '0.15"' in page.inner_text("#unsure-size")
        assert page.input_value("#base-size") == "25"
        page.select_option("#base-size", "32")
        page.click("#base-save")
        page.wait_for_selector("ellipse[data-id=w3].corrected")
        assert page.locator("ellipse.unsure-size").count() == 0
        assert abs(float(page.get_attribute("ellipse[data-id=w3]", "rx") or 0) - 16 / 25.4) < 1e-6
        page.wait_for_function("!document.querySelector('#unsure-size')")  # the panel shows the base as set
        assert page.input_value("#base-size") == "32"
        assert next(u for u in running.get("/api/view")["units"] if u["id"] == "wardens")["coherency"] == "yes"
        assert errors == []
    finally:
        running.stop()


def test_a_hex_mat_is_drawn_and_a_trooper_on_a_hex_edge_is_too_close_to_call(browser: Browser, tmp_path: Path) -> None:
    """Onefinity is played in hexes: the page draws the mat's hexes. The reactive trooper was measured 0.02" from
    the edge between the hexes 8 and 9 away (sigma 0.03"): it is outlined as on a hex edge, and whether the
    active trooper can shoot it ("trooper in LoF and range", onefinity-combat.md > Shooting; combi rifle to 8
    hexes) is too close to call (golden scene onefinity/15)."""
    golden = Path(__file__).resolve().parents[1] / "golden" / "onefinity" / "15-range-on-hex-edge.json"
    (tmp_path / "scene.json").write_text(json.dumps(json.loads(golden.read_text())["scene"]), encoding="utf-8")
    running = Server(tmp_path / "game.sqlite", "--scene", str(tmp_path / "scene.json"), "--motion", "0")
    try:
        page, errors = open_page(
            browser, running, ready="ellipse[data-id=rtm]", viewport={"width": 1400, "height": 900}
        )
        assert page.locator("path.hexgrid").count() == 1
        # 1" hexes, centres from (2, 2): about 24 x 27 of them lie on the 24" x 24" table.
        assert 550 < (page.get_attribute("path.hexgrid", "d") or "").count("Z") < 700
        assert page.locator("ellipse.hex-edge").count() == 1
        assert page.locator("ellipse[data-id=rtm].hex-edge").count() == 1
        page.click("ellipse[data-id=atm]")
        page.click("#select-unit")
        page.wait_for_selector("#targets li[data-target=rt]")
        target = page.inner_text("#targets li[data-target=rt]")
        assert "too close to call" in target and "hex edge" in target, target
        # The players say which hex: the trooper's panel offers the two, and the one picked settles the ruling.
        page.click("ellipse[data-id=rtm]")
        page.wait_for_selector("#hex-choice")
        picks = page.locator("#hex-choice .hex-pick")
        assert picks.count() == 2 and "(measured)" in page.inner_text("#hex-choice .hex-pick[data-x='10']")
        page.click("#hex-choice .hex-pick[data-x='10']")  # the hex 8 away, whose centre is (10, 2)
        page.wait_for_selector("ellipse[data-id=rtm].corrected")
        page.wait_for_function("!document.querySelector('#hex-choice')")
        assert page.locator("ellipse.hex-edge").count() == 0
        rulings = running.post("/api/ask", {"question": "in-range", "args": ["at", "rt"]})
        assert rulings["verdict"] == "yes" and "8 hexes" in rulings["reasons"][0], rulings
        assert errors == []
    finally:
        running.stop()


def test_lasso_models_into_a_unit(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server, viewport={"width": 1400, "height": 900})
    page.click("#setup summary")
    page.keyboard.press("l")
    # Drag a loop round w1 and w2 (4, 4) and (6.5, 4).
    points = [(3.0, 3.0), (7.5, 3.0), (7.5, 5.0), (3.0, 5.0), (3.0, 3.1)]
    page.mouse.move(*_screen_point(page, *points[0]))
    page.mouse.down()
    for p in points[1:]:
        page.mouse.move(*_screen_point(page, *p), steps=4)
    page.mouse.up()
    assert page.inner_text("#lasso-count") == "2"
    page.select_option("#assign-unit", "lancers")
    page.click("#assign-apply")
    page.wait_for_function("document.querySelector('#lasso-count').textContent === '0'")
    view = server.get("/api/view")
    assert {m["id"] for m in view["models"] if m["unit"] == "lancers"} >= {"w1", "w2"}
    assert errors == []


def test_flux_mode_shows_the_pools_and_answers_what_they_can_pay(
    browser: Browser, flux_files: FluxFiles, tmp_path: Path
) -> None:
    """ "Your cards: 1 card = 1 Source" (Affinity: Flux > Source Cards > Spending Source): each pool of the
    registration photo holds only its owner's cards, so its Source is its card count."""
    flux = Server(
        tmp_path / "flux.sqlite",
        *("--tick", "0.5", "--flux", str(flux_files.photo), "--designs", str(flux_files.designs)),
        *("--lens", str(flux_files.lens)),
    )
    try:
        page, errors = open_page(
            browser, flux, "#flux-pools tr[data-player=B]", 60_000, viewport={"width": 1400, "height": 900}
        )
        for player, n in flux_files.pool_cards.items():
            row = page.inner_text(f"#flux-pools tr[data-player={player}]")
            assert page.inner_text(f"#flux-pools tr[data-player={player}] .flux-source") == str(n)
            assert f"{n} own" in row
        cards = flux.get("/api/flux")["cards"]
        assert page.locator("polygon.flux-card").count() == len(cards) > 0
        assert page.locator("polygon.flux-card[data-design=unsure]").count() == 0
        n = flux_files.pool_cards["B"]
        page.select_option("#flux-player", "B")
        page.fill("#flux-cost", str(n + 1))
        page.click("#flux-ask")
        page.wait_for_selector("#flux-answer .verdict")
        assert page.inner_text("#flux-answer .verdict").upper() == "NO"
        assert "1 short" in page.inner_text("#flux-answer")
        page.fill("#flux-cost", str(n))
        page.click("#flux-ask")
        page.wait_for_function("document.querySelector('#flux-answer .verdict').textContent === 'yes'")
        # The Burn: "treat 1 as 2, cap at 5": a cheap unit brings 2 Source one time in three.
        assert "33.3%" in page.inner_text("#flux-burn")
        page.screenshot(path=str(tmp_path / "flux.png"))
        assert errors == []
    finally:
        flux.stop()


def test_a_hand_held_still_is_drawn_where_it_covers_the_table(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # serve --camera on a folder: held-out table 5010 set up empty, deployed, then a hand held still over a base
    # (vision/covered.py). The page draws the part of the table it covers and says pieces there cannot be seen.
    import numpy as np

    from vision.synth.table import render_table

    table = render_table(5010, hard="none")
    under = min(table.scene["models"], key=lambda m: np.hypot(m["x"] - 11.6, m["y"] - 8.3))
    handled = render_table(5010, hard="none", hand_at=(under["x"], under["y"]))
    running = serve_frames(tmp_path_factory.mktemp("hand-frames"), table, handled.image, 60)
    try:
        page, errors = open_page(browser, running, "rect.covered", 60_000, viewport={"width": 1400, "height": 900})
        box = page.locator("rect.covered").first
        x, y = float(box.get_attribute("x") or 0), float(box.get_attribute("y") or 0)
        w, h = float(box.get_attribute("width") or 0), float(box.get_attribute("height") or 0)
        assert x < under["x"] < x + w and y < under["y"] < y + h  # drawn in table inches, over the hidden base
        assert "pieces under it cannot be seen" in page.inner_text("#camera")
        assert errors == []
    finally:
        running.stop()


def test_a_model_lifted_off_the_table_is_listed_and_the_players_say_it_was_taken_off(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Focal Point, Removing Models: "remove models to represent casualties". serve --camera on a folder: held-out
    # table 5010 set up empty, deployed, then one model lifted off. The page lists it as not seen by the camera;
    # the players press "Taken off", which stores their delete, and it is no longer asked about.
    import numpy as np

    from vision.synth.table import render_table

    table = render_table(5010, hard="none")
    lifted = min(table.scene["models"], key=lambda m: np.hypot(m["x"] - 11.6, m["y"] - 8.3))
    without = render_table(5010, hard="none", lifted=frozenset({lifted["id"]}))
    running = serve_frames(tmp_path_factory.mktemp("lifted-frames"), table, without.image, 80)
    try:
        page, errors = open_page(
            browser, running, "#unseen-list button.taken-off", 60_000, viewport={"width": 1400, "height": 900}
        )
        listed = page.locator("#unseen-list button.taken-off")
        assert listed.count() == 1
        gone = listed.first.get_attribute("data-id")
        shown = {m["id"]: (m["x"], m["y"]) for m in running.get("/api/view")["models"]}
        assert gone not in shown  # (the camera said so once, as it analysed the frame: "not seen: ...")
        listed.first.click()
        page.wait_for_selector("#unseen", state="hidden")
        assert [(c["op"], c["model"]) for c in running.get("/api/corrections")] == [("delete", gone)]
        assert errors == []
    finally:
        running.stop()
