"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``) renders it
offline; the screenshot must show the charts' colours and a page that is not blank, the DOM
Chromium builds must hold the sections and tables, and the page must log no console error.
Slow (a browser start per check); CI installs chromium (.ci/run) and runs them."""

from __future__ import annotations

import os
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from conftest import require_tool

from migrator.output.report_charts import CLASS_COLOURS
from migrator.output.report_html import render_html
from migrator.report import HistoryOptions

from test_report import report_of
from test_report_git import make_repository

pytestmark = pytest.mark.slow
WIDTH, HEIGHT = 1280, 2600


def chromium(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    browser = require_tool("chromium", "/usr/bin/chromium")
    env = dict(os.environ, HOME=str(tmp_path))  # its profile and crash folders go there
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--disable-extensions", "--enable-logging=stderr",
                           f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=180, env=env)


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB pixels) of an 8-bit RGB/RGBA, non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, chunks, header = 8, [], None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc
                                      else corner)) & 255
        previous = line
        rows.append(bytes(line) if channels == 3 else
                     bytes(b for i in range(0, stride, 4) for b in line[i:i + 3]))
    return width, height, rows


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The report of a repository with history (so the burn-down is drawn) as report.html."""
    base = tmp_path_factory.mktemp("browser")
    repo, _ = make_repository(base / "repo")
    document = report_of(Path(repo.working_tree_dir), base / "report",
                         history=HistoryOptions())
    path = base / "report" / "report.html"
    path.write_text(render_html(document))
    return path


def test_screenshot_shows_charts_and_tables(page, tmp_path):
    shot = tmp_path / "shot.png"
    result = chromium(f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
                      "--hide-scrollbars", page.as_uri(), tmp_path=tmp_path)
    assert shot.exists(), result.stderr[-2000:]
    width, height, rows = read_png(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    pixels: Counter = Counter()
    for row in rows[::2]:
        pixels.update(row[i:i + 3] for i in range(0, len(row), 6))
    # each class's colour is drawn by the charts (the phases' stacked bars, the folders')
    for name, colour in CLASS_COLOURS.items():
        rgb = bytes.fromhex(colour[1:])
        assert pixels[rgb] > 100, f"no {name} bar in the screenshot"
    assert pixels[bytes.fromhex("1d2330")] > WIDTH * 20  # the header band
    # a page with text, tables and charts in every band of its height, not a blank one
    for band in range(0, HEIGHT - 400, 400):
        colours = {row[i:i + 3] for row in rows[band:band + 400:4] for i in range(0, len(row), 12)}
        assert len(colours) > 20, f"the band at y={band} is (nearly) blank"


def test_dom_has_the_sections_and_tables(page, tmp_path):
    result = chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    dom = result.stdout
    for section in ("summary", "plan", "owners", "history", "inventory", "files", "model"):
        assert f'id="{section}"' in dom
    assert dom.count("<svg") == 3  # phases, folders, burn-down
    assert "Burn-down: remaining port effort" in dom
    assert 'id="f-a/kernel.cu"' in dom and "@team-blas" in dom
    assert dom.count("<table") >= 8


def test_page_logs_no_error(page, tmp_path):
    result = chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    assert "CONSOLE" not in result.stderr, result.stderr[-2000:]
    # the check would see one: the same page with a script error
    broken = tmp_path / "broken.html"
    broken.write_text(page.read_text().replace("(function () {", "(function () { missing();", 1))
    assert "Uncaught ReferenceError" in chromium("--dump-dom", broken.as_uri(),
                                                 tmp_path=tmp_path).stderr
