"""`cnsim reproduce`: study registry, the sweep behind it and report.html,
rendered in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT

#: Screenshots land here so a person can look at them after `make test`.
TEST_OUTPUT = Path(os.environ.get("CNSIM_TEST_OUTPUT", ROOT / "test-output"))


@pytest.fixture(scope="module")
def quick_report(quick_reproduction) -> Path:
    return quick_reproduction("baseline") / "report.html"


def test_list_names_the_studies(cli):
    r = cli("reproduce", "--list")
    assert r.code == 0
    assert "baseline" in r.out


def test_unknown_study_is_a_clear_error(cli, tmp_path):
    r = cli("reproduce", "baselin", "--out", tmp_path / "x")
    assert r.code == 2
    assert r.err.startswith("error: unknown study 'baselin'; known studies: baseline, cc_compare, cn_sim_baseline, e2cm, fct_fabric, hotspot_degree")
    assert "Traceback" not in r.err
    assert not (tmp_path / "x").exists()


def test_report_is_self_contained_and_complete(quick_report):
    text = quick_report.read_text(encoding="utf-8")
    # Every image is embedded; nothing is fetched from elsewhere.
    sources = re.findall(r"""src=['"]([^'"]+)""", text)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert not re.search(r"""href=['"]https?:""", text)
    # Published value beside ours, the reconstruction, provenance.
    assert "59,382" in text
    assert "Quick run" in text
    assert "Reconstruction and assumptions" in text and "culprits C1..C4" in text
    assert "cnsim reproduce baseline --quick" in text
    assert re.search(r"scenario hash <code>[0-9a-f]{64}</code>", text)
    for view in ("Congested link throughput", "Innocent flow throughput", "Core congested-port occupancy",
                 "Edge-switch output occupancy", "Frames dropped per variant"):
        assert view in text


def _chromium_driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if not (browser and driver_path):
        if os.environ.get("CNSIM_SKIP_BROWSER") == "1":
            pytest.skip("CNSIM_SKIP_BROWSER=1 and no chromium/chromedriver")
        pytest.fail("chromium and chromedriver are needed (make test installs Debian's chromium and chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--window-size=1200,900"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)


def test_report_renders_in_headless_chromium(quick_report):
    from selenium.webdriver.common.by import By

    driver = _chromium_driver()
    try:
        driver.get(quick_report.as_uri())
        assert "Study A" in driver.title
        images = driver.find_elements(By.TAG_NAME, "img")
        assert len(images) >= 5
        for img in images:
            loaded = driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img)
            assert loaded, img.get_attribute("alt")
            assert img.size["width"] > 300, "figures are drawn at a readable size"
        tables = driver.find_elements(By.TAG_NAME, "table")
        assert len(tables) >= 3
        metrics = tables[0].text
        assert "Frames dropped" in metrics and "59,382" in metrics
        # At this width every table fits the page's column as it is.
        assert _overflowing_tables(driver) == {"page": [], "tables": []}
        height = driver.execute_script("return document.body.scrollHeight")
        assert height > 2000, "the page lays out its sections"
        driver.set_window_size(1200, min(height + 100, 16000))
        TEST_OUTPUT.mkdir(parents=True, exist_ok=True)
        shot = TEST_OUTPUT / "reproduce-baseline-quick.png"
        assert driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 50_000
        # In a narrow window too, no table makes the page wider: what does not fit scrolls in its own box.
        driver.set_window_size(600, 900)
        assert _overflowing_tables(driver)["page"] == []
    finally:
        driver.quit()


def _overflowing_tables(driver) -> dict[str, list]:
    """Tables whose box (the scrolling one around a table, if any) reaches past the page's
    column ("page"), and tables wider than the column ("tables")."""
    return driver.execute_script("""
        const style = getComputedStyle(document.body);
        const body = document.body.getBoundingClientRect();
        const left = body.left + parseFloat(style.paddingLeft) - 1;
        const right = body.right - parseFloat(style.paddingRight) + 1;
        const out = {page: [], tables: []};
        if (document.documentElement.scrollWidth > document.documentElement.clientWidth)
            out.page.push("the page scrolls sideways");
        for (const table of document.querySelectorAll("table")) {
            const box = (table.parentElement.matches(".table") ? table.parentElement : table).getBoundingClientRect();
            const own = table.getBoundingClientRect();
            const name = table.className + " " + table.rows[0].textContent.trim().slice(0, 40);
            if (box.left < left || box.right > right) out.page.push(name);
            if (own.left < left || own.right > right) out.tables.push(name);
        }
        return out;""")


