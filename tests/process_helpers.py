"""Processes of a test's sweeps, read from /proc (Linux): the live descendants of a process
and which of some processes are still alive (zombies count as gone). Shared by the tests that
check that no worker outlives its sweep."""

from pathlib import Path


def descendants(pid: int) -> set[int]:
    """Live descendants of ``pid`` (from /proc), zombies excluded."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parent[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    alive = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(p)
    return alive
