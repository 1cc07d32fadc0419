"""Session-wide fixtures: each study's ``profile=ci`` sweep runs once per test run, and every
test that needs it (the regression snapshot, the claims, the tables) reads the same sweep.

The suite runs on two pytest-xdist workers (the README's test command: ``-n 2``). The sweeps
then live in one directory shared by the workers, and a lock file per study makes the first
worker that needs a study run its sweep while another waits for it; the sweep is resumable, so
the waiting worker finds every task done and only reads the rows."""

import contextlib
import json
import os
import time

import pytest
from study_helpers import ci_sweep

if os.environ.get("PYTEST_XDIST_WORKER"):
    # one BLAS thread per worker: two workers on two cores, each with a BLAS pool of its own,
    # oversubscribe the cores and slow BLAS-bound tests (a graphical lasso, sparse GLMs) by
    # an order of magnitude (the sweeps' own workers already run with one thread each)
    from threadpoolctl import threadpool_limits

    _ONE_BLAS_THREAD = threadpool_limits(1)

try:
    import fcntl
except ImportError:  # not POSIX: no lock (each worker resumes the sweep; run -n 0 there)
    fcntl = None


@contextlib.contextmanager
def _locked(path):
    """An exclusive lock on ``path`` for the block (processes of this machine)."""
    with open(path, "a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def ci_sweep_of(tmp_path_factory):
    """``ci_sweep_of(study)`` → (config, rows, metrics) of the study's profile=ci sweep, run on
    first use into one directory of the test run (``ci_sweeps`` beside the workers' own
    temporary directories) and shared after that."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's directory, above each worker's popen-gwN
    out = base / "ci_sweeps"
    out.mkdir(exist_ok=True)
    done = {}

    def get(study: str):
        if study not in done:
            asked = time.perf_counter()
            with _locked(out / f".{study}.lock"):
                locked = time.perf_counter()
                done[study] = ci_sweep(study, out)
                _log_sweep(out, study, locked - asked, time.perf_counter() - locked)
        return done[study]

    return get


def _log_sweep(out, study: str, waited: float, took: float) -> None:
    """One line per worker and study in ``ci_sweeps/timeline.jsonl``: seconds waited for the
    lock (the other worker running the sweep) and seconds to run or read it; the run's summary
    prints the totals (the suite's time budget is mostly these sweeps)."""
    line = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "study": study,
            "waited": round(waited, 2), "took": round(took, 2)}
    with open(out / "timeline.jsonl", "a") as handle:
        handle.write(json.dumps(line) + "\n")


#: the test files whose profile=ci sweeps are the longest (Park & Ghosh's, then the snapshot file,
#: which starts with Sim 4's): scheduled first, one per worker, so that the two longest chains
#: start at once and the small files fill in around them instead of trailing after them. The
#: README's command passes ``--no-loadscope-reorder``, so that xdist keeps this order (its default
#: orders files by their number of tests).
FIRST = ("tests/park_ghosh/test_maps_study.py", "tests/test_reference_snapshots.py")


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))  # stable


_STARTED = time.perf_counter()
#: seconds from the start of the run to the moment each xdist worker ran out of tests
_WORKERS_DONE: dict[str, float] = {}


def pytest_testnodedown(node, error):
    """(xdist, on the controller) a worker finished: when, for the run's summary."""
    _WORKERS_DONE[node.gateway.id] = time.perf_counter() - _STARTED


def pytest_terminal_summary(terminalreporter, config):
    """The ci sweeps' share of the run: which study ran where, and how long workers waited;
    when each worker ran out of tests (a core idles from then on)."""
    if _WORKERS_DONE:
        terminalreporter.write_line("workers done (seconds from the start): " + ", ".join(
            f"{w} {t:.0f}" for w, t in sorted(_WORKERS_DONE.items(), key=lambda x: x[1])))
    path = config._tmp_path_factory.getbasetemp() / "ci_sweeps" / "timeline.jsonl"
    if not path.exists():
        return
    lines = [json.loads(x) for x in path.read_text().splitlines() if x]
    ran = sorted((x for x in lines if x["took"] >= 1), key=lambda x: -x["took"])
    terminalreporter.write_sep("-", "ci sweeps (seconds: took = ran or read, waited = for the "
                               "other worker)")
    for x in ran:
        terminalreporter.write_line(f"{x['took']:8.1f} took  {x['waited']:7.1f} waited  "
                                    f"{x['worker']:>5}  {x['study']}")
    terminalreporter.write_line(f"total: {sum(x['took'] for x in lines):.0f} s took, "
                                f"{sum(x['waited'] for x in lines):.0f} s waited")