def test_cn_sim_baseline_report_has_per_seed_fairness_and_best_and_worst_seeds(quick_reproduction):
    text = (quick_reproduction("cn_sim_baseline") / "report.html").read_text(encoding="utf-8")
    for variant in ("bcn", "bcn00", "pause", "pause_bcn00"):
        assert f"{variant}: best and worst seed" in text
    assert "Fairness per seed" in text and "Jain's index min / mean (95% CI) / max" in text
    # Two quick seeds per variant, each with its rates over the window.
    per_seed = text.split("Fairness per seed", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>\s*<td>(bcn|bcn00|pause|pause_bcn00)</td>\s*<td>([12])</td>", per_seed)
    assert len(rows) == 8


def test_hotspot_degree_report_sweeps_topology_and_degree(quick_reproduction):
    text = (quick_reproduction("hotspot_degree") / "report.html").read_text(encoding="utf-8")
    assert "Time to stability and innocent throughput vs hotspot degree" in text
    # Quick points: topology A at degree 2 and 10, B at 20, each with and without PAUSE.
    for point in ("A02-bcn", "A10-pause", "B20-bcn"):
        assert point in text
    assert "is per_edge = 1, B is 5, C is 10" in text  # the scenario's reconstruction notes
    assert re.search(r"scenario hash <code>[0-9a-f]{64}</code>", text)


def test_e2cm_report_compares_schemes_flow_control_and_loop_delay(quick_reproduction):
    text = (quick_reproduction("e2cm") / "report.html").read_text(encoding="utf-8")
    assert "Switch frame drops per variant" in text and "Switch drops against the loop delay" in text
    # Quick points: three schemes, with and without PAUSE, at 0 and 500 us.
    for point in ("ecm-pause-rtt000", "e2cm-src-drop-rtt500", "e2cm-dst-pause-rtt500"):
        assert point in text
    drops = text.split("Switch frame drops per variant", 1)[1].split("</table>", 1)[0]
    # With PAUSE no scheme drops a frame, at either loop delay.
    pause_rows = re.findall(r"<td>(ecm|e2cm-src|e2cm-dst)</td>\s*<td>pause</td>\s*<td>([0-9,]+)</td>\s*<td>([0-9,]+)</td>",
                            drops)
    assert len(pause_rows) == 3 and all(a == b == "0" for _, a, b in pause_rows)
    assert "1500 KB - RTT x 10 Gb/s" in text  # the scenario's reconstruction notes


# --------------------------------------------------------------------------- figures, numbers, notes


@pytest.mark.parametrize("study", ["baseline", "cn_sim_baseline", "hotspot_degree", "e2cm", "qcn_tcp"])
def test_every_study_figure_has_one_title_and_keeps_its_texts_inside(quick_reproduction, study):
    import matplotlib.pyplot as plt
    from conftest import texts_outside

    from cnsim import report, studies
    from cnsim.sweep import load_sweep

    out = quick_reproduction(study)
    summary = load_sweep(out)
    runs = report._load_runs(summary, out, list(dict.fromkeys(summary.sort_values("point_id")["variant"])))
    figures = report.report_figures(studies.get(study), runs)
    assert figures
    for caption, fig in figures:
        assert texts_outside(fig) == [], caption
        # The page's caption is the figure's title: the figure carries none of its own.
        assert fig._suptitle is None or not fig._suptitle.get_text(), caption
        plt.close(fig)
    text = (out / "report.html").read_text(encoding="utf-8")
    assert text.count("<figcaption>") == len(figures)


def test_a_quick_report_states_no_difference_from_the_published_numbers(quick_report):
    text = quick_report.read_text(encoding="utf-8")
    metrics = text.split("Published and ours", 1)[1].split("</table>", 1)[0]
    assert "quick run: not comparable" in metrics
    assert "-40,578" not in text and "%)" not in metrics
    # The shortened run's drops are not set against the deck's 100 ms either.
    assert "in 30 ms, not comparable with the deck&#39;s 100 ms" in text


def test_the_metrics_give_the_mean_its_interval_and_the_difference():
    from dataclasses import replace
    from types import SimpleNamespace

    from cnsim import report, studies
    from cnsim.studies import Metric

    spec = replace(studies.get("baseline"), metrics=(
        Metric("Frames dropped", "no_cm", lambda r: r.drops, published=1_000),
        Metric("Frames dropped", "bcn", lambda r: r.drops, published=1_000),
    ))
    runs = {"no_cm": [SimpleNamespace(drops=d) for d in (900, 1000, 1100)], "bcn": [SimpleNamespace(drops=400)]}
    close, far = report.metric_rows(spec, runs, quick=False)
    # Mean 1,000, s = 100, n = 3: t(0.975, 2) x 100 / sqrt(3) = 248.
    assert (close["ours"], close["range"]) == ("1,000 ± 248", "900 – 1,100, 3 seeds")
    assert close["difference"] == "0 (+0.0%), within the 95% CI"
    assert (far["ours"], far["range"], far["difference"]) == ("400", "", "-600 (-60.0%)")
    quick = report.metric_rows(spec, runs, quick=True)
    assert [r["difference"] for r in quick] == ["quick run: not comparable"] * 2


def test_notes_that_every_variant_shares_are_shown_once(quick_report):
    text = quick_report.read_text(encoding="utf-8")
    notes = text.split("Reconstruction and assumptions", 1)[1].split("<h2>", 1)[0]
    assert notes.count("culprits C1..C4 each on their own edge switch") == 1
    assert "Common to every variant" in notes
    for variant in ("no_cm", "pause", "bcn", "bcn_pause"):
        assert f"variant `{variant}`" in notes  # what each file says of itself stays


def test_notes_group_variants_with_the_same_text(tmp_path):
    from cnsim import report

    shared = "# Shared line one\n# Shared line two\n# Shared line three\n"
    files = {}
    for name, own in (("a", "# Only a.\n#\n"), ("b", "# b and c.\n#\n"), ("c", "# b and c.\n#\n")):
        files[name] = tmp_path / f"{name}.toml"
        files[name].write_text(own + shared + "name = 'x'\n", encoding="utf-8")
    common, groups = report.reconstruction_notes({k: str(v) for k, v in files.items()})
    assert common == "Shared line one\nShared line two\nShared line three"
    assert [([n for n, _ in names], text) for names, text in groups] == [(["a"], "Only a."), (["b", "c"], "b and c.")]


def test_the_report_template_is_package_data():
    from importlib import resources

    assert (resources.files("cnsim") / "templates" / "report.html").is_file()
