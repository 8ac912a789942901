#!/usr/bin/env bash
# Reports over the size limit on a real NNG connection (issue 14, item 15):
# NNG used to drop anything over 16 KiB before the scorer saw it, uncounted
# and unlogged. Now NNG's own limit is twice ours, so a report up to
# that size arrives and is counted and logged with its size; good reports
# keep flowing. (Larger messages NNG still closes the connection for, with
# nothing in libnng 1.5 to tell that from a normal close: scorer/reports/ingest.h.)
set -u
. "$(dirname "$0")/lib.sh"

FORGE=${FORGE:-${O:-build}/rel/bench/forge}
[ -x "$FORGE" ] || fail "forge tool not found at $FORGE (make unit-build builds it)"
LIMIT=16384
counted() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk -v k="netsched_scorer_reports_total{result=\"$1\"}" '$1 == k { print $2 }'; }
counted_is() { [ "$(counted "$1")" = "$2" ]; }
forge() { "$FORGE" --scorer "tcp://127.0.0.1:$LISTEN_PORT" "$@" >>"$WORK/forge.log" 2>&1 ||
	fail "forge $*: $(tail -1 "$WORK/forge.log")"; }
rx_of() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/nodes" | jq -r "[.nodes[] | select(.name == \"$1\") | .rxBytesPerSecond][0] // \"absent\""; }
rx_is() { [ "$(rx_of "$1")" = "$2" ]; }

start_scorer
expect "oversize reports at start" "$(counted oversize)" 0
# A report at the limit is not oversize (it is garbage: malformed).
forge --size "$LIMIT"
wait_for 5 "a message at the limit to be counted as malformed" counted_is malformed 1
expect "oversize after a message at the limit" "$(counted oversize)" 0
# Over: it arrives, and its size is in the log.
for size in $((LIMIT + 1)) $((2 * LIMIT)); do
	n=$(($(counted oversize) + 1))
	forge --size "$size"
	wait_for 5 "a message of $size bytes to be counted" counted_is oversize "$n"
	wait_for 5 "a log line naming $size bytes and the limit" \
		grep -q "report rejected: a message of $size bytes, over the report limit of $LIMIT bytes" \
		"$WORK/scorer.log"
	sleep 1 # the next line may come a second later
done
# A normal report on a fresh connection closed normally is not counted.
forge --node good --rx 4242
wait_for 5 "a good report after the oversize ones" rx_is good 4242
expect "oversize after a good report" "$(counted oversize)" 2
echo "PASS: oversize"
