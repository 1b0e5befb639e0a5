#!/usr/bin/env bash
# deploy/k8s's Deployment run for real by `podman kube play` (no cluster
# can run here). A test overlay changes only what this machine needs: the
# local image, one replica, the init container kept after it ran (podman's
# annotation on the Deployment), the host network with a free loopback port
# (env and probe ports; no declared container port: podman would publish
# it, which a host network cannot), FANYI_FETCH=zh-en from a loopback
# mirror (its manifest mounted into the init container), and the pod's
# restartPolicy OnFailure: podman 4.3 (Debian 12) gives init containers the
# pod's policy (fixed upstream in 2023), so under a Deployment's Always a
# finished init container is started again and again, and kube play,
# waiting for it to exit, hung whenever a restart came before its wait
# looked. Everything else is the rendered base: init container, ConfigMap,
# probes, resources, security.
#   - the init container fetches the model into the pod's emptyDir, exits 0
#     and is not run again
#   - the server becomes ready (/ready), translates, its liveness probe
#     (podman's health check) passes
#   - the security settings are applied: uid 10001, no capabilities, no new
#     privileges, seccomp, read-only root, read-only model mount, memory limit
#   - stopping the pod drains: exit 0
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/deploy/deploy_lib.sh"
need podman kubectl runc
[ -s "$DEPLOY_CACHE/fanyi.tar" ] || die "no $DEPLOY_CACHE/fanyi.tar (fixture deploy_image)"
podman_setup

t0=$SECONDS
podman_image fanyi
note "image in podman's store ($((SECONDS - t0)) s)"

mirror_start "$FY_TMP/mirror"
PORT=$(free_port)
U="http://127.0.0.1:$PORT"
mkdir -p "$FY_TMP/play"
cp -r "$DEPLOY_SRC/k8s" "$FY_TMP/k8s"
cat >"$FY_TMP/play/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../k8s
images:
  - name: fanyi
    newName: localhost/fanyi
    newTag: test
configMapGenerator:
  - name: fanyi-config
    behavior: merge
    literals:
      - FANYI_FETCH=zh-en
      - FANYI_FETCH_MIRROR=$MIRROR_URL
      - FANYI_FETCH_MANIFEST=/etc/fanyi-mirror/manifest.json
patches:
  - target:
      kind: Deployment
      name: fanyi
    patch: |-
      - {op: replace, path: /spec/replicas, value: 1}
      - {op: add, path: /spec/template/spec/hostNetwork, value: true}
      - {op: add, path: /metadata/annotations, value: {io.podman.annotations.init.container.type: always}}
      - {op: add, path: /spec/template/spec/restartPolicy, value: OnFailure}
      - {op: test, path: /spec/template/spec/containers/0/env/0/name, value: FANYI_HOST}
      - {op: replace, path: /spec/template/spec/containers/0/env/0/value, value: 127.0.0.1}
      - {op: test, path: /spec/template/spec/containers/0/env/1/name, value: FANYI_PORT}
      - {op: replace, path: /spec/template/spec/containers/0/env/1/value, value: "$PORT"}
      - {op: remove, path: /spec/template/spec/containers/0/ports}
      - {op: replace, path: /spec/template/spec/containers/0/startupProbe/httpGet/port, value: $PORT}
      - {op: replace, path: /spec/template/spec/containers/0/readinessProbe/httpGet/port, value: $PORT}
      - {op: replace, path: /spec/template/spec/containers/0/livenessProbe/httpGet/port, value: $PORT}
      - {op: add, path: /spec/template/spec/volumes/-, value: {name: mirror, hostPath: {path: "$(dirname "$MIRROR_MANIFEST")", type: Directory}}}
      - {op: add, path: /spec/template/spec/initContainers/0/volumeMounts/-, value: {name: mirror, mountPath: /etc/fanyi-mirror, readOnly: true}}
EOF
run kubectl kustomize "$FY_TMP/play"
expect_status 0
cp "$FY_TMP/out" "$FY_TMP/play.yaml"

# Every container in the podman tests' own store (they run one at a time):
# state, exit code and last log lines; then the model mirror's log.
show_containers() {
    local c
    for c in $(timeout 20 $PODMAN ps -a --format '{{.Names}}'); do
        echo "--- $c: $(timeout 20 $PODMAN inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$c")" >&2
        timeout 20 $PODMAN logs --tail 20 "$c" >&2
    done
    if [ -f "$MIRROR_LOG" ]; then
        echo "--- mirror log" >&2
        tail -20 "$MIRROR_LOG" >&2
    fi
}

