"""A small Kubernetes API client for the lab's tools (Python 3 standard
library only): the kubelet stand-in (kubelet.py) and the placement bench
(bench/placement.py) talk to the test apiserver with it.

Only what they need: JSON requests with a bearer token over TLS checked
against the cluster's CA, a list, a watch stream, and bounds on everything
read (body size, watch line length, time). One Client per thread:
http.client connections are not thread-safe.
"""
import http.client
import json
import ssl
import urllib.parse

# A list of a few hundred pods is well under this; a larger body is refused.
MAX_BODY = 64 << 20
# One watch event (one object) per line.
MAX_LINE = 4 << 20


class ApiError(Exception):
    """An apiserver answer other than 2xx, or one we could not read."""

    def __init__(self, status, message):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


def _kubeconfig_fields(path):
    """server, certificate-authority and token from the kubeconfig that
    tests/k8s/lib.sh writes (one cluster, one user, inline token). A plain
    line scan: the standard library has no YAML reader, and this file has
    one value per key."""
    want = {"server": None, "certificate-authority": None, "token": None}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, sep, value = line.strip().partition(":")
            if sep and key in want and want[key] is None:
                want[key] = value.strip()
    missing = [k for k, v in want.items() if not v]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)} (expected the kubeconfig lib.sh writes)")
    return want["server"], want["certificate-authority"], want["token"]


class Client:
    def __init__(self, server, ca_file, token, timeout=10.0):
        url = urllib.parse.urlsplit(server)
        if url.scheme != "https" or not url.hostname:
            raise ValueError(f"apiserver URL {server!r} is not https://HOST:PORT")
        self.host, self.port = url.hostname, url.port or 443
        self.token = token
        self.timeout = timeout
        self.ctx = ssl.create_default_context(cafile=ca_file)
        self.conn = None

    @classmethod
    def from_kubeconfig(cls, path, timeout=10.0):
        server, ca, token = _kubeconfig_fields(path)
        return cls(server, ca, token, timeout)

    def clone(self):
        """A client with its own connection (for another thread)."""
        c = Client.__new__(Client)
        c.host, c.port, c.token, c.timeout, c.ctx = self.host, self.port, self.token, self.timeout, self.ctx
        c.conn = None
        return c

    def _connect(self, timeout):
        return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ctx)

    def request(self, method, path, body=None, content_type="application/json"):
        """The decoded JSON answer of one request; ApiError unless 2xx. A
        dropped keep-alive connection is reopened once."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = self._connect(self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read(MAX_BODY + 1)
                break
            except (http.client.HTTPException, ConnectionError, OSError) as e:
                self.conn.close()
                self.conn = None
                if attempt == 1 or isinstance(e, TimeoutError):
                    raise ApiError(0, f"{method} {path}: {e}") from e
        if len(raw) > MAX_BODY:
            self.conn.close()
            self.conn = None
            raise ApiError(resp.status, f"{method} {path}: body over {MAX_BODY} bytes")
        try:
            doc = json.loads(raw) if raw else {}
        except ValueError as e:
            raise ApiError(resp.status, f"{method} {path}: not JSON: {raw[:200]!r}") from e
        if not 200 <= resp.status < 300:
            raise ApiError(resp.status, f"{method} {path}: {doc.get('message', raw[:200])}")
        return doc

    def get(self, path):
        return self.request("GET", path)

    def create(self, path, obj):
        return self.request("POST", path, obj)

    def patch_status(self, namespace, name, status):
        """A strategic merge patch of pods/status, as the kubelet sends:
        conditions merge by type, the rest replaces."""
        return self.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status",
                            {"status": status}, "application/strategic-merge-patch+json")

    def delete_pod(self, namespace, name, grace=None, uid=None):
        """Deletes a pod; grace 0 with the UID as precondition is how the
        kubelet finalizes a terminating pod. A pod already gone is fine."""
        body = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace is not None:
            body["gracePeriodSeconds"] = grace
        if uid:
            body["preconditions"] = {"uid": uid}
        try:
            return self.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", body)
        except ApiError as e:
            if e.status in (404, 409):  # gone, or a new pod under the same name
                return None
            raise

    def watch(self, path, resource_version, timeout_seconds=60):
        """Yields (type, object) from a watch that starts after
        resource_version, with bookmarks, for at most timeout_seconds (the
        apiserver ends it then). Raises ApiError on a refused watch and on
        a 410 Gone event (the caller lists again)."""
        sep = "&" if "?" in path else "?"
        query = urllib.parse.urlencode({"watch": "1", "resourceVersion": resource_version,
                                        "allowWatchBookmarks": "true",
                                        "timeoutSeconds": str(int(timeout_seconds))})
        conn = self._connect(timeout_seconds + 15)
        try:
            conn.request("GET", f"{path}{sep}{query}",
                         headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:
                raise ApiError(resp.status, f"watch {path}: {resp.read(4096)[:200]!r}")
            while True:
                line = resp.readline(MAX_LINE + 1)
                if not line:
                    return
                if len(line) > MAX_LINE:
                    raise ApiError(200, f"watch {path}: an event over {MAX_LINE} bytes")
                if not line.strip():
                    continue
                ev = json.loads(line)
                kind, obj = ev.get("type"), ev.get("object") or {}
                if kind == "ERROR":
                    raise ApiError(obj.get("code", 0), f"watch {path}: {obj.get('message')}")
                yield kind, obj
        finally:
            conn.close()
