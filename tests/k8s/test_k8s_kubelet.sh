#!/usr/bin/env bash
# The lab's kubelet stand-in (tests/k8s/kubelet.py, lab.sh) against a real
# kube-apiserver v1.20.2: two nodes with shaped uplinks, n1 wired routed
# (Calico-like), n2 bridged (cni0); pods bound with spec.nodeName (no
# scheduler needed).
#  0. the traffic annotation's parser: good values, each kind of bad one;
#  1. wiring: each pod has an address from its node's pod CIDRs (IPv4 and
#     IPv6); routed: a /32 and a /128 route to the host end, no bridge;
#     bridged: the host end is a port of cni0; both reach the far side
#     beyond the uplink over IPv4 and IPv6, and the hub reaches them;
#  2. status as a kubelet reports it: Running, podIP/podIPs, hostIP,
#     startTime, Ready; traffic as annotated in both directions crosses
#     the uplink and is recorded (rate asked, bytes got); two pods that
#     talk to each other (peer=) on one node: their traffic is delivered
#     and never crosses the uplink; background out of a node (lab.sh, tx)
#     is its uplink's tx;
#  3. a malformed annotation: a Warning event, no traffic;
#  4. restart: killed with SIGKILL, a pod deleted and one bound meanwhile:
#     the new process adopts the running pod (same address, traffic still
#     running), finalizes the deleted one, sets up the new one; a bound on
#     pods per node fails the pod beyond it as OutOfpods; an address freed
#     on the bridge and taken at once by the next pod: its traffic arrives;
#  5. teardown: deleted pods leave no namespace, route, host end or iperf3
#     process; SIGTERM tears down what still runs.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/integration/lib.sh
. tests/k8s/lib.sh
. tests/k8s/lab.sh
lab_need k8s-kubelet test
k8s_init

P="nsl$$"
lab_nodes "$P" 100M routed bridged
k8s_ports
k8s_up_api
lab_k8s_nodes
lab_kubelet

