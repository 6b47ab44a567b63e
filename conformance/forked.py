"""A forked child that writes a scratch file while its parent goes on (the report's two-process
reading and writing of large runs: :func:`conformance.reports.casedata.read_results_store`,
:func:`conformance.reports.html.write_html`)."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import BinaryIO


def can_fork() -> bool:
    """Whether this process may fork such a child: Linux (elsewhere fork is unsafe or absent) and
    no thread but this one (a thread holding a lock at the fork leaves it held in the child)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


class ForkedWriter:
    """A forked child that calls ``write`` on a scratch file (binary, in ``directory``) and exits:
    status 0 when ``write`` returned, 1 when it raised.  Nothing of the parent's runs in the child
    after ``write`` (no ``atexit``, no buffers of the parent's flushed): it leaves by ``os._exit``.
    The parent :meth:`wait` s for it, reads :attr:`path`, then :meth:`close` s it (which also stops
    a child still running, and removes the file).

    Raises:
        OSError: the scratch file cannot be made, or the fork fails.
    """

    def __init__(self, directory, prefix: str, write: Callable[[BinaryIO], None]):
        fd, self.path = tempfile.mkstemp(dir=directory, prefix=prefix)
        os.close(fd)
        try:
            self.pid: int | None = os.fork()
        except OSError:  # no process to be had (EAGAIN, ENOMEM): nothing left behind
            os.unlink(self.path)
            raise
        if self.pid == 0:
            code = 1
            try:
                with open(self.path, "wb") as f:
                    write(f)
                code = 0
            finally:
                os._exit(code)

    def wait(self) -> bool:
        """Wait for the child: whether it wrote the whole file (exit status 0)."""
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return os.waitstatus_to_exitcode(status) == 0

    def close(self) -> None:
        """Stop the child if it still runs and remove its scratch file."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
