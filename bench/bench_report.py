"""How the HTML report scales: render time, file size, and responsiveness in Chromium.

For a synthetic results document of N cases (tests/synthetic.py) this prints:
  * building the document, writing and reading results.json (size, seconds);
  * render_html: seconds, and the size of report.html;
  * in headless Chromium driven by selenium (tests/browser.py; when chromium and
    chromedriver are installed): seconds from navigation until the case
    list is interactive (the page's script has parsed the data and drawn the list), the
    longest main-thread task while loading, and the time each of a series of filter
    changes takes from the event to the next painted frame, plus a scroll and expanding a
    family's rows; the page's height and where the family summary starts (1280x800 viewport).

The operators are the real operator table's (every operator, in its family) unless
``--ops synthetic`` asks for the dozen fixed names of tests/synthetic.py.

Usage: python bench/bench_report.py [--cases 100000] [--seed 0] [--ops table|synthetic] [--keep DIR] [--no-browser]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the package, and the test helpers browser.py and synthetic.py

from browser import Browser, missing  # noqa: E402
from synthetic import OPS, synthetic_results  # noqa: E402

from conformance.reports.html import render_html  # noqa: E402

#: Installed before the page's own script runs: records long tasks from the start.
OBSERVE = """
window.__long = [];
try { new PerformanceObserver(l => l.getEntries().forEach(e => window.__long.push(e.duration)))
        .observe({type: 'longtask', buffered: true}); } catch (e) {}
"""

#: Change a control, then resolve after the next two animation frames (the frame after the change is painted).
STEP = """
(async () => {
  const t0 = performance.now();
  %s
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {ms: performance.now() - t0, filterMs: window.__report.filterMs, count: document.getElementById('count').textContent};
})()
"""


def _set(sel: str, value: str, event: str = "change") -> str:
    return (f"{{ const e = document.getElementById({json.dumps(sel)}); e.value = {json.dumps(value)};"
            f" e.dispatchEvent(new Event({json.dumps(event)})); }}")


def measure_browser(html_path: Path, doc: dict) -> dict:
    """Open the report in headless Chromium and time loading and filtering (see module docstring)."""
    op = doc["cases"][0]["op"]
    fam = (doc["suite"].get("families") or {}).get(op, "other")
    out: dict = {}
    with Browser(timeout=120) as b:
        b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                 {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        b.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVE})
        t0 = time.perf_counter()
        page = b.open(html_path.resolve().as_uri())
        while True:
            ready = page.eval("document.documentElement && document.documentElement.getAttribute('data-ready')")
            if ready == "1":
                break
            if time.perf_counter() - t0 > 120:
                raise RuntimeError("the page did not become ready within 120 s")
            time.sleep(0.02)
        out["wall_until_ready_s"] = time.perf_counter() - t0
        out["page_ready_ms"] = page.eval("window.__report.readyMs")
        out["first_filter_ms"] = page.eval("window.__report.filterMs")
        time.sleep(0.5)  # let long tasks still running be observed
        out["longest_task_ms"] = page.eval("Math.max(0, ...window.__long)")
        out["layout"] = page.eval(
            "({height: document.documentElement.scrollHeight, viewport: window.innerHeight,"
            " summaryTop: (document.getElementById('family-summary') || {getBoundingClientRect: () => ({top: NaN})})"
            ".getBoundingClientRect().top,"
            " sections: [...document.querySelectorAll('main > section')].map(s => [s.id, Math.round(s.getBoundingClientRect().height)])})")
        steps = [
            ("outcome = all", _set("f-oc", "all")),
            (f"operator = {op}", _set("f-op", op)),
            ("dtype = float16", _set("f-dt", "float16")),
            ("outcome = fail", _set("f-oc", "fail")),
            ("search 'script' (all outcomes)", _set("f-oc", "all") + _set("f-op", "") + _set("f-dt", "")
             + "const q = document.getElementById('f-q'); q.value = 'script';"
               " q.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}));"),
            ("search 'axis=-1/outs=y,mean'", "const q = document.getElementById('f-q'); q.value = 'axis=-1/outs=Y,Mean';"
                                              " q.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}));"),
            ("reset", "document.getElementById('f-reset').click();"),
            (f"family = {fam}", _set("f-fam", fam) if fam else ""),
            ("expand a family (dtype matrix)", "document.querySelector('#dtype-matrix button.tog').click();"),
            ("expand all (accuracy)", "document.querySelector('#accuracy button.all[data-open=\"1\"]').click();"),
            ("scroll to the middle", "const l = document.getElementById('list'); l.scrollTop = l.scrollHeight / 2;"),
            ("select a row", "document.querySelector('#list .row').click();"),
        ]
        out["steps"] = []
        for name, js in steps:
            r = page.eval(STEP % js)
            out["steps"].append((name, r["ms"], r["filterMs"], r["count"]))
        out["console_errors"] = page.console_errors()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ops", choices=("table", "synthetic"), default="table",
                    help="operators of the cases: the real operator table (default) or synthetic.OPS")
    ap.add_argument("--keep", help="write results.json and report.html into this directory (kept)")
    ap.add_argument("--no-browser", action="store_true", help="skip the Chromium measurements")
    args = ap.parse_args(argv)

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-report-"))
    tmp.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    doc = synthetic_results(args.cases, args.seed, ops="table" if args.ops == "table" else OPS)
    print(f"synthetic document: {args.cases} cases, {len(doc['suite']['ops'])} operators, "
          f"in {time.perf_counter() - t:.2f} s")
    rpath = tmp / "results.json"
    t = time.perf_counter()
    rpath.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    t_write = time.perf_counter() - t
    t = time.perf_counter()
    doc = json.loads(rpath.read_text(encoding="utf-8"))
    print(f"results.json: {rpath.stat().st_size / 1e6:.1f} MB, written in {t_write:.2f} s, read in "
          f"{time.perf_counter() - t:.2f} s")

    t = time.perf_counter()
    html = render_html(doc)
    t_render = time.perf_counter() - t
    hpath = tmp / "report.html"
    hpath.write_text(html, encoding="utf-8")
    size = hpath.stat().st_size
    print(f"render_html: {t_render:.2f} s; report.html {size / 1e6:.2f} MB ({size / args.cases:.0f} bytes/case)")

    if not args.no_browser:
        if missing():
            print(f"chromium: {missing()}; browser figures skipped")
        else:
            m = measure_browser(hpath, doc)
            print(f"chromium: interactive {m['wall_until_ready_s']:.2f} s after navigation "
                  f"(page script done at {m['page_ready_ms'] / 1000:.2f} s on the page clock; "
                  f"first filter {m['first_filter_ms']:.1f} ms); longest main-thread task {m['longest_task_ms']:.0f} ms")
            lay = m["layout"]
            print(f"  page height {lay['height']} px at a {lay['viewport']} px viewport (1280 wide); family summary at "
                  f"{lay['summaryTop']:.0f} px; sections (px, families collapsed): "
                  + ", ".join(f"{k} {v}" for k, v in lay["sections"]))
            for name, ms, fms, count in m["steps"]:
                print(f"  {name:34s} {ms:7.1f} ms to the next frame (filter loop {fms:6.1f} ms)  -> {count}")
            print(f"  console errors: {m['console_errors'] or 'none'}")
    if not args.keep:
        for p in (rpath, hpath):
            p.unlink()
        tmp.rmdir()
    else:
        print(f"kept {rpath} and {hpath}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
