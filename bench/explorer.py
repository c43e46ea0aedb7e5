"""Load and filter times of the offline results explorer in headless Chromium (issue 26). Prints, asserts nothing.

    python bench/explorer.py [results/explorer] [--dataset locomo] [--metric M] [--a bm25] [--b dense]
        [--type QUESTION_TYPE] [--repeat 5]

Load: from navigation to the page's first full render of the dataset's leaderboard (its data script parsed).
Filter: opening the question browser, then the outcome filter ("A finds the evidence, B does not") one system at a
time, each from the event to the next painted frame (the browser lists a filter's first 200 rows at once), after
the question-type filter where --type names one;
show_all: listing every row the filter kept; open: opening the first listed question (its conversation's transcript
script loaded on demand, gold in context and every system's top 10 drawn).
Medians of --repeat fresh page loads, 1280x800.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

# In the page: change a <select> and time until the frame after the re-render has been painted.
TIME_CHANGE = """([id, value]) => new Promise((done) => {
  const start = performance.now();
  const el = document.getElementById(id);
  el.value = value;
  el.dispatchEvent(new Event('change'));
  requestAnimationFrame(() => setTimeout(() => done(performance.now() - start), 0));
})"""
TIME_CLICK = """(id) => new Promise((done) => {
  const start = performance.now();
  document.getElementById(id).click();
  requestAnimationFrame(() => setTimeout(() => done(performance.now() - start), 0));
})"""

# Open the first listed question; time until its transcript script has loaded and its view is painted.
TIME_OPEN = """() => new Promise((done) => {
  const start = performance.now();
  document.querySelector('#qtable tbody button').click();
  const poll = () => document.getElementById('question').dataset.ready === '1'
    ? requestAnimationFrame(() => setTimeout(() => done(performance.now() - start), 0)) : setTimeout(poll, 1);
  poll();
})"""


def measure_once(browser, url: str, a: str, b: str, kind: str = "") -> dict[str, float]:
    """One fresh page: load, open the browser view, filter on the question type (if given), A, then B; ms each."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    page.wait_for_selector("#board-table tbody tr")
    load = page.evaluate("performance.now()")
    browse = page.evaluate(TIME_CLICK, "show-browser")
    filter_type = page.evaluate(TIME_CHANGE, ["f-type", kind]) if kind else 0.0
    filter_a = page.evaluate(TIME_CHANGE, ["f-a", a])
    filter_b = page.evaluate(TIME_CHANGE, ["f-b", b])
    rows = int(page.locator("#count").inner_text().split()[0])
    show_all = page.evaluate(TIME_CLICK, "show-all") if rows > page.locator("#qtable tbody tr").count() else 0.0
    open_question = page.evaluate(TIME_OPEN)
    page.close()
    return {"load_ms": load, "browser_ms": browse, "filter_type_ms": filter_type, "filter_a_ms": filter_a,
            "filter_b_ms": filter_b, "show_all_ms": show_all, "open_ms": open_question, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", default="results/explorer", type=Path)
    ap.add_argument("--dataset", default="locomo")
    ap.add_argument("--metric", default="", help="the outcome filter's metric (default: the page's)")
    ap.add_argument("--a", default="bm25")
    ap.add_argument("--b", default="dense")
    ap.add_argument("--type", default="", help="filter on this question type first (e.g. knowledge_update)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    url = (args.folder / "index.html").resolve().as_uri() + "#" + urlencode(
        {"ds": args.dataset, **({"metric": args.metric} if args.metric else {})})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium)
        runs = [measure_once(browser, url, args.a, args.b, args.type) for _ in range(args.repeat)]
        browser.close()
    print(f"{args.dataset}: {runs[0]['rows']} {args.type + ' ' if args.type else ''}questions where {args.a} "
          f"finds and {args.b} misses; "
          f"medians of {args.repeat} loads (ms):")
    steps = ("load_ms", "browser_ms", *(["filter_type_ms"] if args.type else []), "filter_a_ms", "filter_b_ms",
             "show_all_ms", "open_ms")
    for key in steps:
        values = [r[key] for r in runs]
        print(f"  {key:12s} median {statistics.median(values):8.1f}   max {max(values):8.1f}")


if __name__ == "__main__":
    main()
