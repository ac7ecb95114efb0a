"""A real JupyterLab and a headless chromium for the end-to-end widget tests.

One JupyterLab server for the session, on 127.0.0.1 with a random token and fresh settings,
workspace, data and runtime directories in a temporary folder; the notebooks it serves are
copies, so no repository file is touched. Chromium is the system's (``apt-get install
chromium``), driven by playwright; ``playwright install`` is never needed. Everything
started here is stopped here, by process id.

Run:  python -m pytest tests/browser/test_widgets_in_jupyterlab.py -p no:cacheprovider
      or .ci/browser, which installs chromium and playwright first.
Screenshots go to $BROWSER_ARTIFACTS, or a new temporary folder; the run prints where.
With BROWSER_TESTS_REQUIRED=1 a missing chromium or playwright fails instead of skipping.
With BROWSER_BREAK_WIDGETS=1 the server runs without its widget manager, as if the widgets'
JupyterLab extension were missing: the explorer tests must then fail (a demonstration).
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# No news pop-up, no update check: nothing reaches the network, nothing covers the page.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}
}
SERVER_START_TIMEOUT = 90  # seconds; about 6 s on an idle two-core machine
# Talks to the local server directly, even when http_proxy is set without a no_proxy.
LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _unavailable(reason: str):
    """Skip with the reason, or fail when the browser tests were asked for."""
    if os.environ.get("BROWSER_TESTS_REQUIRED") == "1":
        pytest.fail(f"browser tests required but {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


ARTIFACTS = pytest.StashKey[Path]()


@pytest.fixture(scope="session")
def artifacts(request) -> Path:
    """Where screenshots go: $BROWSER_ARTIFACTS or a new temporary folder."""
    folder = os.environ.get("BROWSER_ARTIFACTS") or tempfile.mkdtemp(prefix="browser-artifacts-")
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    request.config.stash[ARTIFACTS] = folder
    print(f"\nbrowser screenshots: {folder}")
    return folder


def pytest_terminal_summary(terminalreporter, config):
    folder = config.stash.get(ARTIFACTS, None)
    if folder is not None:
        terminalreporter.write_line(f"browser screenshots: {folder}")


class JupyterLab:
    """A JupyterLab server in its own process group, serving ``root``."""

    def __init__(self, scratch: Path):
        self.root, self.token = scratch / "notebooks", secrets.token_hex(16)
        self.log = scratch / "jupyterlab.log"
        dirs = {
            name: scratch / name for name in ("config", "data", "runtime", "settings", "workspaces")
        }
        for folder in (self.root, *dirs.values()):
            folder.mkdir()
        for name, values in USER_SETTINGS.items():
            path = dirs["settings"] / f"{name}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        if os.environ.get("BROWSER_BREAK_WIDGETS") == "1":
            disabled = {"disabledExtensions": {"@jupyter-widgets/jupyterlab-manager": True}}
            (dirs["config"] / "labconfig").mkdir()
            (dirs["config"] / "labconfig" / "page_config.json").write_text(json.dumps(disabled))
        with socket.socket() as probe:  # a free port; the tiny race is harmless on a test box
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(
            os.environ,
            JUPYTER_CONFIG_DIR=str(dirs["config"]),
            JUPYTER_DATA_DIR=str(dirs["data"]),
            JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
            JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
            JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        )
        self.process = None

    def start(self) -> None:
        command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root"]
        command += [f"--port={self.port}", "--ServerApp.ip=127.0.0.1"]
        command += [f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={self.root}"]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited at start; see {self.log}")
            try:
                self.api("status")
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_TIMEOUT} s; {self.log}")

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(
            f"{self.url}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with LOCAL.open(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Stop every kernel (one per notebook opened), so the next test has the CPU."""
        for kernel in self.api("kernels"):
            self.api(f"kernels/{kernel['id']}", method="DELETE")

    def stop(self) -> None:
        """Stop the server; then any kernel it left, each by its own process id."""
        if self.process is None or self.process.poll() is not None:
            return
        try:  # kernels run in sessions of their own: note them before the server goes
            children = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            children = []
        os.killpg(self.process.pid, signal.SIGTERM)  # the server shuts its kernels down
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        _, alive = psutil.wait_procs(children, timeout=10)
        for child in alive:
            child.kill()


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory):
    server = JupyterLab(tmp_path_factory.mktemp("jupyterlab"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no chromium at {CHROMIUM} (apt-get install chromium, or run .ci/browser)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is missing (pip install -r requirements-browser.txt)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, jupyterlab):
    """A fresh browser tab (own storage), closed with its notebook's kernel after the test."""
    # tall enough that the whole positional-encoding explorer fits on screen
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()
        jupyterlab.shutdown_kernels()
