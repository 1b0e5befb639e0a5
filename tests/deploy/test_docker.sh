#!/usr/bin/env bash
# deploy/Dockerfile's image, run the way docs/deploy.md tells users to:
# read-only root, non-root, no capabilities, no new privileges, memory and
# CPU limits, the fixture's synthetic model in the /models volume.
#   - image settings: user, volume, health check, stop signal, entrypoint
#   - it translates; the sandbox is what it should be inside
#   - the image's own HEALTHCHECK turns the container healthy
#   - docker stop drains: a request in flight finishes with 200, exit 0
#   - fetch at first start: FANYI_FETCH from a loopback mirror into an empty
#     volume, then serve; a second start downloads nothing
# Host network with FANYI_HOST=127.0.0.1: only loopback traffic.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/deploy/deploy_lib.sh"

docker_start
"$DOCKER" image inspect "$IMAGE" >/dev/null || die "no $IMAGE (fixture deploy_image)"
models_root "$FY_TMP/models"
NAME=fanyi-test-$$
on_exit '"$DOCKER" rm -f "$NAME" "$NAME-fetch" >/dev/null 2>&1; "$DOCKER" volume rm -f "$NAME-models" >/dev/null 2>&1'

# --- what the image declares
cfg() { "$DOCKER" image inspect -f "$1" "$IMAGE"; }
check "runs as 10001:10001" [ "$(cfg '{{.Config.User}}')" = "10001:10001" ]
check "/models and /data are volumes" [ "$(cfg '{{json .Config.Volumes}}')" = '{"/data":{},"/models":{}}' ]
check "health check on /health" grep -q '/health' <<<"$(cfg '{{json .Config.Healthcheck.Test}}')"
check "stop signal SIGTERM" [ "$(cfg '{{.Config.StopSignal}}')" = "SIGTERM" ]
check "entrypoint + serve" [ "$(cfg '{{json .Config.Entrypoint}} {{json .Config.Cmd}}')" = '["fanyi-entrypoint"] ["serve"]' ]
check "listens on all addresses by default" grep -q 'FANYI_HOST=0.0.0.0' <<<"$(cfg '{{json .Config.Env}}')"

# --- run it locked down
PORT=$(free_port)
U="http://127.0.0.1:$PORT"
t0=$SECONDS
"$DOCKER" run -d --name "$NAME" --network=host --read-only --cap-drop ALL \
    --security-opt no-new-privileges --memory 512m --cpus 1 --pids-limit 256 \
    -e FANYI_HOST=127.0.0.1 -e FANYI_PORT="$PORT" -e FANYI_THREADS=1 -e FANYI_CACHE_MB=0 \
    -v "$FY_TMP/models:/models:ro" "$IMAGE" >/dev/null
check "ready within 30 s" wait_for 30 curl -fsS "$U/ready"
note "container ready ($((SECONDS - t0)) s)"
run curl -sS --max-time 20 "$U/translate" -H 'Content-Type: application/json' -d '{"text":"这家饭馆的饺子又便宜又好吃。"}'
expect_status 0
expect_out '"translation":"[^"]' # visible text (the synthetic model makes nothing of 你好，世界。)
expect_out '"target":"en"'

in_ctr() { "$DOCKER" exec "$NAME" "$@"; }
check "uid 10001 inside" [ "$(in_ctr id -u)" = 10001 ]
check "root filesystem read-only" eval '! in_ctr sh -c "touch /probe" 2>/dev/null'
check "model volume read-only" eval '! in_ctr sh -c "touch /models/probe" 2>/dev/null'
status=$(in_ctr cat /proc/1/status)
check "no effective capabilities" grep -Eq '^CapEff:\s+0+$' <<<"$status"
check "no bounding capabilities" grep -Eq '^CapBnd:\s+0+$' <<<"$status"
check "no new privileges" grep -Eq '^NoNewPrivs:\s+1$' <<<"$status"
check "fanyi is PID 1 (gets SIGTERM itself)" [ "$(in_ctr cat /proc/1/comm)" = fanyi ]
# The image has the Vulkan backend and its loader; without a GPU driver (no
# NVIDIA toolkit here) it says so and serves on the CPU ("auto").
devices=$(in_ctr fanyi devices 2>&1 || true)
check "fanyi devices: the CPU" grep -q '^cpu: kernel ' <<<"$devices"
check "fanyi devices: Vulkan built in, no driver here" grep -q 'vulkan: unavailable: no Vulkan driver' <<<"$devices"
check "no Vulkan loader missing (libvulkan1 in the image)" eval '! grep -q "libvulkan.so.1" <<<"$devices"'
check "serving on the CPU (--device auto)" eval '"$DOCKER" logs "$NAME" 2>&1 | grep -q "devices=cpu$"'

