#!/usr/bin/env bash
# deploy/systemd/fanyi.service:
#   - systemd-analyze security --offline=yes: exposure <= 2.0 (and the gate
#     is not vacuous: a bare unit with the same ExecStart fails it)
#   - under real systemd (PID 1 of a systemd-nspawn container booted from
#     the fanyi image + systemd, the unit installed as its header says):
#     systemd-analyze verify prints nothing; the service starts, is ready,
#     translates, runs sandboxed (dynamic non-root user, no capabilities, no
#     new privileges, seccomp, read-only /); after kill -9 it is restarted;
#     systemctl stop with a request in flight drains: the request gets 200,
#     the unit ends with success
# nspawn, not podman --systemd: systemd in a podman container cannot set up
# ProtectProc= with PrivateUsers= (systemd issue #29656, "Failed to set up
# user namespacing"); nspawn runs the unit as a host would.
# The container shares the host's network (FANYI_HOST=127.0.0.1 in the env
# file): loopback only. Its root is the image's files, unchanged
# (--volatile=overlay: what systemd writes goes to a tmpfs).
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/deploy/deploy_lib.sh"
need podman runc systemd-analyze
UNIT="$DEPLOY_SRC/systemd/fanyi.service"
[ -s "$DEPLOY_CACHE/fanyi-systemd.tar" ] || die "no $DEPLOY_CACHE/fanyi-systemd.tar (fixture deploy_image)"

# --- the exposure score, offline (--threshold counts tenths: 20 = 2.0)
run systemd-analyze security --offline=yes --threshold=20 "$UNIT"
expect_status 0
score=$(sed -n 's/.*Overall exposure level for fanyi.service: \([0-9.]*\).*/\1/p' "$FY_TMP/out")
note "systemd-analyze security: exposure $score"
check "exposure $score <= 2.0" awk -v s="$score" 'BEGIN {exit !(s != "" && s <= 2.0)}'
printf '[Service]\nExecStart=/usr/local/bin/fanyi serve\n' >"$FY_TMP/fanyi.service"
run systemd-analyze security --offline=yes --threshold=20 "$FY_TMP/fanyi.service"
check "a bare unit fails the same gate" [ "$FY_STATUS" != 0 ]

# --- under systemd
need systemd-nspawn nsenter podman runc
podman_setup
# The image's files as a directory for nspawn, extracted again only when
# the image changed.
ROOT="$DEPLOY_CACHE/nspawn-root"
want=$(cat "$DEPLOY_CACHE/fanyi-systemd.id")
if [ "$(cat "$ROOT.id" 2>/dev/null)" != "$want" ]; then
    podman_image fanyi-systemd
    rm -rf "$ROOT" "$ROOT.id"
    mkdir -p "$ROOT"
    ctr=$($PODMAN create localhost/fanyi-systemd:test)
    $PODMAN export "$ctr" | tar -C "$ROOT" -x || die "cannot extract the systemd image"
    $PODMAN rm "$ctr" >/dev/null
    echo "$want" >"$ROOT.id"
fi
models_root "$FY_TMP/models"
PORT=$(free_port)
U="http://127.0.0.1:$PORT"
printf 'FANYI_HOST=127.0.0.1\nFANYI_PORT=%s\nFANYI_THREADS=1\nFANYI_CACHE_MB=0\n' "$PORT" >"$FY_TMP/fanyi.env"
chmod a+r "$FY_TMP/fanyi.env"
t0=$SECONDS
systemd-nspawn -q -b -D "$ROOT" --volatile=overlay --register=no --keep-unit \
    --bind-ro="$FY_TMP/models:/var/lib/fanyi/models" --bind-ro="$FY_TMP/fanyi.env:/etc/fanyi/fanyi.env" \
    >"$FY_TMP/console" 2>&1 </dev/null &
