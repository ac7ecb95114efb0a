"""The scripts the offline pages load, installed with npm and copied next to the pages.

nbconvert's HTML pages fetch the widget renderer, require.js and MathJax from CDNs. Here
the pinned npm packages of ``package.json`` (exact versions in ``package-lock.json``) are
installed once into a build folder, and the few files the pages need are copied into
``_static/`` beside them, so a page opened from disk needs no network at all. The course's
own stylesheet and explorer script (``course.css``, ``explorers.js``) go there too.
"""

import json
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).parent
STATIC = "_static"  # the folder beside the pages, and the relative URL the pages use
FONT_SUFFIXES = (".woff2", ".woff", ".ttf", ".eot", ".svg")
HTML_MANAGER = "node_modules/@jupyter-widgets/html-manager"

# The course's own files, copied from this folder into _static/ under the same names.
STYLESHEET = "course.css"  # layout, contrast and the static explorers' look
EXPLORERS_JS = "explorers.js"  # swaps the static explorers' pictures
OWN_FILES = (STYLESHEET, EXPLORERS_JS)

# The packages only a page that still shows a widget needs.
WIDGET_PACKAGES = ("@jupyter-widgets/html-manager", "requirejs")

# What the pages load: (file in the npm folder, where it goes under _static/).
SCRIPTS = {
    "widgets": (f"{HTML_MANAGER}/dist/embed-amd.js", "widgets/embed-amd.js"),
    "require": ("node_modules/requirejs/require.js", "require.js"),
    "mathjax": ("node_modules/mathjax/es5/tex-svg-full.js", "mathjax/tex-svg-full.js"),
}


def pinned_versions(package_dir: Path = HERE) -> dict[str, str]:
    """The exact version of each npm package the pages load, from package.json."""
    return json.loads((package_dir / "package.json").read_text(encoding="utf-8"))["dependencies"]


def _installed(npm_dir: Path, package_dir: Path) -> bool:
    """Whether ``npm_dir`` already holds an install of this exact lock file."""
    lock, done = npm_dir / "package-lock.json", npm_dir / "node_modules" / ".package-lock.json"
    wanted = (package_dir / "package-lock.json").read_text(encoding="utf-8")
    return done.is_file() and lock.is_file() and lock.read_text(encoding="utf-8") == wanted


def install(npm_dir: Path, package_dir: Path = HERE) -> Path:
    """Install the pinned packages into ``npm_dir`` (skipped when that lock is installed)."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "npm was not found: install Node.js and npm (Debian/Ubuntu: apt-get install nodejs npm)"
        )
    npm_dir.mkdir(parents=True, exist_ok=True)
    if _installed(npm_dir, package_dir):
        return npm_dir
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(package_dir / name, npm_dir / name)
    # --ignore-scripts: only prebuilt files are used, nothing needs to run at install time.
    command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(npm_dir)]
    try:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    except subprocess.CalledProcessError as error:
        raise RuntimeError(
            f"npm could not install the site's scripts into {npm_dir} (exit code "
            f"{error.returncode}; the first install needs the npm registry)"
        ) from error
    return npm_dir


def files_to_copy(npm_dir: Path, widgets: bool = True) -> dict[Path, str]:
    """Every file the pages need: {source in npm_dir: destination relative to _static/}.

    ``widgets`` False: no page shows a widget, so the widget renderer and require.js stay out.
    """
    chosen = SCRIPTS if widgets else {"mathjax": SCRIPTS["mathjax"]}
    files = {npm_dir / source: target for source, target in chosen.values()}
    # The widget styles point at icon fonts relative to the renderer's own folder.
    fonts = sorted((npm_dir / HTML_MANAGER / "dist").iterdir()) if widgets else []
    for font in fonts:
        if font.suffix in FONT_SUFFIXES:
            files[font] = f"widgets/{font.name}"
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"npm_dir {npm_dir} lacks {', '.join(missing)}: reinstall it")
    return files


def notice(npm_dir: Path, package_dir: Path = HERE, widgets: bool = True) -> str:
    """Which packages the copied files come from, with their versions and licences."""
    lines = ["The scripts in this folder come from these npm packages:", ""]
    for name in pinned_versions(package_dir):
        if name in WIDGET_PACKAGES and not widgets:
            continue
        meta = json.loads((npm_dir / "node_modules" / name / "package.json").read_text("utf-8"))
        lines.append(f"{name} {meta['version']} (licence: {meta.get('license', 'see package')})")
    return "\n".join(lines) + "\n"


def copy_static(npm_dir: Path, site: Path, widgets: bool = True) -> Path:
    """Copy what the pages load into ``site/_static``; returns that folder.

    ``widgets`` False leaves out the widget renderer and require.js (see :func:`files_to_copy`).
    """
    static = site / STATIC
    for source, target in files_to_copy(npm_dir, widgets).items():
        (static / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, static / target)
    for name in OWN_FILES:
        shutil.copy2(HERE / name, static / name)
    (static / "NOTICE.txt").write_text(notice(npm_dir, widgets=widgets), encoding="utf-8")
    return static


def exporter_urls(static: str = STATIC) -> dict[str, str]:
    """HTMLExporter settings that load every script from ``static`` (a relative URL)."""
    if static.startswith(("http:", "https:", "//")):
        raise ValueError(f"static must be a relative URL for offline pages, got {static!r}")
    return {
        "widget_renderer_url": f"{static}/{SCRIPTS['widgets'][1]}",
        "require_js_url": f"{static}/{SCRIPTS['require'][1]}",
        "mathjax_url": f"{static}/{SCRIPTS['mathjax'][1]}",
    }


def widget_assets_url(static: str = STATIC) -> str:
    """Where the widget renderer finds its icon fonts (its webpack public path)."""
    return f"{static}/widgets/"
