"""A pod's network, wired the way real CNI plugins wire it (kubelet.py).

Each simulated node is a network namespace whose uplink (eth0) leads to the
hub; its pods get addresses from the node's pod CIDRs (Node.spec.podCIDRs,
one IPv4 and one IPv6) and a namespace of their own, joined to the node by a
veth pair whose pod end is eth0. Two styles, chosen per node:

routed (Calico, kindnet/ptp, the AWS VPC CNI): the host end (cali + 11 hex
  digits of the pod UID) stays unbridged in the node; the node routes the
  pod's /32 and /128 to it. The pod's only next hop is a link-local gateway
  (169.254.1.1, fe80::ecee:eeff:feee:eeee) that the host end answers for by
  its MAC ee:ee:ee:ee:ee:ee, as Calico does; static neighbour entries in the
  pod stand for Calico's proxy ARP, so no sysctl is written per pod.
bridged (flannel, the bridge plugin): the host end (veth + 8 hex digits) is
  a port of the node's bridge cni0, which holds the first address of each
  pod CIDR as the pods' gateway; the pod has a /24 and a /64, and a MAC made
  from its IPv4 address (0a:58:...), as the bridge plugin and kubenet make
  it: an address reused by the next pod keeps its MAC, so the node's and
  the bridge's caches of the old pod do not swallow the new one's traffic.

Either way the hub routes each pod CIDR to the node, so a pod's traffic
crosses its node's shaped uplink, and the pod's traffic is counted on the
host end (its tx is the pod's rx): what issue 23's agent will read.
"""
import hashlib
import ipaddress
import subprocess

GATEWAY_MAC = "ee:ee:ee:ee:ee:ee"
GATEWAY4 = "169.254.1.1"
GATEWAY6 = "fe80::ecee:eeff:feee:eeee"  # the EUI-64 link-local of GATEWAY_MAC
STYLES = ("routed", "bridged")
IP_TIMEOUT = 10


class PodNetError(Exception):
    pass


def run_ip(args, stdin=None):
    """Runs `ip ARGS` (with a batch on stdin); PodNetError with ip's own
    words when it fails or takes over IP_TIMEOUT seconds."""
    try:
        p = subprocess.run(["ip", *args], input=stdin, capture_output=True, text=True,
                           timeout=IP_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        raise PodNetError(f"ip {' '.join(args)}: no answer in {IP_TIMEOUT} s") from e
    if p.returncode != 0:
        raise PodNetError(f"ip {' '.join(args)}: {p.stderr.strip() or 'exit %d' % p.returncode}")
    return p.stdout


class Node:
    """One simulated node: its namespace, wiring style and pod CIDRs."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.netns = spec["netns"]
        self.style = spec.get("style", "routed")
        if self.style not in STYLES:
            raise ValueError(f"node {self.name}: style {self.style!r} is not one of {STYLES}")
        self.host_ip = spec["hostIP"]
        cidrs = [ipaddress.ip_network(c) for c in spec["podCIDRs"]]
        self.cidr4 = next((c for c in cidrs if c.version == 4), None)
        self.cidr6 = next((c for c in cidrs if c.version == 6), None)
        if self.cidr4 is None:
            raise ValueError(f"node {self.name}: no IPv4 pod CIDR in {spec['podCIDRs']}")
        # Host index 1 is the bridge's gateway; pods take 2 and up.
        self.last_index = min(self.cidr4.num_addresses - 2, 65534)
        self.used = set()

    def allocate(self):
        """The lowest free host index, its IPv4 and IPv6 addresses (the
        same index in both CIDRs). PodNetError when the CIDR is full."""
        for i in range(2, self.last_index + 1):
            if i not in self.used:
                self.used.add(i)
                return i, str(self.cidr4[i]), str(self.cidr6[i]) if self.cidr6 else None
        raise PodNetError(f"node {self.name}: pod CIDR {self.cidr4} has no free address "
                          f"({len(self.used)} in use)")

    def claim(self, index):
        """Marks an index in use (a pod adopted after a restart)."""
        self.used.add(index)

    def release(self, index):
        self.used.discard(index)


def host_ifname(style, uid):
    """The host end's name, from the pod UID as the plugins do (15 bytes
    at most, IFNAMSIZ)."""
    h = hashlib.sha1(uid.encode()).hexdigest()
    return ("cali" + h[:11]) if style == "routed" else ("veth" + h[:8])


def wire(node, pod_netns, uid, ip4, ip6):
    """Creates the pod's namespace and wires it to node; returns the host
    end's name. On failure nothing is left behind."""
    host = host_ifname(node.style, uid)
    run_ip(["netns", "add", pod_netns])
    try:
        link = ["-n", node.netns, "link", "add", host]
        if node.style == "routed":
            link += ["address", GATEWAY_MAC]
        peer = ["name", "eth0"]
        if node.style == "bridged":
            peer += ["address", "0a:58:" + ":".join(f"{int(b):02x}" for b in ip4.split("."))]
        run_ip(link + ["type", "veth", "peer", *peer, "netns", pod_netns])
        pod = ["link set lo up"]
        if node.style == "routed":
            pod += [f"addr add {ip4}/32 dev eth0", "link set eth0 up",
                    f"neigh add {GATEWAY4} lladdr {GATEWAY_MAC} dev eth0 nud permanent",
                    f"route add {GATEWAY4}/32 dev eth0 scope link",
                    f"route add default via {GATEWAY4} dev eth0"]
            if ip6:
                pod += [f"addr add {ip6}/128 dev eth0 nodad",
                        f"neigh add {GATEWAY6} lladdr {GATEWAY_MAC} dev eth0 nud permanent",
                        f"route add ::/0 via {GATEWAY6} dev eth0"]
            hostcmds = [f"link set {host} up", f"route add {ip4}/32 dev {host} scope link"]
            if ip6:
                hostcmds.append(f"route add {ip6}/128 dev {host}")
        else:
            pod += [f"addr add {ip4}/{node.cidr4.prefixlen} dev eth0", "link set eth0 up",
                    f"route add default via {node.cidr4[1]} dev eth0"]
            if ip6:
                pod += [f"addr add {ip6}/{node.cidr6.prefixlen} dev eth0 nodad",
                        f"route add ::/0 via {node.cidr6[1]} dev eth0"]
            hostcmds = [f"link set {host} master cni0 up"]
        run_ip(["-n", pod_netns, "-batch", "-"], "\n".join(pod) + "\n")
        run_ip(["-n", node.netns, "-batch", "-"], "\n".join(hostcmds) + "\n")
    except PodNetError:
        unwire(node, pod_netns, host)
        raise
    return host


def unwire(node, pod_netns, host):
    """Removes the pod's namespace (its eth0, so the veth pair, so the
    host routes with it); then the host end, if it outlived a half-made
    namespace. Processes still inside must be stopped first (netns_pids)."""
    try:
        run_ip(["netns", "del", pod_netns])
    except PodNetError:
        pass
    try:
        run_ip(["-n", node.netns, "link", "del", host])
    except PodNetError:
        pass


def netns_pids(name):
    """Pids of the processes inside a named namespace ([] if none or gone)."""
    try:
        return [int(p) for p in run_ip(["netns", "pids", name]).split()]
    except PodNetError:
        return []


def netns_list(prefix):
    """Named namespaces whose name starts with prefix."""
    out = run_ip(["netns", "list"])
    return [line.split()[0] for line in out.splitlines() if line.startswith(prefix)]
