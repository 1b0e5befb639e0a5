#!/usr/bin/env bash
# deploy/compose.yaml with docker-compose: nginx + 3 fanyi replicas + Redis.
# The file is used as users get it; only its documented variables change:
# the images (local stand-ins for Docker Hub's), the models (the fixture's
# synthetic zh-en in a host directory, FANYI_FETCH empty), the published
# address (a free 127.0.0.1 port) and a smaller size per replica.
#   - up: the models step completes, 3 replicas turn healthy, nginx answers
#   - every replica takes part (round robin through nginx)
#   - the cache is shared through Redis (when fanyi serve has --redis)
#   - a replica killed (SIGKILL) under load costs no client error, and the
#     restart policy brings it back
#   - --scale fanyi=4 + nginx reload: the new replica takes traffic; scaling
#     back to 2 under load costs no client error
# The host sends only to the 127.0.0.1 port nginx publishes; the rest is
# container to container on the project's network (no IP forwarding).
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/deploy/deploy_lib.sh"
need docker-compose
LOAD="python3 $FANYI_SOURCE_DIR/tests/deploy/load.py"

docker_start
for img in "$IMAGE" localhost/nginx:test localhost/redis:test; do
    "$DOCKER" image inspect "$img" >/dev/null || die "no $img (fixture deploy_image)"
done
models_root "$FY_TMP/models"
PORT=$(free_port)
U="http://127.0.0.1:$PORT"
export COMPOSE_PROJECT_NAME=fanyitest$$ FANYI_IMAGE=$IMAGE NGINX_IMAGE=localhost/nginx:test \
    REDIS_IMAGE=localhost/redis:test FANYI_MODELS="$FY_TMP/models" FANYI_FETCH= \
    FANYI_LISTEN="127.0.0.1:$PORT" FANYI_THREADS=1 FANYI_CPUS=1 FANYI_MEMORY=512m
compose() { timeout 240 docker-compose -f "$DEPLOY_SRC/compose.yaml" --ansi never "$@"; }
on_exit 'compose down -v -t 15 >/dev/null 2>&1'

# --- up
t0=$SECONDS
run compose up -d --no-build
expect_status 0
note "compose up: $((SECONDS - t0)) s"
[ "$FY_STATUS" = 0 ] || { compose logs --tail 20 >&2; finish; exit 1; }
replicas() { "$DOCKER" ps -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
    --filter label=com.docker.compose.service=fanyi --filter status=running; }
check "3 replicas running" [ "$(replicas | wc -l)" = 3 ]
models=$("$DOCKER" ps -aq --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
    --filter label=com.docker.compose.service=models)
check "the models step completed (exit 0)" [ "$("$DOCKER" inspect -f '{{.State.ExitCode}}' $models)" = 0 ]
for c in $(replicas); do
    check "replica healthy" [ "$("$DOCKER" inspect -f '{{.State.Health.Status}}' "$c")" = healthy ]
    check "replica read-only, uid 10001" [ "$("$DOCKER" inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$c")" = true ] &&
        [ "$("$DOCKER" exec "$c" id -u)" = 10001 ]
done
check "nginx answers /ready" wait_for 30 curl -fsS "$U/ready"
run curl -sS --max-time 20 "$U/translate" -d '{"text":"这家饭馆的饺子又便宜又好吃。"}'
expect_out '"translation":"[^"]' # visible text (the synthetic model makes nothing of 你好，世界。)

# translated C: what replica C's /metrics counts as answered translations.
translated() {
    "$DOCKER" exec "$1" curl -s 127.0.0.1:8989/metrics |
        awk '/^fanyi_requests_total\{endpoint="translate",status="200"\}/ {n += $2} END {print n + 0}'
}

# --- round robin: every replica takes part
run $LOAD "$U" --clients 1 --requests 30
expect_out ' errors 0 '
for c in $(replicas); do
    n=$(translated "$c")
    check "replica $(cut -c1-12 <<<"$c") answered translations ($n)" [ "$n" -ge 5 ]
