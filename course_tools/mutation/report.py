"""The run's figures as a table, ``report.md`` and ``results.json``, and the lists to act on.

Per exercise and overall: how many variants, how many broke or timed out before reaching
the check, how many were equivalent to the model answer or allow-listed, and of the rest
(``checked``) the share the check rejected and, among the rejections that are not crashes,
the share whose message names the mistake. The lists are what someone has to look at: wrong
variants the check accepts, right ones it rejects, wrong ones it calls "not done", and stale
allow-list entries.
"""

import json
from collections import defaultdict
from pathlib import Path

from .outcomes import ACCEPTED, CRASHED, GOALS, NOT_DONE, REACHED, REJECTED, figures, measured

COLUMNS = [
    ("exercise", "exercise"),
    ("variants", "variants"),
    ("broken", "broken"),
    ("timeout", "timeout"),
    ("equivalent", "equiv"),
    ("allowed", "allowed"),
    ("checked", "checked"),
    ("rejected", "rejected"),
    ("crashed", "crashed"),
    ("not_done", "not done"),
    ("accepted", "accepted"),
    ("rejected_share", "rejected %"),
    ("named_share", "named %"),
    ("diagnoses", "diagnoses of the rejections"),
]


def by_exercise(variants: list[dict]) -> dict[str, dict]:
    """The figures of each exercise, in lesson order."""
    groups = defaultdict(list)
    for v in variants:
        groups[v["exercise"]].append(v)
    order = sorted(groups, key=lambda e: tuple(int(p) for p in e.split(".")))
    return {e: figures(groups[e]) for e in order}


def _cell(key: str, value) -> str:
    if key.endswith("_share"):
        return "—" if value is None else f"{100 * value:.1f}%"
    if key == "diagnoses":
        return ", ".join(f"{k} {n}" for k, n in value.items()) or "—"
    return str(value)


def _rows(per_exercise: dict[str, dict], overall: dict) -> list[list[str]]:
    rows = [[e] + [_cell(k, f[k]) for k, _ in COLUMNS[1:]] for e, f in per_exercise.items()]
    rows.append(["overall"] + [_cell(k, overall[k]) for k, _ in COLUMNS[1:]])
    return rows


def table(per_exercise: dict[str, dict], overall: dict) -> str:
    """A fixed-width table for the terminal, the overall figures last."""
    rows = [[title for _, title in COLUMNS], *_rows(per_exercise, overall)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS) - 1)]
    lines = []
    for n, row in enumerate(rows):
        pairs = enumerate(zip(row[:-1], widths, strict=True))
        cells = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in pairs]
        lines.append("  ".join([*cells, row[-1]]))
        if n in (0, len(rows) - 2):
            lines.append("-" * len(lines[-1]))
    return "\n".join(lines)


def goals(overall: dict) -> str:
    """The overall shares: rejected beside its goal, named as a figure (a gauge: no mistake
    enters a catalogue only to be named here)."""
    share, named = overall["rejected_share"], overall["named_share"]
    met = share is not None and share >= GOALS["rejected"]
    shown = "—" if share is None else f"{100 * share:.1f}%"
    parts = [f"rejected {shown} (goal ≥ {100 * GOALS['rejected']:.0f}% {'✓' if met else '✗'})"]
    parts.append("named —" if named is None else f"named {100 * named:.1f}% of the rejections")
    everything = overall.get("rejected_share_all")
    if everything is not None and overall.get("allowed"):
        parts.append(
            f"rejected {100 * everything:.1f}% if the {overall['allowed']} allow-listed "
            "variants count as accepted"
        )
    return "; ".join(parts)


def markdown_table(per_exercise: dict[str, dict], overall: dict) -> str:
    head = "| " + " | ".join(title for _, title in COLUMNS) + " |"
    rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS) - 1)) + "|---|"
    rows = _rows(per_exercise, overall)
    rows[-1] = [f"**{c}**" for c in rows[-1]]
    return "\n".join([head, rule, *("| " + " | ".join(r) + " |" for r in rows)])


# The lists to act on ---------------------------------------------------------------------------


