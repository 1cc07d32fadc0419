"""Installing a tiny plug-in package for a test, the way an installer leaves one: a module and
its ``.dist-info`` (METADATA, entry_points.txt) in a directory that a subprocess (and so its
worker processes) finds through PYTHONPATH."""

import os
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def install_plugin(root: Path, package: str, entry_points: str, module: str, source: str,
                   group: str = "dips_harness.synthesizers") -> Path:
    """Write ``module``.py and the dist-info of ``package`` declaring ``entry_points`` in
    ``group`` under ``root``; return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{package.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry_points}\n")
    return root


def env_with(path: Path) -> dict[str, str]:
    """This process's environment with ``path`` (then the repository) on PYTHONPATH."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(REPO)])}
