"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``) renders it
offline; the screenshot must show the charts' colours and a page that is not blank, the DOM
Chromium builds must hold the sections and tables, the numbers it shows must be the JSON
report's (port hours, decisions, the pilot, each decision's hours and sites, each owner's
decisions), and the page must log no console error. A 1,000-file tree's page stays small
enough, shows the summary on its first screen, groups its files by folder, and its filter
finds a file inside a folded group. Slow (a browser start per check); CI installs chromium
(.ci/run) and runs them."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from conftest import require_tool

from migrator.output.report_charts import CLASS_COLOURS
from migrator.output.report_html import render_html, who
from migrator.output.report_json import render_json
from migrator.report import HistoryOptions, ReportOptions, build_report

from test_report import SETTINGS, report_of
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
    (base / "report" / "report.json").write_text(render_json(document))
    return path


def shown(dom: str) -> dict:
    """What the page shows for the figures it marks: {id: (data-value, text)} of elements with
    an id and a data-value; decision rows by (code, symbol): {class: (data-value, text)} of
    their cells; owner rows by name: the same."""
    values, decisions, owners = {}, {}, {}
    row = None
    for match in re.finditer(r"<(\w+)((?:\s+[\w-]+=\"[^\"]*\")*)\s*>([^<]*)", dom):
        tag, attrs, text = match.group(1), dict(re.findall(r'([\w-]+)="([^"]*)"',
                                                            match.group(2))), match.group(3)
        attrs = {key: html.unescape(value) for key, value in attrs.items()}
        text = html.unescape(text).strip()
        if tag == "tr" and "data-code" in attrs:
            row = decisions.setdefault((attrs["data-code"], attrs["data-symbol"]), {})
        elif tag == "tr" and "data-owner" in attrs:
            row = owners.setdefault(attrs["data-owner"], {})
        elif tag == "section":
            row = None
        if "data-value" in attrs:
            if tag == "td" and row is not None:
                for name in attrs.get("class", "").split():
                    row[name] = (attrs["data-value"], text)
            elif "id" in attrs:
                values[attrs["id"]] = (attrs["data-value"], text)
    return {"values": values, "decisions": decisions, "owners": owners}


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


def test_numbers_shown_are_the_json_reports(page, tmp_path):
    """The figures a lead reads, from the DOM Chromium built, against report.json."""
    document = json.loads((page.parent / "report.json").read_text())
    summary, pilot = document["summary"], document["plan"]["pilot"]
    assert document["decisions"] and summary["blocker_decisions"]  # a tree with both
    found = shown(chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path).stdout)
    values = found["values"]
    for key in ("hours_port", "hours_decisions", "hours_sites"):
        value, text = values["v-" + key.replace("_", "-")]
        assert float(value) == summary[key] and text == "%.1f" % summary[key], key
    assert values["v-decisions"] == (str(summary["decisions"]), str(summary["decisions"]))
    assert values["v-blocker-decisions"] == (str(summary["blocker_decisions"]),) * 2
    assert values["v-pilot-units"] == (str(len(pilot["modules"])),) * 2
    assert values["v-pilot-lines"] == (str(pilot["lines"]), f"{pilot['lines']:,}")
    assert float(values["v-pilot-share"][0]) == pilot["share"]
    assert values["v-pilot-share"][1] == "%.1f" % (100 * pilot["share"])
    # every decision, one row each, with its hours and sites
    rows = found["decisions"]
    assert set(rows) == {(d["code"], d["symbol"]) for d in document["decisions"]}
    for decision in document["decisions"]:
        row = rows[decision["code"], decision["symbol"]]
        assert row["d-hours"] == (str(decision["hours"]), "%.1f" % decision["hours"])
        assert row["d-sites"] == (str(decision["sites"]), str(decision["sites"]))
        assert float(row["d-site-hours"][0]) == decision["site_hours"]
    # each owner's decisions
    people = document["owners"]["people"]
    assert set(found["owners"]) == {who(p["name"]) for p in people}
    assert any(p["decisions"] for p in people)
    for person in people:
        count = str(len(person["decisions"]))
        assert found["owners"][who(person["name"])]["o-decisions"] == (count, count)


FOLDERS, PER_FOLDER = 50, 20


