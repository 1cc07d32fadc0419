"""The data source axis of the Bi & Shen benchmarks R1–R3: each runs on its stand-in or on a
user's copy of the paper's file (``study.data_csv=<file>``, which selects ``study.grid.data=[csv]``
unless the grid lists both sources: :func:`harness.datafiles.select_data_files`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.datafiles import data_path
from harness.errors import ConfigError, allowed

SOURCES = ("standin", "csv")


def source_rule(key: str, value) -> None:
    """The grid rule of the ``data`` axis."""
    if value not in SOURCES:
        raise allowed(key, value, SOURCES)


def data_csv_path(config: dict) -> Path:
    """``study.data_csv``, relative paths read from the working directory."""
    return data_path(config.get("data_csv"), "study.data_csv")


def check_csv_source(config: dict, what: str, read: Callable[[str], object]) -> None:
    """When the grid names the ``csv`` source: ``data_csv`` must name ``what`` (one line), and
    the file is read now by ``read("csv")``, so a bad file is one line and nothing is written."""
    if "csv" not in list(config["grid"]["data"]):
        return
    if not config.get("data_csv"):
        raise ConfigError(f"study.data_csv: data 'csv' needs the path of {what}")
    read("csv")
