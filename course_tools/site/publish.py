"""All or nothing: a site is built in a folder beside its destination and swapped in whole.

A build that fails (a lesson that does not run, an interrupted build) leaves the previous
site as it was, or no site at all, never a mix of old and new pages.
"""

import os
import re
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

SITE_NAMES = re.compile(r"index\.html|\d\d_[\w-]+\.html|_static")


def check_replaceable(out: Path) -> None:
    """Refuse an ``out`` that holds anything a site build did not make."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ValueError(f"out must be a folder for the site; {out} is a file")
    foreign = sorted(p.name for p in out.iterdir() if not SITE_NAMES.fullmatch(p.name))
    if foreign:
        raise ValueError(
            f"out {out} holds files that are not part of a site ({', '.join(foreign[:5])}); "
            "the build replaces the whole folder: choose an empty or new one"
        )


@contextmanager
def staging(out: Path):
    """A new folder beside ``out`` to build into; removed on leaving unless :func:`swap`-ped."""
    out = Path(out)
    check_replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{out.name}-building-", dir=out.parent))
    try:
        yield folder
    finally:
        if folder.exists():
            shutil.rmtree(folder)


def swap(folder: Path, out: Path) -> None:
    """Put the finished ``folder`` in the place of ``out`` (the old site is removed)."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)  # mkdtemp's folder is private; a site is not
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}-old-{uuid.uuid4().hex[:8]}")
        out.rename(old)
    try:
        folder.rename(out)
    except OSError:
        if old is not None:
            old.rename(out)  # put the previous site back
        raise
    if old is not None:
        shutil.rmtree(old)