@pytest.fixture(scope="module")
def large_page(tmp_path_factory) -> Path:
    """The report of a 1,000-file tree: kernels/'s programs copied into 50 folders (20 files
    each, bert_large.h beside the .cu files it is included by), in 5 parents of 10."""
    base = tmp_path_factory.mktemp("large")
    kernels = Path(__file__).resolve().parent.parent / "kernels"
    programs = sorted(path for path in kernels.iterdir() if path.suffix == ".cu")
    for number in range(FOLDERS):
        folder = base / "tree" / f"group{number // 10}" / f"part{number:02d}"
        folder.mkdir(parents=True)
        shutil.copy(kernels / "bert_large.h", folder)
        for index in range(PER_FOLDER - 1):
            program = programs[index % len(programs)]
            shutil.copy(program, folder / f"{program.stem}_{index}.cu")
    document = build_report(ReportOptions(base / "tree", base / "report", settings=SETTINGS,
                                          jobs=os.cpu_count() or 1))
    assert len(document["files"]) == FOLDERS * PER_FOLDER
    path = base / "report" / "report.html"
    path.parent.mkdir()
    path.write_text(render_html(document))
    return path


def with_script(page: Path, script: str, into: Path) -> Path:
    """A copy of the page running ``script`` after its own (a user's action, then a mark the
    dumped DOM shows)."""
    copy = into / page.name
    copy.write_text(page.read_text().replace("</body>", f"<script>{script}</script></body>"))
    return copy


def test_large_tree_page_loads_with_the_summary_first(large_page, tmp_path):
    size = large_page.stat().st_size
    assert size < 2_000_000, f"{size} bytes for 1,000 files"
    measure = ("var box = document.querySelector('#summary .cards').getBoundingClientRect();"
               "document.body.dataset.cardsBottom = Math.round(box.bottom);")
    result = chromium("--dump-dom", "--window-size=1280,900",
                      with_script(large_page, measure, tmp_path).as_uri(), tmp_path=tmp_path)
    assert "CONSOLE" not in result.stderr, result.stderr[-2000:]
    dom = result.stdout
    # the summary's cards lie on the first screen (900 pixels high)
    assert 0 < int(re.search(r'data-cards-bottom="(\d+)"', dom).group(1)) < 900
    assert dom.index('id="summary"') < dom.index('id="plan"') < dom.index('id="files"')
    # the files by folder: one folded group per folder, every file in one
    groups = re.findall(r'<details class="folder" data-folder="([^"]+)"( open="")?>', dom)
    assert len(groups) == FOLDERS and not any(opened for _, opened in groups)
    assert dom.count('<tr id="f-') == FOLDERS * PER_FOLDER
    assert re.search(r'data-folder="group3/part31"><summary><code>group3/part31/</code> · '
                     r'20 files · [\d,]+ lines', dom)


def test_large_tree_filter_finds_a_file_in_a_folded_group(large_page, tmp_path):
    wanted = "group3/part31/transpose_8.cu"
    action = ("var f = document.getElementById('file-filter');"
              f"f.value = '{wanted}'; f.dispatchEvent(new Event('input'));")
    dom = chromium("--dump-dom", with_script(large_page, action, tmp_path).as_uri(),
                   tmp_path=tmp_path).stdout
    groups = dict(re.findall(r'<details class="folder" data-folder="([^"]+)"([^>]*)>', dom))
    assert len(groups) == FOLDERS
    # its group opened and shown, every other group hidden
    assert "open" in groups["group3/part31"] and "display" not in groups["group3/part31"]
    assert all("display: none" in attrs for folder, attrs in groups.items()
               if folder != "group3/part31")
    rows = dict(re.findall(r'<tr id="f-([^"]+)"([^>]*)>', dom))
    assert "display" not in rows[wanted]
    assert sum("display: none" not in attrs for attrs in rows.values()) == 1
    # a link to a file opens its group
    dom = chromium("--dump-dom", large_page.as_uri() + "#f-group1/part12/atomics_0.cu",
                   tmp_path=tmp_path).stdout
    groups = dict(re.findall(r'<details class="folder" data-folder="([^"]+)"([^>]*)>', dom))
    assert "open" in groups["group1/part12"] and "open" not in groups["group1/part13"]