done

# --- the shared cache (Redis)
if "$DOCKER" run --rm --network=none "$IMAGE" serve --help | grep -q -- '--redis'; then
    for _ in 1 2 3 4 5 6; do curl -s -o /dev/null "$U/translate" -d '{"text":"缓存共享测试。"}'; done
    keys=$(compose exec -T redis redis-cli dbsize | tr -dc 0-9)
    check "Redis holds cached sentences ($keys keys)" [ "${keys:-0}" -gt 0 ]
    hits=0
    for c in $(replicas); do
        h=$("$DOCKER" exec "$c" curl -s 127.0.0.1:8989/metrics |
            awk '/^fanyi_cache_lookups_total\{.*tier="redis".*hit/ {n += $2} END {print n + 0}')
        hits=$((hits + h))
    done
    check "replicas hit Redis for each other's sentences ($hits hits)" [ "$hits" -gt 0 ]
else
    echo "note: fanyi serve has no --redis yet: the shared-cache checks are skipped"
fi

# --- a replica's process killed (SIGKILL, as a crash would) under load: no
# client error, and the restart policy starts it again (docker kill would
# count as a stop by hand, which unless-stopped respects)
victim=$(replicas | head -1)
restarts0=$("$DOCKER" inspect -f '{{.RestartCount}}' "$victim")
$LOAD "$U" --clients 3 --requests 80 --seconds 60 >"$FY_TMP/load1" &
LOADPID=$!
sleep 1
kill -KILL "$("$DOCKER" inspect -f '{{.State.Pid}}' "$victim")"
wait "$LOADPID"
note "SIGKILL under load: $(cat "$FY_TMP/load1")"
check "no client error when a replica is killed: $(cat "$FY_TMP/load1")" grep -q ' errors 0 ' "$FY_TMP/load1"
check "the killed replica is restarted" wait_for 30 sh -c \
    "[ \$($DOCKER inspect -f '{{.RestartCount}}' $victim) -gt $restarts0 ] && [ \$($DOCKER inspect -f '{{.State.Running}}' $victim) = true ]"

# --- --scale 4 + reload: the new replica takes traffic
t0=$SECONDS
run compose up -d --no-build --no-recreate --scale fanyi=4
expect_status 0
check "4 replicas" wait_for 60 sh -c "[ \$($DOCKER ps -q --filter label=com.docker.compose.project=$COMPOSE_PROJECT_NAME --filter label=com.docker.compose.service=fanyi --filter health=healthy | wc -l) = 4 ]"
run compose exec -T nginx nginx -s reload -q
expect_status 0
note "scale to 4 + reload: $((SECONDS - t0)) s"
sleep 1
before=()
for c in $(replicas); do before+=("$c:$(translated "$c")"); done
run $LOAD "$U" --clients 1 --requests 40
expect_out ' errors 0 '
grew=0
for cn in "${before[@]}"; do
    c=${cn%%:*}
    [ "$(translated "$c")" -gt "${cn#*:}" ] && grew=$((grew + 1))
done
check "all 4 replicas answered after the reload ($grew)" [ "$grew" = 4 ]

# --- scale back to 2 under load: the stopped replicas drain, nginx retries
$LOAD "$U" --clients 3 --requests 100 --seconds 60 >"$FY_TMP/load2" &
LOADPID=$!
sleep 0.5
run compose up -d --no-build --no-recreate --scale fanyi=2
compose exec -T nginx nginx -s reload >/dev/null 2>&1
wait "$LOADPID"
note "scale 4 -> 2 under load: $(cat "$FY_TMP/load2")"
check "no client error while scaling down: $(cat "$FY_TMP/load2")" grep -q ' errors 0 ' "$FY_TMP/load2"
check "2 replicas" [ "$(replicas | wc -l)" = 2 ]

t0=$SECONDS
run compose down -v -t 15
expect_status 0
note "compose down: $((SECONDS - t0)) s"
check "nothing left running" [ -z "$("$DOCKER" ps -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")" ]
finish
