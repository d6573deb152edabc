"""Screenshot the referee page on the still sample game, with a unit selected (docs/images/referee-page.png).

python scripts/screenshot_page.py [--out docs/images/referee-page.png]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.web.server import Server  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="docs/images/referee-page.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder) / "shot.sqlite", "--motion", "0")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=shutil.which("chromium"),
                    args=["--headless", "--no-sandbox", "--disable-background-networking", "--disable-gpu"],
                )
                page = browser.new_page(viewport={"width": 1400, "height": 860})
                page.goto(server.url)
                page.wait_for_selector("ellipse[data-id=l1]")
                page.click("ellipse[data-id=w3]")
                page.wait_for_selector("#select-unit")
                page.click("ellipse[data-id=k1]")
                page.wait_for_function("document.querySelector('#distance').textContent.length > 0")
                page.click("ellipse[data-id=l1]")
                page.wait_for_selector("#select-unit")
                page.click("#select-unit")
                page.wait_for_selector("#targets li")
                page.screenshot(path=args.out)
                browser.close()
        finally:
            server.stop()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