# --- the image's HEALTHCHECK (10 s interval): healthy
health() { "$DOCKER" inspect -f '{{.State.Health.Status}}' "$NAME"; }
t0=$SECONDS
check "healthy by the image's health check" wait_for 45 sh -c "[ \"\$($DOCKER inspect -f '{{.State.Health.Status}}' $NAME)\" = healthy ]"
note "health: $(health) after $((SECONDS - t0)) s"

# --- docker stop drains a request in flight
text=$(python3 -c 'print("".join(f"第{i}天天气很好，我们去公园散步吧。" for i in range(200)))')
printf '{"text":"%s"}' "$text" >"$FY_TMP/long.json"
curl -s -o "$FY_TMP/long.out" -w '%{http_code}' --max-time 30 "$U/translate" \
    -H 'Content-Type: application/json' --data-binary @"$FY_TMP/long.json" >"$FY_TMP/long.code" &
CURL=$!
wait_for 10 sh -c "curl -s $U/metrics | grep -Eq '^fanyi_sentences_in_flight [1-9]'" ||
    echo "note: the long request was not seen in flight"
t0=$(date +%s.%N)
"$DOCKER" stop -t 15 "$NAME" >/dev/null
stop_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
wait "$CURL"
check "request in flight answered 200 (got $(cat "$FY_TMP/long.code"))" [ "$(cat "$FY_TMP/long.code")" = 200 ]
check "its answer is a translation" grep -Eq '"translation":"[^"]' "$FY_TMP/long.out"
check "exit code 0 after SIGTERM" [ "$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$NAME")" = 0 ]
check "stopped before the 15 s SIGKILL (${stop_s} s)" awk -v s="$stop_s" 'BEGIN {exit !(s < 12)}'
"$DOCKER" logs "$NAME" >"$FY_TMP/logs" 2>&1
check "log: drain, then stopped" grep -q 'SIGTERM received, finishing requests' "$FY_TMP/logs"
check "log: nothing cut short" eval '! grep -q "cut short" "$FY_TMP/logs"'
note "docker stop took $stop_s s with a request in flight"
"$DOCKER" rm "$NAME" >/dev/null

# --- fetch at first start (the entrypoint), from a loopback mirror
mirror_start "$FY_TMP/mirror"
"$DOCKER" volume create "$NAME-models" >/dev/null
PORT=$(free_port)
U="http://127.0.0.1:$PORT"
t0=$SECONDS
"$DOCKER" run -d --name "$NAME-fetch" --network=host --read-only --cap-drop ALL \
    --security-opt no-new-privileges -e FANYI_HOST=127.0.0.1 -e FANYI_PORT="$PORT" \
    -e FANYI_FETCH=zh-en -e FANYI_FETCH_MIRROR="$MIRROR_URL" -e FANYI_FETCH_MANIFEST=/etc/fanyi/manifest.json \
    -v "$MIRROR_MANIFEST:/etc/fanyi/manifest.json:ro" -v "$NAME-models:/models" "$IMAGE" >/dev/null
check "fetched and ready within 60 s" wait_for 60 curl -fsS "$U/ready"
note "fetch + start: $((SECONDS - t0)) s"
check "three files downloaded" [ "$(grep -c ' 200$' "$MIRROR_LOG")" = 3 ]
run curl -sS --max-time 20 "$U/translate" -d '{"text":"这家饭馆的饺子又便宜又好吃。"}'
expect_out '"translation":"[^"]' # visible text (the synthetic model makes nothing of 你好，世界。)
"$DOCKER" logs "$NAME-fetch" >"$FY_TMP/logs" 2>&1
check "log: fetch, then serve" grep -q 'fanyi-entrypoint: fanyi model fetch zh-en into /models' "$FY_TMP/logs"
"$DOCKER" restart -t 15 "$NAME-fetch" >/dev/null
check "ready again after a restart" wait_for 60 curl -fsS "$U/ready"
check "the second start downloaded nothing" [ "$(grep -c ' 200$' "$MIRROR_LOG")" = 3 ]
"$DOCKER" stop -t 15 "$NAME-fetch" >/dev/null
check "exit code 0" [ "$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$NAME-fetch")" = 0 ]
finish