def survivors(variants: list[dict]) -> list[dict]:
    """Accepted variants that are not equivalent to the model answer and not allow-listed."""
    return [v for v in variants if _survivor(v) and not v.get("allowed")]


def false_rejections(variants: list[dict]) -> list[dict]:
    """Variants equivalent to the model answer that the check rejects, not allow-listed: a
    check refusing right code is worse than one missing a mistake."""
    equivalent = [v for v in variants if v["status"] in REACHED and v["equivalent"] is True]
    return [v for v in _rejected(equivalent) if not v.get("allowed")]


def _survivor(v: dict) -> bool:
    return v["status"] == ACCEPTED and measured(v)


def sections(variants: list[dict], stale: list, problems: list[str]) -> list[tuple[str, list]]:
    """(title, items) for each list the report shows; items are variants, or strings."""
    equivalent = [v for v in variants if v["status"] in REACHED and v["equivalent"] is True]
    return [
        ("Problems running the lessons", problems),
        ("Accepted, not equivalent to the model answer", survivors(variants)),
        ("Rejected although equivalent to the model answer", false_rejections(variants)),
        ("Wrong variants the check calls “not done”", _with(variants, NOT_DONE, measured)),
        ("Stale allow-list entries (they match no variant)", [_entry(e) for e in stale]),
        ("Accepted and allow-listed", [v for v in variants if _survivor(v) and v.get("allowed")]),
        ("Equivalent and accepted (for information)", _with(equivalent, ACCEPTED)),
        ("Harness errors", [v for v in variants if v["status"] == "error"]),
    ]


def _rejected(variants):
    return [v for v in variants if v["status"] in (REJECTED, CRASHED)]


def _with(variants, status, condition=lambda v: True):
    return [v for v in variants if v["status"] == status and condition(v)]


def _entry(e) -> str:
    return f"{e.exercise}: {e.variant} (reason given: {e.reason})"


def describe(v: dict) -> str:
    """A variant as the report lists it: id, diff, and what the check said."""
    lines = [f"{v['exercise']} · {v['id']}", *(f"    {d}" for d in v["diff"].splitlines())]
    if v["status"] in REACHED:
        diagnosis = f" [{v['diagnosis']}]" if v.get("diagnosis") else ""
        lines.append(f"    check ({v['status']}{diagnosis}): {v['message']}")
    elif v["message"]:
        lines.append(f"    {v['status']}: {v['message']}")
    return "\n".join(lines)


def _items(items: list) -> list[str]:
    return [describe(i) if isinstance(i, dict) else i for i in items]


def printed_sections(variants, stale, problems, limit_info: int = 20) -> str:
    """The lists for the terminal: everything to act on, the informative ones shortened."""
    out = []
    for title, items in sections(variants, stale, problems):
        if not items:
            continue
        shown = items if "information" not in title else items[:limit_info]
        more = len(items) - len(shown)
        out.append(f"\n{title} ({len(items)}):")
        out += [f"  {line}" for text in _items(shown) for line in text.splitlines()]
        out += [f"  ... and {more} more in report.md"] if more else []
    return "\n".join(out)


def write(out: Path, header: str, variants, stale, problems, meta: dict) -> tuple[str, str]:
    """Write ``report.md`` and ``results.json`` under ``out``; (table, goals) for printing."""
    per_exercise = by_exercise(variants)
    overall = figures(variants)
    out.mkdir(parents=True, exist_ok=True)
    text = [f"# Mutation run of the exercise checks\n\n{header}\n", goals(overall) + "\n"]
    text.append(markdown_table(per_exercise, overall) + "\n")
    for title, items in sections(variants, stale, problems):
        text.append(f"## {title} ({len(items)})\n")
        text += [f"```\n{i}\n```\n" for i in _items(items)] or ["None.\n"]
    (out / "report.md").write_text("\n".join(text), encoding="utf-8")
    results = {
        **meta,
        "overall": overall,
        "exercises": per_exercise,
        "stale": [vars(e) for e in stale],
        "problems": problems,
        "variants": variants,
    }
    (out / "results.json").write_text(
        json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    return table(per_exercise, overall), goals(overall)
