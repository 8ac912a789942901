# Shared by the benchmark scripts: sourced from the repository root after
# tests/integration/lib.sh, whose start, start_scorer, wait_for, fail and
# cleanup (every process in PIDS, the directory WORK) they use as the tests do.

# bench_machine: the line a benchmark prints before its figures: the machine
# they were measured on, and how busy it was.
bench_machine() {
	echo "machine: $(nproc) cpus, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo |
		head -n 1), load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
}

# bench_table_holds N: the scorer under test (start_scorer) has fresh agent
# data for at least N nodes.
bench_table_holds() {
	local n
	n=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" |
		jq '[.nodes[] | select(.source == "agent")] | length')
	[ "${n:-0}" -ge "$1" ]
}

# bench_fill_table FEED N FEED-ARGS...: bench/feed sends reports for N nodes
# (node-0 ..) to the scorer under test, then waits until its table holds
# them all: a benchmark needs real data, not neutral scores.
bench_fill_table() {
	local feed=$1 n=$2
	shift 2
	"$feed" --scorer "tcp://127.0.0.1:$LISTEN_PORT" --nodes "$n" "$@" >"$WORK/feed.txt" 2>&1 ||
		fail "feed: $(tail -n 3 "$WORK/feed.txt")"
	wait_for 10 "$n fresh nodes in the scorer's table" bench_table_holds "$n"
}
