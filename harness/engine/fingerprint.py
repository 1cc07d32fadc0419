"""A task's code fingerprint: the package version and a hash of the sources that make its rows
(harness/ and the study's own paper package), so that a resumed sweep never reuses rows made by
other code while editing one paper leaves every other paper's finished tasks valid. Used by the
sweep (task identities, manifests) and by the dask executor (every worker must run the same
code as the sweep's process).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]


# Modules that read, store or schedule rows but never compute them: editing them must not
# invalidate stored results (a change of the stored format is caught by the stamps, store.py).
# Entries ending in ".py" without a folder are file names inside a paper package.
_NOT_ROW_MAKING = (
    "harness/cli.py", "harness/outputs.py", "harness/claims.py", "harness/plotting/",
    "harness/metrics/",
    "harness/engine/aggregate.py", "harness/engine/bench.py", "harness/engine/check.py",
    "harness/engine/executor.py", "harness/engine/fingerprint.py", "harness/engine/store.py",
    "harness/engine/sweep.py",
    "harness/multirun.py", "harness/plugins.py", "harness/paper.py",
    "harness/report.py", "/report.md", "harness/benchmark/command.py",
    "harness/benchmark/leaderboard.py", "harness/benchmark/report.py",
    "/paper.py", "/claims.py", "/tables.py", "/figures.py", "/paper_numbers.py",
    # a computation that times whole sweeps of a study (it runs them; it makes none of their
    # rows): S4's solver bench, written while S4's extended sweep was being resumed
    "/solver_bench.py",
)


@functools.cache
def code_version(study_module: str | None = None) -> str:
    """Package version plus a hash of the sources that make rows: harness/ and the code of the
    study ``study_module`` (:func:`source_roots`), so that editing one paper never invalidates
    another paper's finished tasks, while rows made by other code are never reused by a resumed
    sweep. Without a module: harness/ and all of experiments/ (what a worker must share)."""
    return _source_hash(study_module, row_making_only=True)


@functools.cache
def aggregation_version(study_module: str | None = None) -> str:
    """A hash of every source file of :func:`source_roots`, row-making or not: cached aggregates
    (metrics.parquet) made by other aggregation code (a changed MCSE formula) are never reused."""
    return _source_hash(study_module, row_making_only=False)


def study_module(config: dict) -> str | None:
    """The module of the config's study (the ``module`` key of its study config)."""
    return config["study"].get("module")


def source_roots(study_module: str | None) -> list[tuple[Path, bool]]:
    """(directory, recursive) pairs whose ``*.py`` files enter a task's fingerprint: harness/,
    then the study's paper package directory (or, for a study without a paper, its module's
    package directory; :func:`harness.paper.code_directory`) and the modules directly in the
    package above it (shared helpers such as ``experiments/common.py``). Without a module:
    harness/ and experiments/."""
    from ..paper import code_directory

    roots = [(_ROOT / "harness", True)]
    if study_module is None:
        return [*roots, (_ROOT / "experiments", True)]
    own = code_directory(study_module)
    if own is None:
        return roots
    roots.append((own, True))
    if (own.parent / "__init__.py").is_file():
        roots.append((own.parent, False))
    return roots


def _source_hash(study_module: str | None, row_making_only: bool) -> str:
    from .. import __version__

    h = hashlib.sha256()
    for root, recursive in source_roots(study_module):
        for path in sorted(root.rglob("*.py") if recursive else root.glob("*.py")):
            rel = path.relative_to(root.parent).as_posix()
            if row_making_only and any(rel.startswith(x) or rel.endswith(x)
                                       for x in _NOT_ROW_MAKING):
                continue
            h.update(rel.encode())
            h.update(path.read_bytes())
    return f"{__version__}+{h.hexdigest()[:12]}"
