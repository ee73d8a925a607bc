"""The live fabric page, in real headless Chromium (Debian's chromium and
chromedriver, driven by Selenium): every node and link of the fabric is
drawn, clicking a service highlights exactly its active path, and a link
taken down turns red. Screenshots are kept in build/artefacts (or
$E3_ARTEFACTS)."""
import os
import shutil
import tempfile

import pytest

from cplib import REPO
from lab.control import ControlPlane, wait_for

ARTEFACTS = os.environ.get("E3_ARTEFACTS", str(REPO / "build" / "artefacts"))
RED_EDGE = "rgb(214,39,40)"   # #d62728, app.js's colour of a link down


@pytest.fixture
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    for b in ("chromium", "chromedriver"):
        if not shutil.which(b):
            pytest.fail(f"{b} is not installed (scripts/deps.sh installs it)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    # The controller's certificate is self-signed; root needs --no-sandbox.
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--ignore-certificate-errors", "--window-size=1400,900"):
        opts.add_argument(a)
    # Chromium leaves its singleton socket's directory in TMPDIR: give it one
    # of the test's own.
    with tempfile.TemporaryDirectory(prefix="e3-chromium-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        drv = webdriver.Chrome(service=Service(shutil.which("chromedriver"), env=env), options=opts)
        try:
            yield drv
        finally:
            drv.quit()


def shot(drv, name):
    os.makedirs(ARTEFACTS, exist_ok=True)
    drv.save_screenshot(os.path.join(ARTEFACTS, f"page-{name}.png"))


def js(drv, expr):
    return drv.execute_script("return " + expr)


def test_fabric_page(services, lab, browser):
    cp = services
    drv = browser
    drv.get(f"{cp.server}/ui/#token={cp.read_token}")
    wait_for("the page following the stream", lambda: js(drv, "window.e3 && e3.streaming && e3.view !== null"))
    assert "token" not in drv.current_url, "the token stays out of the address bar"

    # Every node and link, drawn inside the canvas.
    nodes = sorted(n.name for n in lab.topo.nodes)
    links = sorted(l["id"] for l in cp.json("link", "list"))
    assert sorted(js(drv, "e3.cy.nodes().map(n => n.id())")) == nodes
    assert sorted(js(drv, "e3.cy.edges().map(e => e.data('link'))")) == links
    w, h = js(drv, "[e3.cy.width(), e3.cy.height()]")
    for name, (x, y) in js(drv, "Object.fromEntries(e3.cy.nodes().map(n => [n.id(), "
                                "[n.renderedPosition().x, n.renderedPosition().y]]))").items():
        assert 0 < x < w and 0 < y < h, f"{name} drawn at {x},{y}, outside {w}x{h}"
    wait_for("link rates shown", lambda: all(js(drv, "e3.cy.edges().map(e => e.data('rate') !== '')")))
    shot(drv, "fabric")

    # Clicking red highlights exactly its active path.
    drv.find_element("css selector", "li[data-service='red'] button").click()
    active = sorted(h["link"] for h in ControlPlane.active_path(cp.service("red")))
    wait_for("red's path highlighted", lambda: js(drv, "e3.selected") == "red" and
             sorted(js(drv, "e3.cy.edges('.active').map(e => e.data('link'))")) == active)
    assert js(drv, "e3.cy.edges('.tree').length") == 0
    assert sorted(js(drv, "e3.cy.nodes('.member').map(n => n.id())")) == ["leaf1", "leaf2"]
    assert "leaf1" in drv.find_element("id", "detail-fields").text
    shot(drv, "red")

    # A link taken down turns red on the page.
    first = ControlPlane.active_path(cp.service("red"))[0]
    edge = f"e3.cy.$id('l{first['link']}')"
    lab.link_down(first["from"], first["to"])
    try:
        wait_for("the link drawn down, in red", lambda: js(drv, f"{edge}.hasClass('down')") and
                 js(drv, f"{edge}.style('line-color')").replace(" ", "") == RED_EDGE, timeout=20)
        row = drv.find_element("css selector", f"#links tr[data-link='{first['link']}']")
        assert "down" in row.text
        shot(drv, "link-down")
    finally:
        lab.link_up(first["from"], first["to"])
    wait_for("the link drawn up again", lambda: not js(drv, f"{edge}.hasClass('down')"), timeout=30)
    cp.wait_converged()

    # A drained node is drawn dashed and named in the summary; undrained, it is not.
    cp.e3ctl("node", "drain", "leaf3", "--wait", "60", timeout=90)
    try:
        wait_for("leaf3 drawn drained", lambda: js(drv, "e3.cy.$id('leaf3').hasClass('drained')") and
                 "drained: leaf3" in drv.find_element("id", "summary").text, timeout=20)
        shot(drv, "drained")
    finally:
        cp.e3ctl("node", "undrain", "leaf3", "--wait", "60", timeout=90)
    wait_for("leaf3 drawn in service", lambda: not js(drv, "e3.cy.$id('leaf3').hasClass('drained')"), timeout=20)


def test_page_without_a_token_asks_for_one(cp, browser):
    drv = browser
    drv.get(f"{cp.server}/ui/")
    wait_for("the login form", lambda: drv.find_element("id", "login").is_displayed())
    drv.find_element("id", "token").send_keys("not-a-token")
    drv.find_element("css selector", "#login button").click()
    wait_for("the token refused", lambda: "refused" in drv.find_element("id", "login-error").text)
    assert not drv.find_element("id", "app").is_displayed()
