# memhelper — the Python side of `mem sites` (tracemalloc), compiled into
# the agent (build-aux/build-agent.sh) and run in its own namespace.
#
# tracemalloc is started only by `mem sites start` and belongs to the
# clients that use it (DESIGN.md §6): each connection has its own starting
# snapshot, and tracemalloc started by us is stopped -- its frame limit put
# back -- when the last of them stops or disconnects (also by SIGKILL: the
# agent drops the connection, sites_drop).  A program that was already
# tracing keeps its tracing exactly as it was: we only take snapshots then.

_sessions = {}   # connection -> {"start": snapshot}
_ours = {}       # while _sessions: "ours" (we started it), "limit_before", "frames"


def _tracemalloc():
    import tracemalloc
    return tracemalloc


def sites_start(conn, frames):
    tm = _tracemalloc()
    if conn in _sessions:
        return {"error": "already started: mem sites diff compares against its snapshot, "
                         "mem sites stop ends it"}
    was = tm.is_tracing()
    if not _sessions:
        _ours.clear()
        _ours["limit_before"] = tm.get_traceback_limit()
        _ours["ours"] = not was
        if not was:
            tm.start(frames)
    elif not was:
        return {"error": "tracemalloc was stopped by the program since another client "
                         "started it; try again when that client is done"}
    _ours["frames"] = tm.get_traceback_limit()
    _sessions[conn] = {"start": _snapshot(tm)}
    return {"was_tracing": was and not (_ours["ours"] and len(_sessions) > 1),
            "shared": len(_sessions) > 1, "frames": _ours["frames"]}


def _snapshot(tm):
    snap = tm.take_snapshot()
    # all_frames: our own snapshot's allocations have tracemalloc.py
    # anywhere in their traceback, not always as the newest frame.
    return snap.filter_traces([tm.Filter(False, tm.__file__, all_frames=True),
                               tm.Filter(False, "<flight_profiler agent>", all_frames=True),
                               tm.Filter(False, "<frozen importlib._bootstrap>")])


def sites_diff(conn, limit):
    tm = _tracemalloc()
    if conn not in _sessions:
        return {"error": "nothing to compare: run `mem sites start` first (in this session: "
                         "tracemalloc stops when the client that started it leaves)"}
    if not tm.is_tracing():
        return {"error": "tracemalloc was stopped by the program since `mem sites start`; "
                         "run `mem sites stop`, then start again"}
    key = "traceback" if _ours["frames"] > 1 else "lineno"
    stats = _snapshot(tm).compare_to(_sessions[conn]["start"], key)
    stats.sort(key=lambda s: (-s.size_diff, -s.count_diff))
    rows = []
    for s in stats[:limit]:
        # A Traceback runs from the oldest frame to the newest (3.7+): newest first here.
        frames = [{"file": f.filename, "line": f.lineno} for f in reversed(list(s.traceback))]
        rows.append({"file": frames[0]["file"] if frames else "?",
                     "line": frames[0]["line"] if frames else 0,
                     "size": s.size, "size_delta": s.size_diff,
                     "count": s.count, "count_delta": s.count_diff,
                     "traceback": frames if len(frames) > 1 else []})
    return {"rows": rows, "frames": _ours["frames"], "ours": _ours["ours"],
            "total_sites": len(stats)}


def sites_stop(conn):
    if conn not in _sessions:
        return {"error": "not started: nothing to stop"}
    stopped = _end(conn)
    return {"stopped": stopped, "others": len(_sessions)}


def sites_has(conn):
    return conn in _sessions


def sites_drop(conn):
    """The connection closed: end its session, if it had one."""
    if conn in _sessions:
        _end(conn)


def _end(conn):
    """Forget conn's session; the last one stops what we started.  True if it did."""
    tm = _tracemalloc()
    del _sessions[conn]
    if _sessions or not _ours["ours"]:
        return False
    limit = _ours["limit_before"]
    _ours.clear()
    if tm.is_tracing():
        tm.stop()
    if tm.get_traceback_limit() != limit:
        # stop() keeps our frame limit; only start() sets it: put it back.
        tm.start(limit)
        tm.stop()
    return True