# A pod's traffic was delivered (jq, on its result) when it moved 80% of
# its rate over its duration: its own end's bytes over its seconds, or, the
# same 80% as a volume, its bytes against rate x duration. The receiver's
# seconds include its start and end, which a loaded machine stretches (b1
# got 96% of the 5 MB it was asked for in 2 s, counted over 2.7 s: 0.70 of
# the rate); iperf3 stops after its duration, so a link or wiring that
# carries less than 80% of the rate fails both.
DELIVERED='def delivered: .fraction >= 0.8 or .bytes * 8 >= 0.8 * .rate * .duration; '
# pod NAME NODE [TRAFFIC]: one pod bound to NODE, with that annotation.
pod() {
	{
		echo "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"$1\", \"labels\": {\"test\": \"lab\"}"
		[ -n "${3:-}" ] && echo ", \"annotations\": {\"netsched.test/traffic\": \"$3\"}"
		echo "}, \"spec\": {\"nodeName\": \"$2\", \"containers\": [{\"name\": \"c\", \"image\": \"netsched.invalid/pause\"}]}}"
	} | kc create -f - >/dev/null || fail "cannot create pod $1"
}
field() { kc get pod "$1" -o jsonpath="$2"; }
running() { [ "$(field "$1" '{.status.phase}')" = Running ]; }
gone() { ! kc get pod "$1" >/dev/null 2>&1; }
in_pod() { ip netns exec "$P-$(field "$1" '{.metadata.uid}')" "${@:2}"; }
result() { jq -c "select(.name == \"$1\")" "$WORK/kubelet/results.jsonl" 2>/dev/null; }
has_result() { [ -n "$(result "$1")" ]; }
# Every iperf3 the stand-in started, from its records (checked at the end).
seen_pids() { cat "$WORK"/kubelet/pods/*.json 2>/dev/null | jq -r '.pod_pid // empty, .far_pid // empty' >>"$WORK/pids"; }

# ------------------------------------------- 0. the annotation, each error
python3 - <<'PY' || fail "the traffic annotation parser"
import sys
sys.path.insert(0, "tests/k8s")
import traffic
ok = [("rate=300M", (300000000, "rx", 0, 60, 1, None)),
      ("rate=12.5M,dir=tx,delay=500ms,duration=1m,streams=4", (12500000, "tx", 0.5, 60, 4, None)),
      (" rate=1k , duration=3600s", (1000, "rx", 0, 3600, 1, None)),
      ("rate=5M,dir=tx,peer=app", (5000000, "tx", 0, 60, 1, "app")),
      ("rate=5M,peer=example.com/tier", (5000000, "rx", 0, 60, 1, "example.com/tier"))]
bad = [("", "'' is not key=value"), ("rate", "'rate' is not key=value"),
       ("rate=1M,colour=red", "unknown key 'colour'"), ("rate=1M,rate=2M", "rate given twice"),
       ("dir=rx", "no rate"), ("rate=fast", "rate 'fast' is not a number"),
       ("rate=999", "rate '999' is outside 1k..100G"), ("rate=101G", "rate '101G' is outside"),
       ("rate=1.2345M", "rate '1.2345M' is not a number"), ("rate=1M,dir=up", "dir 'up' is neither"),
       ("rate=1M,streams=17", "streams '17' is not 1..16"), ("rate=1M,delay=601s", "delay '601s' is outside"),
       ("rate=1M,duration=0s", "duration '0s' is outside"), ("rate=1M,duration=2h", "duration '2h' is not"),
       ("rate=1M," + "x" * 300, "over the limit of 256"), ("rate=1M,peer=-app", "peer '-app' is not a label key"),
       ("rate=1M,peer=a/b/c", "peer 'a/b/c' is not a label key")]
for text, want in ok:
    s = traffic.parse(text)
    got = (s.rate, s.dir, s.delay, s.duration, s.streams, s.peer)
    assert got == want, f"{text!r}: {got} != {want}"
for text, want in bad:
    try:
        traffic.parse(text)
    except traffic.BadTraffic as e:
        assert want in str(e), f"{text!r}: {e!r} lacks {want!r}"
    else:
        raise AssertionError(f"{text!r} was accepted")
print(f"ok: the traffic annotation: {len(ok)} good values, {len(bad)} kinds of bad one, each named")
PY

# ------------------------------------------------------------- 1. wiring
pod r1 n1 "rate=20M,dir=rx,delay=1s,duration=2s"
pod b1 n2 "rate=20M,dir=tx,delay=1s,duration=2s"
pod bad n1 "rate=fast,dir=rx"
for p in r1 b1 bad; do wait_for 20 "pod $p Running" running "$p"; done
seen_pids
r1=$(field r1 '{.status.podIPs[*].ip}') b1=$(field b1 '{.status.podIPs[*].ip}')
[[ $r1 =~ ^10\.244\.1\.[0-9]+\ fd00:10:244:1::[0-9a-f]+$ ]] || fail "r1's podIPs '$r1' are not from n1's pod CIDRs"
[[ $b1 =~ ^10\.244\.2\.[0-9]+\ fd00:10:244:2::[0-9a-f]+$ ]] || fail "b1's podIPs '$b1' are not from n2's pod CIDRs"
echo "ok: podIPs r1 ($r1), b1 ($b1) from their nodes' pod CIDRs"
r4=${r1% *} r6=${r1#* } b4=${b1% *} b6=${b1#* }
host=$(ip -n "$P-n1" -o route show "$r4/32" | awk '{ print $3 }')
[[ $host == cali* ]] || fail "n1 has no /32 route to r1 through a cali* host end: '$(ip -n "$P-n1" route)'"
ip -n "$P-n1" -6 -o route show "$r6/128" | grep -q "dev $host" || fail "n1 has no /128 route to r1 via $host"
ip -n "$P-n1" -o link show "$host" | grep -q master && fail "routed host end $host is in a bridge"
echo "ok: routed n1: $r4/32 and $r6/128 via $host"
port=$(ip -n "$P-n2" -o link show master cni0 | awk -F': ' '{ print $2 }' | cut -d@ -f1)
[[ $port == veth* ]] || fail "n2's bridge cni0 has no veth* port: '$port'"
ip -n "$P-n2" -o addr show cni0 | grep -q '10.244.2.1/24' || fail "cni0 on n2 lacks the gateway 10.244.2.1/24"
mac=$(in_pod b1 cat /sys/class/net/eth0/address)
expect "b1's MAC (from its address, as the bridge plugin makes it)" "$mac" \
	"0a:58:$(IFS=. && printf '%02x:%02x:%02x:%02x' $b4)"
echo "ok: bridged n2: host end $port on cni0 (gateway 10.244.2.1, fd00:10:244:2::1), pod MAC $mac"
for p in r1 b1; do
	in_pod "$p" ping -c 1 -W 2 "$LAB_FAR4" >/dev/null || fail "$p cannot reach $LAB_FAR4 beyond its uplink"
	in_pod "$p" ping -6 -c 1 -W 2 "$LAB_FAR6" >/dev/null || fail "$p cannot reach $LAB_FAR6 over IPv6"
done
for a in "$r4" "$r6" "$b4" "$b6"; do
	ip netns exec "$LAB_HUB" ping -c 1 -W 2 "$a" >/dev/null || fail "the hub cannot reach pod address $a"
done
echo "ok: both pods reach the far side over IPv4 and IPv6, the hub reaches all four addresses"

# ---------------------------------------------------- 2. status and traffic
expect "r1 hostIP" "$(field r1 '{.status.hostIP}')" 10.231.1.2
expect "b1 Ready" "$(field b1 '{.status.conditions[?(@.type=="Ready")].status}')" True
expect "b1 container running" "$(field b1 '{.status.containerStatuses[0].ready}')" true
[ -n "$(field r1 '{.status.startTime}')" ] || fail "r1 has no startTime"
for p in r1 b1; do wait_for 20 "$p's traffic result" has_result "$p"; done
for p in r1 b1; do
	res=$(result "$p")
	echo "  $p: $res"
	jq -e "$DELIVERED"'.error == null and delivered and .rate == 20000000 and .wireBytes > .bytes' <<<"$res" >/dev/null ||
		fail "$p asked 20 Mb/s on an idle 100 Mb/s link and got $res"
done
expect "r1's direction and node" "$(result r1 | jq -r '.dir + " on " + .node')" "rx on n1"
expect "b1's direction and node" "$(result b1 | jq -r '.dir + " on " + .node')" "tx on n2"
echo "ok: status Running/Ready with hostIP and startTime; 20 Mb/s each way delivered and recorded"

# Two pods of one group on n1 that talk to each other (the peer key: the
# pods with the same value of label "test"), 20 Mb/s each way: delivered
# pod to pod on the node, nothing of it on n1's uplink.
tx0=$(ip -n "$P-n1" -s -j link show eth0 | jq '.[0].stats64.tx.bytes + .[0].stats64.rx.bytes')
pod talk1 n1 "rate=20M,dir=tx,delay=1s,duration=2s,peer=test"
pod talk2 n1 "rate=20M,dir=tx,delay=1s,duration=2s,peer=test"
for p in talk1 talk2; do wait_for 20 "$p's traffic result" has_result "$p"; done
seen_pids
up=$(($(ip -n "$P-n1" -s -j link show eth0 | jq '.[0].stats64.tx.bytes + .[0].stats64.rx.bytes') - tx0))
for p in talk1 talk2; do
	res=$(result "$p")
	echo "  $p: $res"
	jq -e "$DELIVERED"'.error == null and delivered and .peerNode == "n1" and (.peer | startswith("talk"))
		and .peer != .name and .wireBytes > .bytes' <<<"$res" >/dev/null ||
		fail "$p, talking to its peer on n1 at 20 Mb/s, got $res"
done
# Two 20 Mb/s flows for 2 s are 10 MB; the uplink saw next to nothing.
[ "$up" -lt 500000 ] || fail "n1's uplink carried $up bytes while its pods talked to each other"
echo "ok: talk1 and talk2 talked to each other on n1 (20 Mb/s each way delivered); n1's uplink: $up bytes"
kc delete pod talk1 talk2 --wait=false >/dev/null
for p in talk1 talk2; do wait_for 20 "$p finalized" gone "$p"; done

# Background out of n2: its uplink's tx, not its rx.
lab_background n2 30M 3 5301 tx
bg_tx() { [ "$(lab_uplink_bps n2 tx)" -ge 24000000 ]; }
wait_for 10 "n2's uplink sending 30 Mb/s of background" bg_tx
rx=$(lab_uplink_bps n2 rx)
[ "$rx" -lt 5000000 ] || fail "n2's uplink received $rx b/s while it sent its background"
echo "ok: background out of n2: tx $(lab_uplink_bps n2 tx) b/s, rx $rx b/s (its ACKs)"
lab_background_stop

# ----------------------------------------------------- 3. a bad annotation
event() { kc get events --field-selector "involvedObject.name=bad,reason=InvalidTraffic" -o jsonpath='{.items[0].message}'; }
has_event() { [ -n "$(event)" ]; }
wait_for 10 "the InvalidTraffic event of pod bad" has_event
expect "event for 'rate=fast'" "$(event)" \
	"netsched.test/traffic 'rate=fast,dir=rx': rate 'fast' is not a number of bits per second such as 300M: no traffic"
has_result bad && fail "pod bad ran traffic: $(result bad)"
expect "pod bad still Running" "$(field bad '{.status.phase}')" Running
echo "ok: a malformed annotation: Warning event, no traffic, pod Running"

# ------------------------------------------------------------- 4. restart
pod long n1 "rate=5M,dir=rx,duration=60s"
wait_for 20 "pod long Running" running long
long_ip=$(field long '{.status.podIP}')
# Its sender, in the hub (rx: the pod's end is the receiver).
sender() { jq -r '.far_pid // 0' "$WORK/kubelet/pods/$(field long '{.metadata.uid}').json"; }
sending() { [ "$(sender)" -gt 0 ]; }
wait_for 10 "long's traffic to start" sending
long_pid=$(sender)
seen_pids
{
	kill -9 "$LAB_KUBELET"
	wait "$LAB_KUBELET"
} 2>/dev/null
kc delete pod b1 --wait=false >/dev/null
pod late n2 "rate=5M,dir=rx,duration=3s"
pod extra n1
b1_ns="$P-$(jq -r 'select(.name == "b1") | .uid' "$WORK/kubelet/results.jsonl")"
ip netns list | grep -q "^$b1_ns" || fail "b1's namespace vanished before the restart"
lab_kubelet --max-pods-per-node 3
wait_for 20 "b1 finalized" gone b1
wait_for 20 "pod late Running" running late
failed() { [ "$(field extra '{.status.phase}')" = Failed ]; }
wait_for 20 "pod extra Failed on a full n1" failed
seen_pids
grep -q "default/long: adopted on n1 ($long_ip)" "$WORK/kubelet.log" || fail "long was not adopted: $(grep -c adopted "$WORK/kubelet.log") adoptions"
expect "long's address after the restart" "$(field long '{.status.podIP}')" "$long_ip"
expect "long's traffic after the restart (the same iperf3 still sends)" "$(sender)" "$long_pid"
[ -d "/proc/$long_pid" ] || fail "long's iperf3 sender $long_pid died with the stand-in"
ip netns list | grep -q "^$b1_ns" && fail "b1's namespace $b1_ns outlived its pod"
expect "extra's reason" "$(field extra '{.status.reason}')" OutOfpods

echo "ok: restart: long adopted ($long_ip, iperf3 $long_pid still running), b1 finalized, late set up, extra OutOfpods ($(field extra '{.status.message}'))"

# A pod receiving on n2's bridge is deleted and the next pod gets its
# address at once: same address, same MAC, so whatever n2 cached for the
# old pod still fits the new one, and its traffic arrives.
pod reuse1 n2 "rate=5M,dir=rx,duration=60s"
wait_for 20 "pod reuse1 Running" running reuse1
r1_ip=$(field reuse1 '{.status.podIP}')
flowing() { [ "$(jq -r '.sending // 0' "$WORK/kubelet/pods/$(field reuse1 '{.metadata.uid}').json")" != 0 ]; }
wait_for 10 "reuse1's traffic" flowing
sleep 1
seen_pids
kc delete pod reuse1 --wait=false >/dev/null
wait_for 20 "reuse1 finalized" gone reuse1
pod reuse2 n2 "rate=5M,dir=rx,duration=2s"
wait_for 20 "pod reuse2 Running" running reuse2
expect "reuse2's address (reuse1's)" "$(field reuse2 '{.status.podIP}')" "$r1_ip"
seen_pids
wait_for 20 "reuse2's traffic result" has_result reuse2
jq -e "$DELIVERED"'delivered' <<<"$(result reuse2)" >/dev/null || fail "reuse2, on reuse1's address, got $(result reuse2)"
echo "ok: $r1_ip freed on n2's bridge and taken at once: the new pod's traffic arrives ($(result reuse2 | jq .fraction))"

# ------------------------------------------------------------ 5. teardown
kc delete pod long bad r1 --wait=false >/dev/null
for p in long bad r1; do wait_for 20 "$p finalized" gone "$p"; done
wait_for 10 "long's result (stopped by the delete)" has_result long
jq -e '.seconds > 0 and .bytes > 0' <<<"$(result long)" >/dev/null || fail "long's partial result: $(result long)"
expect "routes to pods left on n1" "$(ip -n "$P-n1" -o route show | grep -c '10.244.1.')" 0
expect "host ends left on n1" "$(ip -n "$P-n1" -o link show | grep -c cali)" 0
lab_kubelet_stop
expect "pod namespaces after SIGTERM" "$(ip netns list | grep -c "^$P-[0-9a-f]\{8\}-")" 0
expect "host ends left on n2 after SIGTERM" "$(ip -n "$P-n2" -o link show master cni0 | grep -c .)" 0
left=0
for pid in $(sort -u "$WORK/pids"); do
	[ "$pid" -gt 0 ] && grep -qa iperf3 "/proc/$pid/cmdline" 2>/dev/null && left=$((left + 1))
done
expect "iperf3 processes left of $(sort -u "$WORK/pids" | wc -l) started" "$left" 0
echo "ok: teardown: no namespace, route, host end or iperf3 process left"
k8s_down
echo "PASS: k8s kubelet stand-in"
