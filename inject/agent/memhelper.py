# memhelper — the Python side of `mem sites` (tracemalloc), compiled into
# the agent (build-aux/build-agent.sh) and run in its own namespace.
#
# tracemalloc is started only by `mem sites start` and stopped by
# `mem sites stop`.  A program that was already tracing keeps its tracing
# exactly as it was: we only take snapshots then.  The state is the
# process's, not a connection's: start and diff usually come from two
# invocations of flight_profiler.

_state = {}


def _tracemalloc():
    import tracemalloc
    return tracemalloc


def sites_start(frames):
    tm = _tracemalloc()
    if _state:
        return {"error": "already started: mem sites diff compares against its snapshot, "
                         "mem sites stop ends it"}
    was = tm.is_tracing()
    _state["limit_before"] = tm.get_traceback_limit()
    if not was:
        tm.start(frames)
    _state["ours"] = not was
    _state["frames"] = tm.get_traceback_limit()
    _state["start"] = _snapshot(tm)
    return {"was_tracing": was, "frames": _state["frames"]}


def _snapshot(tm):
    snap = tm.take_snapshot()
    # all_frames: our own snapshot's allocations have tracemalloc.py
    # anywhere in their traceback, not always as the newest frame.
    return snap.filter_traces([tm.Filter(False, tm.__file__, all_frames=True),
                               tm.Filter(False, "<flight_profiler agent>", all_frames=True),
                               tm.Filter(False, "<frozen importlib._bootstrap>")])


def sites_diff(limit):
    tm = _tracemalloc()
    if not _state:
        return {"error": "nothing to compare: run `mem sites start` first"}
    if not tm.is_tracing():
        return {"error": "tracemalloc was stopped by the program since `mem sites start`; "
                         "run `mem sites stop`, then start again"}
    key = "traceback" if _state["frames"] > 1 else "lineno"
    stats = _snapshot(tm).compare_to(_state["start"], key)
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
    return {"rows": rows, "frames": _state["frames"], "ours": _state["ours"],
            "total_sites": len(stats)}


def sites_stop():
    tm = _tracemalloc()
    if not _state:
        return {"error": "not started: nothing to stop"}
    ours, limit = _state["ours"], _state["limit_before"]
    _state.clear()
    if ours and tm.is_tracing():
        tm.stop()
        if tm.get_traceback_limit() != limit:
            # stop() keeps our frame limit; only start() sets it: put it back.
            tm.start(limit)
            tm.stop()
    return {"stopped": ours}