NSPAWN=$!
on_exit nspawn_stop
# SIGTERM asks nspawn's systemd to power off; SIGKILL if it does not in 30 s.
nspawn_stop() {
    kill -TERM "$NSPAWN" 2>/dev/null || return 0
    for _ in $(seq 150); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$NSPAWN" 2>/dev/null
    wait "$NSPAWN" 2>/dev/null
}
wait_for 20 pgrep -P "$NSPAWN" || { cat "$FY_TMP/console" >&2; die "systemd-nspawn did not start"; }
LEADER=$(pgrep -P "$NSPAWN" | head -1)
# A command inside the container (its mounts, PIDs, systemd).
sd() { timeout 30 nsenter -t "$LEADER" -a "$@"; }
prop() { sd systemctl show -P "$1" fanyi.service; }
check "fanyi.service ready within 60 s" wait_for 60 curl -fsS "$U/ready"
note "systemd boot to ready: $((SECONDS - t0)) s"
[ "$FY_FAIL" = 0 ] || { sd systemctl status fanyi.service >&2; sd journalctl -b --no-pager -n 30 >&2; }
check "the unit is active" [ "$(sd systemctl is-active fanyi.service)" = active ]

run sd systemd-analyze verify --man=no /etc/systemd/system/fanyi.service
expect_status 0
check "systemd-analyze verify prints nothing" [ ! -s "$FY_TMP/out" ] && [ ! -s "$FY_TMP/err" ]
[ -s "$FY_TMP/err" ] && cat "$FY_TMP/err" >&2

run curl -sS --max-time 20 "$U/translate" -d '{"text":"这家饭馆的饺子又便宜又好吃。"}'
expect_out '"translation":"[^"]' # visible text (the synthetic model makes nothing of 你好，世界。)

pid=$(prop MainPID)
st=$(sd cat "/proc/$pid/status")
uid=$(awk '/^Uid:/ {print $2}' <<<"$st")
check "runs as a dynamic user (uid $uid), not root" [ -n "$uid" ] && [ "$uid" -ge 61184 ] && [ "$uid" -le 65519 ]
check "no effective capabilities" grep -Eq '^CapEff:\s+0+$' <<<"$st"
check "no bounding capabilities" grep -Eq '^CapBnd:\s+0+$' <<<"$st"
check "no new privileges" grep -Eq '^NoNewPrivs:\s+1$' <<<"$st"
check "seccomp filter on" grep -Eq '^Seccomp:\s+2$' <<<"$st"
check "ProtectSystem=strict: / is read-only for it" awk '$5 == "/" {split($6, o, ","); for (i in o) if (o[i] == "ro") f = 1} END {exit !f}' \
    <<<"$(sd cat "/proc/$pid/mountinfo")"

# --- kill -9: Restart=on-failure brings it back
restarts0=$(prop NRestarts)
sd sh -c "kill -KILL $pid"
restarted() { [ "$(prop NRestarts)" -gt "$restarts0" ]; }
check "restarted after kill -9" wait_for 30 restarted
check "ready again" wait_for 30 curl -fsS "$U/ready"
pid2=$(prop MainPID)
check "a new process ($pid -> $pid2)" [ -n "$pid2" ] && [ "$pid2" != 0 ] && [ "$pid2" != "$pid" ]

# --- systemctl stop drains a request in flight
text=$(python3 -c 'print("".join(f"第{i}天天气很好，我们去公园散步吧。" for i in range(200)))')
printf '{"text":"%s"}' "$text" >"$FY_TMP/long.json"
curl -s -o "$FY_TMP/long.out" -w '%{http_code}' --max-time 30 "$U/translate" \
    -H 'Content-Type: application/json' --data-binary @"$FY_TMP/long.json" >"$FY_TMP/long.code" &
CURL=$!
wait_for 10 sh -c "curl -s $U/metrics | grep -Eq '^fanyi_sentences_in_flight [1-9]'" ||
    echo "note: the long request was not seen in flight"
t0=$(date +%s.%N)
run sd systemctl stop fanyi.service
expect_status 0
stop_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
wait "$CURL"
note "systemctl stop took $stop_s s with a request in flight"
check "request in flight answered 200 (got $(cat "$FY_TMP/long.code"))" [ "$(cat "$FY_TMP/long.code")" = 200 ]
check "its answer is a translation" grep -Eq '"translation":"[^"]' "$FY_TMP/long.out"
check "the unit stopped cleanly (Result=$(prop Result))" [ "$(prop Result)" = success ]
check "inactive, not failed" [ "$(sd systemctl is-active fanyi.service)" = inactive ]
sd journalctl -u fanyi.service --no-pager -o cat >"$FY_TMP/journal" 2>&1
check "journal: drain, then stopped" grep -q 'SIGTERM received, finishing requests' "$FY_TMP/journal"
check "journal: nothing cut short" eval '! grep -q "cut short" "$FY_TMP/journal"'
finish