t0=$SECONDS
on_exit 'timeout 60 $PODMAN kube down "$FY_TMP/play.yaml" >/dev/null 2>&1'
run timeout 120 $PODMAN kube play --network host "$FY_TMP/play.yaml"
expect_status 0
# On failure, say where it stopped: kube play waits for the init container.
if [ "$FY_STATUS" != 0 ]; then
    cat "$FY_TMP/out" "$FY_TMP/err" >&2
    show_containers
    finish
    exit 1
fi
check "ready (/ready) within 60 s" wait_for 60 curl -fsS "$U/ready"
note "kube play to ready: $((SECONDS - t0)) s"
POD=$($PODMAN pod ps -q --filter name=fanyi | head -1)
CTR=$($PODMAN ps -a --pod --filter "pod=$POD" --format '{{.Names}}' | grep -- '-fanyi$' | head -1)
INIT=$($PODMAN ps -a --pod --filter "pod=$POD" --format '{{.Names}}' | grep -- '-fetch-models$' | head -1)
note "pod ${POD:0:12}: containers $CTR, init $INIT"
[ "$FY_FAIL" = 0 ] || show_containers

# The init container (kept: the annotation makes it podman's "always" kind;
# "once" ones are removed, racily in podman 4.3) fetched the
# three files and exited 0; the server uses them.
check "init container exited 0" [ "$($PODMAN inspect -f '{{.State.ExitCode}}' "$INIT")" = 0 ]
check "init container fetched 3 files" [ "$(grep -c ' 200$' "$MIRROR_LOG")" = 3 ]
check "init container ran once" [ "$($PODMAN logs "$INIT" 2>&1 | grep -c '^fanyi-entrypoint: fanyi model fetch')" = 1 ]
run curl -sS --max-time 20 "$U/translate" -d '{"text":"这家饭馆的饺子又便宜又好吃。"}'
expect_out '"translation":"[^"]' # visible text (the synthetic model makes nothing of 你好，世界。)
expect_out '"target":"en"'

# The liveness probe became podman's health check; run it.
check "podman has the liveness probe as health check" grep -q '/health' \
    <<<"$($PODMAN inspect -f '{{json .Config.Healthcheck}}' "$CTR")"
check "health check passes" $PODMAN healthcheck run "$CTR"

# Security settings as applied to the running process.
pid=$($PODMAN inspect -f '{{.State.Pid}}' "$CTR")
st=$(cat "/proc/$pid/status")
check "uid 10001" grep -Eq '^Uid:\s+10001\s+10001\s+10001\s+10001$' <<<"$st"
check "gid 10001" grep -Eq '^Gid:\s+10001\s' <<<"$st"
check "no effective capabilities" grep -Eq '^CapEff:\s+0+$' <<<"$st"
check "no bounding capabilities" grep -Eq '^CapBnd:\s+0+$' <<<"$st"
check "no new privileges" grep -Eq '^NoNewPrivs:\s+1$' <<<"$st"
check "seccomp filter on" grep -Eq '^Seccomp:\s+2$' <<<"$st"
check "root filesystem read-only" awk '$5 == "/" {split($6, o, ","); for (i in o) if (o[i] == "ro") f = 1} END {exit !f}' \
    "/proc/$pid/mountinfo"
check "models mounted read-only" awk '$5 == "/models" {split($6, o, ","); for (i in o) if (o[i] == "ro") f = 1} END {exit !f}' \
    "/proc/$pid/mountinfo"
check "memory limit 768Mi" [ "$($PODMAN inspect -f '{{.HostConfig.Memory}}' "$CTR")" = $((768 << 20)) ]
check "FANYI_THREADS from limits.cpu" grep -q '^fanyi_worker_threads 2$' <<<"$(curl -s "$U/metrics")"

# Stop: SIGTERM, drain, exit 0.
t0=$SECONDS
run timeout 60 $PODMAN pod stop -t 30 "$POD"
expect_status 0
note "pod stop: $((SECONDS - t0)) s"
check "exit code 0 after SIGTERM" [ "$($PODMAN inspect -f '{{.State.ExitCode}}' "$CTR")" = 0 ]
$PODMAN logs "$CTR" >"$FY_TMP/logs" 2>&1
check "log: drained and stopped" grep -q 'fanyi serve: stopped' "$FY_TMP/logs"
finish
