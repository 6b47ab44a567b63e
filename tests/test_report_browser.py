"""The report in a real browser: headless Chromium driven by selenium through chromedriver (tests/browser.py).

Skipped only when Chromium or chromedriver is not installed (Debian: apt-get install chromium
chromium-driver).  Checks that the page's script runs under its
Content-Security-Policy without console errors, that the matrices render and their
cells filter the case list, that the filters narrow the failure list, that hostile
backend messages stay text, that the drill-down shows the exact repro command, and
that a large report becomes interactive quickly.  A screenshot is kept in tmp_path.
"""

import json
import shlex
import time

import pytest

from browser import Browser, missing  # tests/browser.py
from synthetic import synthetic_results  # tests/synthetic.py

from conformance.reports.common import repro_command
from conformance.reports.html import write_html

MISSING = missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"no browser to drive: {MISSING}")

XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def _wait_ready(page, timeout=20.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if page.eval("document.documentElement && document.documentElement.getAttribute('data-ready')") == "1":
            return time.monotonic() - t0
        time.sleep(0.02)
    raise AssertionError(f"the report did not become ready; console: {page.console_errors()}")


def _set(page, sel, value):
    page.run(f"{{ const e = document.getElementById({json.dumps(sel)}); e.value = {json.dumps(value)};"
             f" e.dispatchEvent(new Event('change')); }}")


def _rows(page):
    return page.eval("[...document.querySelectorAll('#list .row')].map(r => ["
                     "r.querySelector('.badge').textContent, r.querySelector('.op').textContent,"
                     " r.querySelector('.dt').textContent, r.querySelector('.id').textContent])")


def _count(page):
    text = page.eval("document.getElementById('count').textContent")
    return int(text.split(" of ")[0].replace(",", ""))


@pytest.fixture(scope="module")
def browser():
    with Browser(width=1400, height=1000, timeout=60) as b:
        assert b.driver.execute_cdp_cmd("Browser.getVersion", {})["product"].startswith(("Chrome/", "HeadlessChrome/"))
        yield b


def test_the_browser_reports_console_errors_and_policy_violations(browser, tmp_path):
    """The checks below rely on console_errors(): it must see console.error, uncaught
    exceptions and Content-Security-Policy violations, and keep them per page."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><meta http-equiv='Content-Security-Policy' content=\"script-src 'self'\">"
                   "<script src='bad.js'></script><script>window.inline = 1</script><p>x</p>", encoding="utf-8")
    (tmp_path / "bad.js").write_text("console.error('boom'); setTimeout(() => { throw new Error('late'); }, 0);",
                                     encoding="utf-8")
    page = browser.open(bad.as_uri())
    time.sleep(0.3)
    assert page.eval("window.inline") is None  # the policy blocked the inline script
    errors = page.console_errors()
    assert any("boom" in e for e in errors) and any("late" in e for e in errors), errors
    assert any("Content Security Policy" in e for e in errors), errors
    good = tmp_path / "good.html"
    good.write_text("<!doctype html><p>fine</p>", encoding="utf-8")
    page2 = browser.open(good.as_uri())
    assert page2.eval("document.querySelector('p').textContent") == "fine"
    assert page2.console_errors() == [] and page.console_errors() == errors


def _report(tmp_path, n=3000):
    doc = synthetic_results(n, seed=7)
    hostile = next(c for c in doc["cases"] if c["outcome"] == "error")
    hostile["message"] = XSS
    hostile["id"] = hostile["id"] + "/it's"  # a quote the repro command must survive
    doc["run"] = {"backend_spec": "pkg.mod:Backend", "backend_options": {"device": "CPU"},
                  "bundle": "/srv/suite bundle", "ops": doc["suite"]["ops"], "seed": 7, "match": None, "argv": []}
    path = write_html(doc, tmp_path / "report.html")
    return doc, hostile, path


def test_report_in_chromium(browser, tmp_path):
    t_start = time.monotonic()
    doc, hostile, path = _report(tmp_path)
    page = browser.open(path.as_uri())
    _wait_ready(page)

    # the matrix renders, with a coloured, linked cell per (op, dtype), operator rows grouped by family
    cells = page.eval("[...document.querySelectorAll('#dtype-matrix tr.op td.cell a')].map(a => a.getAttribute('href'))")
    ops = {c["op"] for c in doc["cases"]}
    assert len(cells) == len(ops) * 4
    assert page.eval("getComputedStyle(document.querySelector('#dtype-matrix td.cell')).backgroundColor") \
        not in ("rgba(0, 0, 0, 0)", "transparent")
    # the accuracy histograms are inline SVG, drawn at their size (no image to load)
    assert page.eval("document.querySelectorAll('#accuracy-table tr.famrow svg.hist').length") >= 1
    assert page.eval("document.querySelectorAll('#accuracy-table svg.hist rect').length") > len(ops)
    assert page.eval("document.querySelectorAll('img').length") == 0
    assert page.eval("document.querySelector('#accuracy-table tr.famrow svg.hist').getBoundingClientRect().width") > 100

    # by default the list shows the cases that did not pass; filters narrow it
    n_bad = sum(c["outcome"] != "pass" for c in doc["cases"])
    assert _count(page) == n_bad
    assert all(r[0] != "pass" for r in _rows(page))
    _set(page, "f-oc", "fail")
    n_fail = sum(c["outcome"] == "fail" for c in doc["cases"])
    assert _count(page) == n_fail < n_bad
    assert {r[0] for r in _rows(page)} == {"fail"}
    op = sorted(ops)[0]
    _set(page, "f-op", op)
    n_op = sum(c["outcome"] == "fail" and c["op"] == op for c in doc["cases"])
    assert _count(page) == n_op < n_fail
    assert {(r[0], r[1]) for r in _rows(page)} == {("fail", op)}
    assert f"op={op}" in page.eval("location.hash") and "oc=fail" in page.eval("location.hash")

    # clicking a matrix cell lists that cell's cases (every outcome)
    page.eval("document.querySelector('#dtype-matrix tr.op a[href*=\"dtype=float16\"]').click()")
    time.sleep(0.1)
    first_op = page.eval("document.querySelector('#dtype-matrix tr.op th').textContent")
    want = sum(c["op"] == first_op and c["tags"]["dtype"] == "float16" for c in doc["cases"])
    assert _count(page) == want
    assert page.eval("document.getElementById('f-op').value") == first_op
    assert page.eval("document.getElementById('f-dt').value") == "float16"
    assert page.eval("document.getElementById('f-oc').value") == "all"
    # a family's cell lists the cases of all its operators, through the family filter
    fam = page.eval("document.querySelector('#dtype-matrix tbody.fam').dataset.family")
    fam_ops = set(page.eval(f"[...document.querySelectorAll('#dtype-matrix tbody.fam[data-family=\"{fam}\"] tr.op th')]"
                            ".map(t => t.textContent)"))
    assert fam_ops and fam_ops <= ops
    page.eval(f"document.querySelector('#dtype-matrix tbody.fam[data-family=\"{fam}\"] tr.famrow a[href*=\"dtype=double\"]').click()")
    time.sleep(0.1)
    assert page.eval("document.getElementById('f-fam').value") == fam
    assert page.eval("document.getElementById('f-op').value") == ""
    assert _count(page) == sum(c["op"] in fam_ops and c["tags"]["dtype"] == "double" for c in doc["cases"])
    assert {r[1] for r in _rows(page)} <= fam_ops

    # search finds the hostile message; the drill-down shows it as text and nothing ran
    page.run("document.getElementById('f-reset').click()")
    page.run("{ const q = document.getElementById('f-q'); q.value = 'onerror';"
             " q.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); }")
    assert _count(page) == 1
    page.run("document.querySelector('#list .row').click()")
    assert page.eval("document.querySelector('#detail pre.msg').textContent") == XSS
    assert page.eval("window.__pwned") is None
    assert page.eval("document.querySelectorAll('script').length") == 2
    assert page.eval("document.querySelectorAll('#detail img, #detail script').length") == 0
    cmd = page.eval("document.getElementById('repro').textContent")
    assert cmd == repro_command(doc["run"], hostile["id"])
    assert shlex.split(cmd)[shlex.split(cmd).index("--match") + 1] == hostile["id"]
    # the selection is in the URL: reloading shows the same case
    assert "case=" in page.eval("location.hash")

    shot = page.screenshot(tmp_path / "report.png")
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000
    assert page.console_errors() == []
    assert time.monotonic() - t_start < 30


def test_deep_link_and_outputs_table(browser, tmp_path):
    doc, _, path = _report(tmp_path, n=500)
    fail = next(c for c in doc["cases"] if c["outcome"] == "fail")
    from urllib.parse import urlencode

    page = browser.open(path.as_uri() + "#cases?" + urlencode({"oc": "all", "case": fail["id"]}))
    _wait_ready(page)
    assert page.eval("document.querySelector('#detail h3').textContent").endswith(fail["id"])
    rows = page.eval("[...document.querySelectorAll('#detail table.outs tr')].slice(1).map("
                     "tr => [...tr.children].map(td => td.textContent))")
    bad = next(o for o in fail["outputs"] if not o["passed"])
    row = next(r for r in rows if r[0] == bad["name"])
    assert row[1] == "no"
    assert float(row[5]) == bad["expected_at_worst"] and float(row[6]) == bad["actual_at_worst"]
    assert json.loads(row[4]) == bad["worst_index"]
    assert page.eval("document.querySelector('#list .row.sel .id').textContent") == fail["id"]
    assert page.console_errors() == []


def test_large_report_is_interactive_quickly(browser, tmp_path):
    """20,000 cases: the list is ready in a few seconds and a filter takes well under a second."""
    doc = synthetic_results(20_000, seed=3)
    path = write_html(doc, tmp_path / "big.html")
    t_nav = time.monotonic()
    page = browser.open(path.as_uri(), timeout=60)
    _wait_ready(page, timeout=30)
    ready = time.monotonic() - t_nav
    t0 = time.monotonic()
    _set(page, "f-oc", "all")
    assert _count(page) == 20_000
    _set(page, "f-dt", "bfloat16")
    filter_s = time.monotonic() - t0
    assert _count(page) == sum(c["tags"]["dtype"] == "bfloat16" for c in doc["cases"])
    # only the visible rows exist in the DOM
    assert page.eval("document.querySelectorAll('#list .row').length") < 200
    print(f"20k cases: {path.stat().st_size / 1e6:.1f} MB, ready {ready:.2f} s, two filters {filter_s * 1000:.0f} ms")
    assert ready < 8 and filter_s < 2
    assert page.console_errors() == []


def test_family_summary_is_on_the_first_screen_of_the_whole_suite(browser, tmp_path):
    """The report of the whole suite (synthetic results over the real operator table: every
    operator, about 28,700 cases, a realistic outcome mix) at 1280x800: the family summary is
    on the first screen, lists every family of the table, and a family expands to its operators."""
    from conformance import registry

    doc = synthetic_results(28_700, seed=5, ops="table")
    table = {}  # {op type: family} of the operator table
    for name in registry.available_ops():
        domain, _, op = name.rpartition(":")
        table[op] = registry.family(op, domain)
    assert {c["op"] for c in doc["cases"]} == set(table)  # every operator of the table has cases
    path = write_html(doc, tmp_path / "suite.html")
    shot = tmp_path / "first-screen.png"
    driver = browser.driver
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    try:
        page = browser.open(path.as_uri())
        _wait_ready(page)
        page.screenshot(shot)
        where = f"(screenshot: {shot})"
        assert page.eval("[window.innerWidth, window.innerHeight]") == [1280, 800], where
        box = page.eval("(() => { const r = document.getElementById('family-summary').getBoundingClientRect();"
                        " return {top: r.top, height: r.height}; })()")
        assert box["height"] > 0 and 0 <= box["top"] < 800, (box, where)
        rows = page.eval("[...document.querySelectorAll('#family-summary details.fam > summary')].map(s => {"
                         " const r = s.getBoundingClientRect(); return [s.parentElement.dataset.family, r.top, r.bottom,"
                         " s.querySelector('.name').textContent]; })")
        # every family of the table, in order, and the first rows visible without scrolling
        assert [r[0] for r in rows] == sorted(set(table.values()), key=lambda f: (f == "other", f)), where
        assert all(r[0] == r[3] for r in rows), where
        visible = [r for r in rows if r[2] <= 800]
        assert len(visible) >= 3 and rows[0][1] >= box["top"], (rows[:4], where)
        # expanding one family shows its operators' rows, in its own block (checkVisibility: a closed
        # <details> hides its content with content-visibility, which getClientRects does not see)
        fam = "normalization"
        sel = f"#family-summary details.fam[data-family=\"{fam}\"]"
        shown = f"[...document.querySelectorAll('{sel} .frow.op')].filter(e => e.checkVisibility()).length"
        assert page.eval(shown) == 0, where
        page.run(f"document.querySelector('{sel} > summary').click()")
        names = page.eval(f"[...document.querySelectorAll('{sel} .frow.op')].filter(e => e.checkVisibility())"
                          ".map(e => e.querySelector('.name').textContent)")
        assert names == sorted(op for op, f in table.items() if f == fam), where
        # the matrices' family rows expand the same way
        tb = f"#dtype-matrix tbody.fam[data-family=\"{fam}\"]"
        ops_shown = f"[...document.querySelectorAll('{tb} tr.op')].filter(e => e.checkVisibility()).length"
        assert page.eval(ops_shown) == 0
        page.run(f"document.querySelector('{tb} button.tog').click()")
        assert page.eval(ops_shown) == len(names)
        assert page.eval(f"document.querySelector('{tb} button.tog').getAttribute('aria-expanded')") == "true"
        assert page.console_errors() == [], where
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
