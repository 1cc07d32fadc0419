"""Users' data files: where a data path points and whether the file can be read.

Every study that reads a file (a population frame, a user's copy of a paper's data) resolves its
path and reads its text or table here, so the same bad files fail the same way for every study,
as one line naming the config key and the file, before any task runs:

* a relative path is read from the working directory (as every shell tool reads it); a study's
  shipped default file is given as ``null`` in its config and found inside the package;
* a missing path, a directory, an unreadable, empty or binary (not text) file, a CSV that the
  tokenizer cannot split, or a CSV with a header and no data rows (a ``.gz``, ``.bz2``,
  ``.zip``, ``.xz`` or ``.zst`` file is decompressed by pandas, as before).

What the rows must hold (levels, bounds, weights) is checked by the caller
(:func:`harness.schema.load_csv` or the study's own loader).
"""

from __future__ import annotations

from pathlib import Path

from .errors import ConfigError

#: bytes read to decide whether a file is text (a NUL byte or invalid UTF-8 means it is not)
SNIFF_BYTES = 1 << 16
#: endings of compressed CSV files, which pandas reads as it always did
COMPRESSED = (".gz", ".bz2", ".zip", ".xz", ".zst")


def data_path(value, key: str, default: Path | None = None) -> Path:
    """The file named by config key ``key``: a relative path is read from the working directory;
    ``None`` (or an empty string) is the study's shipped ``default`` (an error when it has
    none)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if default is None:
            raise ConfigError(f"{key}: give the path of a data file, got {value!r}")
        return Path(default)
    if not isinstance(value, (str, Path)):
        raise ConfigError(f"{key}: give the path of a data file, got {value!r}")
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path.cwd() / path


def _read_bytes(path: Path, key: str) -> bytes:
    if not path.is_file():
        what = "it is a directory" if path.is_dir() else "no such file"
        raise ConfigError(f"{key}: cannot read {path} ({what}; give the path of a data file)")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{key}: cannot read {path} ({exc.strerror or exc})") from None


def read_text(path: Path, key: str) -> str:
    """The text of ``path`` (UTF-8), or one line naming ``key`` and the file: not a file,
    unreadable, empty, or binary."""
    path = Path(path)
    raw = _read_bytes(path, key)
    if not raw.strip():
        raise ConfigError(f"{key}: {path} is empty (allowed: a data file with at least one "
                          f"data row)")
    head = raw[:SNIFF_BYTES]
    try:
        if b"\0" in head:
            raise UnicodeDecodeError("utf-8", head, 0, 1, "NUL byte")
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{key}: {path} is not a text file (allowed: UTF-8 text, e.g. a CSV "
                          "file)") \
            from None
    return text


def read_table(path: Path, key: str, **read_csv):
    """A user's CSV as a DataFrame (``read_csv`` are ``pandas.read_csv`` options), or one line
    naming ``key`` and the file: every problem of :func:`read_text`, a tokenizer error (its
    first line only), or a header without data rows."""
    import io
    import zipfile

    import pandas as pd

    path = Path(path)
    if path.suffix.lower() in COMPRESSED:  # pandas decompresses by the file name
        if not _read_bytes(path, key):
            raise ConfigError(f"{key}: {path} is empty (allowed: a compressed CSV file)")
        source = path
    else:
        source = io.StringIO(read_text(path, key))
    try:
        frame = pd.read_csv(source, **read_csv)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OSError, EOFError,
            zipfile.BadZipFile) as exc:
        first = next((s.strip() for s in str(exc).splitlines() if s.strip()),
                     type(exc).__name__)
        raise ConfigError(f"{key}: cannot read {path} as CSV ({first})") from None
    if frame.empty:
        raise ConfigError(f"{key}: {path} has a header and no data rows (allowed: at least "
                          f"one data row)")
    return frame


#: the grid axis of a study that runs on a stand-in or on a user's file (``data_files``)
DATA_AXIS = "data"


def select_data_files(study_class, study: dict) -> None:
    """Apply the one rule for data paths to a study config (in place), before it is validated:

    * a relative path is made absolute against the working directory, so every study, every
      worker and a resumed run read the same file whatever directory they start in;
    * a path that is set selects its file: when the study's ``data`` grid axis does not list
      the value that reads the file (``csv``), the axis becomes that value. Listing both
      (``study.grid.data=[standin,csv]``) runs both; leaving the path unset runs the stand-in.

    The study's own ``validate`` then reads and checks the file (one line, nothing written)."""
    for key, source in getattr(study_class, "data_files", {}).items():
        value = study.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        study[key] = str(data_path(value, f"study.{key}"))
        grid = study.get("grid") or {}
        if source is not None and source not in list(grid.get(DATA_AXIS) or ()):
            grid[DATA_AXIS] = [source]
