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
def quick_report(tmp_path_factory) -> Path:
    from cnsim.cli import main

    out = tmp_path_factory.mktemp("reproduce") / "baseline"
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "baseline", "--quick", "--out", str(out), "--quiet"])
    assert exc.value.code in (None, 0)
    return out / "report.html"


def test_list_names_the_studies(cli):
    r = cli("reproduce", "--list")
    assert r.code == 0
    assert "baseline" in r.out


def test_unknown_study_is_a_clear_error(cli, tmp_path):
    r = cli("reproduce", "baselin", "--out", tmp_path / "x")
    assert r.code == 2
    assert r.err.startswith("error: unknown study 'baselin'; known studies: baseline, cn_sim_baseline, e2cm, hotspot_degree")
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
        height = driver.execute_script("return document.body.scrollHeight")
        assert height > 2000, "the page lays out its sections"
        driver.set_window_size(1200, min(height + 100, 16000))
        TEST_OUTPUT.mkdir(parents=True, exist_ok=True)
        shot = TEST_OUTPUT / "reproduce-baseline-quick.png"
        assert driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 50_000
    finally:
        driver.quit()


def _reproduce_quick(tmp_path, study: str) -> str:
    from cnsim.cli import main

    out = tmp_path / study
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", study, "--quick", "--out", str(out), "--quiet"])
    assert exc.value.code in (None, 0)
    return (out / "report.html").read_text(encoding="utf-8")


def test_cn_sim_baseline_report_has_per_seed_fairness_and_best_and_worst_seeds(tmp_path):
    text = _reproduce_quick(tmp_path, "cn_sim_baseline")
    for variant in ("bcn", "bcn00", "pause", "pause_bcn00"):
        assert f"{variant}: best and worst seed" in text
    assert "Fairness per seed" in text and "Jain's index min / mean (95% CI) / max" in text
    # Two quick seeds per variant, each with its rates over the window.
    per_seed = text.split("Fairness per seed", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>\s*<td>(bcn|bcn00|pause|pause_bcn00)</td>\s*<td>([12])</td>", per_seed)
    assert len(rows) == 8


def test_hotspot_degree_report_sweeps_topology_and_degree(tmp_path):
    text = _reproduce_quick(tmp_path, "hotspot_degree")
    assert "Time to stability and innocent throughput vs hotspot degree" in text
    # Quick points: topology A at degree 2 and 10, B at 20, each with and without PAUSE.
    for point in ("A02-bcn", "A10-pause", "B20-bcn"):
        assert point in text
    assert "is per_edge = 1, B is 5, C is 10" in text  # the scenario's reconstruction notes
    assert re.search(r"scenario hash <code>[0-9a-f]{64}</code>", text)


def test_e2cm_report_compares_schemes_flow_control_and_loop_delay(tmp_path):
    text = _reproduce_quick(tmp_path, "e2cm")
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
