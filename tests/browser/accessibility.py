"""Scan a page with axe-core, the accessibility engine, injected from disk (no network).

axe-core is the npm package pinned in ``tests/browser/axe/``; ``.ci/browser`` installs it
into ``build/npm-axe/``. A scan reports the rule violations of impact "serious" or
"critical" found inside ``include`` (CSS selectors), and names each one with the rule,
the help text, and the first offending elements, so a failure says what to fix.
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(__file__).with_name("axe")
NPM_DIR = Path(os.environ.get("AXE_NPM_DIR", ROOT / "build" / "npm-axe"))
SCRIPT = "node_modules/axe-core/axe.min.js"
BLOCKING = ("serious", "critical")

# Pages that load require.js have an AMD `define`: axe would register itself as an anonymous
# module there and never become `window.axe`. Hide `define` while the script runs.
INJECT = """source => {
    if (window.axe) return;
    const saved = window.define;
    window.define = undefined;
    try { (0, eval)(source); } finally { window.define = saved; }
}"""

RUN = """async ([include, exclude]) => {
    const context = {include: include.map(s => [s])};
    if (exclude.length) context.exclude = exclude.map(s => [s]);
    // No preload: it fetches each stylesheet again, which a file:// page refuses.
    const found = await window.axe.run(context, {resultTypes: ["violations"], preload: false});
    return found.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html.slice(0, 200),
                                  summary: (n.failureSummary || "").slice(0, 300)})),
    }));
}"""


def engine() -> str:
    """axe-core's script, from the npm folder .ci/browser installs."""
    from course_tools.site.assets import install

    install(NPM_DIR, PACKAGE)  # a no-op once this lock file is installed
    return (NPM_DIR / SCRIPT).read_text(encoding="utf-8")


def violations(page, include=("body",), exclude=()) -> list[dict]:
    """The serious and critical violations inside ``include`` (minus ``exclude``) on ``page``."""
    page.evaluate(INJECT, engine())
    found = page.evaluate(RUN, [list(include), list(exclude)])
    return [v for v in found if v["impact"] in BLOCKING]


def report(found: list[dict], where: str, shown: int = 3) -> str:
    """A readable list of violations: rule, impact, help, and up to ``shown`` elements each."""
    lines = [f"{where}: {len(found)} serious or critical accessibility violation(s)"]
    for v in found:
        lines.append(f"- {v['id']} ({v['impact']}, {len(v['nodes'])} element(s)): {v['help']}")
        for node in v["nodes"][:shown]:
            lines.append(f"    {node['target']}: {node['html']}")
            if node["summary"]:
                lines.append(f"      {node['summary']}".replace("\n", " "))
    return "\n".join(lines)
