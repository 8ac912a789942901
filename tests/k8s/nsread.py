"""Reads /proc/net files as seen inside a named network namespace, without
starting a process per read: one dedicated thread enters the namespace
(setns through ctypes: Python 3.11 has no os.setns) and reads
/proc/thread-self/net/FILE, which shows the calling thread's namespace.
Only that thread ever changes namespace, so the caller's own sockets (the
apiserver connection) stay where they are.
"""
import ctypes
import os
import queue
import threading

CLONE_NEWNET = 0x40000000
NETNS_DIR = "/run/netns"
MAX_FILE = 4 << 20


class Reader:
    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.jobs = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="nsread", daemon=True)
        self.thread.start()

    def _loop(self):
        while True:
            ns, name, done = self.jobs.get()
            try:
                fd = os.open(os.path.join(NETNS_DIR, ns), os.O_RDONLY)
                try:
                    if self.libc.setns(fd, CLONE_NEWNET) != 0:
                        err = ctypes.get_errno()
                        raise OSError(err, f"setns into {ns}: {os.strerror(err)}")
                finally:
                    os.close(fd)
                with open(f"/proc/thread-self/net/{name}", "rb") as f:
                    done.put(f.read(MAX_FILE).decode(errors="replace"))
            except OSError as e:
                done.put(e)

    def read(self, ns, name, timeout=5.0):
        """The text of /proc/net/NAME inside namespace ns; OSError if the
        namespace is gone or the reader does not answer in time."""
        done = queue.Queue(maxsize=1)
        self.jobs.put((ns, name, done))
        try:
            got = done.get(timeout=timeout)
        except queue.Empty as e:
            raise OSError(f"reading {name} in {ns}: no answer in {timeout} s") from e
        if isinstance(got, OSError):
            raise got
        return got

    def counters(self, ns):
        """{interface: (rx_bytes, tx_bytes)} from /proc/net/dev in ns."""
        out = {}
        for line in self.read(ns, "dev").splitlines()[2:]:
            name, sep, rest = line.partition(":")
            f = rest.split()
            if sep and len(f) >= 9:
                out[name.strip()] = (int(f[0]), int(f[8]))
        return out

    def listening(self, ns, port):
        """Whether some TCP socket in ns listens on port (IPv4 or IPv6)."""
        want = f":{port:04X}"
        for name in ("tcp", "tcp6"):
            for line in self.read(ns, name).splitlines()[1:]:
                f = line.split()
                if len(f) > 3 and f[1].endswith(want) and f[3] == "0A":
                    return True
        return False
