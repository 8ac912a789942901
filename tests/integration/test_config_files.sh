#!/usr/bin/env bash
# Every file an option names, on the three binaries (issue 24): a FIFO (no
# writer: opening it waited for ever), a device (/dev/zero never ends,
# /dev/null), a directory and a missing file are refused at start-up and by
# --check-config with exit 2 and one line naming the option and the file;
# --check-config reads every file it names, also those another library opens
# later (a missing CA or token file passed it before). A hang is a failure:
# each run gets 10 s, far more than a refusal takes.
set -u
. "$(dirname "$0")/lib.sh"

mkfifo "$WORK/fifo"
mkdir "$WORK/dir"
K=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
echo "$K" >"$WORK/report.key"
echo "token-abc" >"$WORK/token"
echo "-----BEGIN CERTIFICATE-----" >"$WORK/ca.pem"
printf 'log-level: info\n' >"$WORK/good.yaml"
kubeconfig() { # CA TOKENFILE > a kubeconfig naming them
	printf 'current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n'
	printf 'clusters:\n- name: k\n  cluster: {server: "https://127.0.0.1:1", certificate-authority: "%s"}\n' "$1"
	printf 'users:\n- name: u\n  user: {tokenFile: "%s"}\n' "$2"
}
kubeconfig "$WORK/ca.pem" "$WORK/token" >"$WORK/kubeconfig"

# refused WANT BINARY ARGS...: exit 2 within 10 s, WANT in its one line;
# with and without --check-config.
refused() {
	local want=$1 bin=$2 out rc
	shift 2
	for mode in --check-config ""; do
		# shellcheck disable=SC2086
		out=$(timeout 10 "$BIN/$bin" "$@" $mode 2>&1 </dev/null)
		rc=$?
		[ "$rc" = 124 ] && fail "$bin $* $mode: hung (killed after 10 s)"
		[ "$rc" = 2 ] || fail "$bin $* $mode: exit $rc, want 2: $out"
		grep -qF -- "$want" <<<"$out" || fail "$bin $* $mode: '$out' lacks '$want'"
	done
	echo "ok: $bin refuses: $out"
}
ok() { # BINARY ARGS...: --check-config passes
	local bin=$1 out
	shift
	out=$(timeout 10 "$BIN/$bin" "$@" --check-config 2>&1 </dev/null)
	[ "$out" = "configuration OK" ] || fail "$bin $* --check-config: $out"
}
S=netsched-scorer
A=netsched-agent
AG=(--interfaces lo --scorer tcp://127.0.0.1:1)
RB=netsched-rebalancer
RBA=(--kubeconfig "$WORK/kubeconfig" --scorer https://127.0.0.1:1)

# The good files pass, so each refusal below is the one file's doing.
ok $S --config "$WORK/good.yaml" --key-file "$WORK/report.key" --kubeconfig "$WORK/kubeconfig" \
	--prometheus http://127.0.0.1:1 --prometheus-token-file "$WORK/token" \
	--prometheus-ca-file "$WORK/ca.pem"
ok $A "${AG[@]}" --config "$WORK/good.yaml" --key-file "$WORK/report.key"
ok $RB "${RBA[@]}" --config "$WORK/good.yaml" --scorer-ca "$WORK/ca.pem" \
	--scorer-cert "$WORK/ca.pem" --scorer-key "$WORK/ca.pem"

for f in fifo /dev/zero /dev/null dir; do
	case $f in
	fifo) p=$WORK/fifo what="a FIFO, not a regular file" ;;
	dir) p=$WORK/dir what="a directory, not a regular file" ;;
	*) p=$f what="a character device, not a regular file" ;;
	esac
	refused "$p: $what" $S --config "$p"
	refused "$p: $what" $A "${AG[@]}" --config "$p"
	refused "--key-file $p: $what" $S --key-file "$p"
	refused "$p: $what" $RB "${RBA[@]}" --config "$p"
	refused "--scorer-ca: $p: $what" $RB "${RBA[@]}" --scorer-ca "$p"
	refused "--scorer-cert: $p: $what" $RB "${RBA[@]}" --scorer-cert "$p" --scorer-key "$WORK/ca.pem"
	refused "--scorer-key: $p: $what" $RB "${RBA[@]}" --scorer-cert "$WORK/ca.pem" --scorer-key "$p"
	refused "--kubeconfig: $p: $what" $RB --kubeconfig "$p"
	refused "--key-file $p: $what" $A "${AG[@]}" --key-file "$p"
	refused "--listen-cert-key $p: $what" $S --listen "tls+tcp://127.0.0.1:1" --listen-cert-key "$p"
	refused "--scorer-ca $p: $what" $A --interfaces lo --scorer "tls+tcp://127.0.0.1:1" \
		--scorer-ca "$p"
	refused "--tls-cert/--tls-key: $p: $what" $S --tls-cert "$p" --tls-key "$WORK/ca.pem"
	refused "pod watch: $p: $what" $S --kubeconfig "$p"
	refused "--prometheus-ca-file $p: $what" $S --prometheus http://127.0.0.1:1 \
		--prometheus-ca-file "$p"
	refused "--prometheus-token-file $p: $what" $S --prometheus http://127.0.0.1:1 \
		--prometheus-token-file "$p"
	# The files a kubeconfig names.
	kubeconfig "$p" "$WORK/token" >"$WORK/kc-ca"
	refused "certificate authority: $p: $what" $S --kubeconfig "$WORK/kc-ca"
	refused "certificate authority: $p: $what" $RB --kubeconfig "$WORK/kc-ca"
	kubeconfig "$WORK/ca.pem" "$p" >"$WORK/kc-token"
	refused "token file: $p: $what" $S --kubeconfig "$WORK/kc-token"
done

# Missing files that --check-config used to pass: every one named.
M=$WORK/missing
refused "--prometheus-token-file $M: No such file" $S --prometheus http://127.0.0.1:1 \
	--prometheus-token-file "$M"
refused "--prometheus-ca-file $M: No such file" $S --prometheus http://127.0.0.1:1 \
	--prometheus-ca-file "$M"
refused "--listen-cert-key $M: No such file" $S --listen "tls+tcp://127.0.0.1:1" --listen-cert-key "$M"
refused "--scorer-ca $M: No such file" $A --interfaces lo --scorer "tls+tcp://127.0.0.1:1" --scorer-ca "$M"
kubeconfig "$M" "$WORK/token" >"$WORK/kc-ca"
refused "certificate authority: $M: No such file" $S --kubeconfig "$WORK/kc-ca"
kubeconfig "$WORK/ca.pem" "$M" >"$WORK/kc-token"
refused "token file: $M: No such file" $S --kubeconfig "$WORK/kc-token"
refused "token file: $M: No such file" $RB --kubeconfig "$WORK/kc-token"
refused "--scorer-ca: $M: No such file" $RB "${RBA[@]}" --scorer-ca "$M"
echo "PASS: config files"
