"""A process that exits while it is being read."""

import threading

import stackdump
from conftest import EXIT_EXITED, EXIT_NO_PROCESS, EXIT_OK

RUNS = 50


def test_process_exiting_during_reads(python, launch, profiler):
    target = launch("exits.py", python, expect_exit=True)
    # Reap it as soon as it exits, so the reads meet no zombie.
    reaper = threading.Thread(target=target.proc.wait, daemon=True)
    reaper.start()
    for _ in range(RUNS):
        result = profiler.cmd(target.pid, "stack")  # fails the test on a hang
        assert result.code in (EXIT_OK, EXIT_NO_PROCESS, EXIT_EXITED), result.describe()
        if result.code == EXIT_OK:
            stackdump.parse(result.stdout)
        else:
            result.error_line()
    # the launch fixture then checks that the target exited by itself, status 0
