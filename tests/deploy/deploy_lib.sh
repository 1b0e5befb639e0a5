# deploy_lib.sh - what the deploy tests share: a docker daemon of their own,
# the local Debian base image, the fanyi image, free loopback ports and
# bounded waits. Sourced after tests/lib.sh.
#
# Network: only 127.0.0.0/8 from the host. dockerd runs without its default
# bridge, iptables rules or IP forwarding (--bridge=none --iptables=false
# --ip-forward=false); containers the host talks to use --network=host or a
# port published on 127.0.0.1.
#
# Cache ($FANYI_BUILD_DIR/deploy, kept between runs): the debootstrap'd base
# as a tarball, dockerd's data root (images and their layers, so a rebuild
# with unchanged sources takes seconds), the image saved for podman.

DEPLOY_SRC="$FANYI_SOURCE_DIR/deploy"
DEPLOY_CACHE="$FANYI_BUILD_DIR/deploy"
DOCKER=/usr/bin/docker # Debian's client, whatever else is first on PATH
BASE_IMAGE=localhost/debian:bookworm
IMAGE=localhost/fanyi:test
FIXTURE_MODEL="$FANYI_BUILD_DIR/models/tiny-int8-sl"
export DOCKER_BUILDKIT=0 # the classic builder: BuildKit would look for its frontend online
mkdir -p "$DEPLOY_CACHE"

# Cleanup steps run in reverse order on exit, also when a test fails.
FY_CLEANUP=()
on_exit() { FY_CLEANUP+=("$*"); }
run_cleanup() {
    local i
    for ((i = ${#FY_CLEANUP[@]} - 1; i >= 0; i--)); do eval "${FY_CLEANUP[$i]}" || true; done
    rm -rf "$FY_TMP"
}
trap run_cleanup EXIT
trap 'exit 130' INT TERM

note() { echo "[$(date +%T)] $*"; }
die() {
    echo "FATAL: $*" >&2
    exit 1
}

# free_port: a TCP port free on 127.0.0.1 now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for SECONDS CMD...: runs CMD every 0.2 s until it succeeds; 1 if it never does.
wait_for() {
    local until=$((SECONDS + $1))
    shift
    while ! "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$until" ] || return 1
        sleep 0.2
    done
}

# http_code URL [curl options...]: the status code of a request (000: none).
http_code() {
    local url=$1
    shift
    curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$@" "$url" || true
}

# Requires the commands named, or skips the test (CTest SKIP_RETURN_CODE 77).
need() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || {
            echo "SKIP: $c is not installed (scripts/setup.sh installs it)"
            exit 77
        }
    done
}

# --- dockerd ---------------------------------------------------------------

# A daemon left behind by a test that was killed holds the data root: stop
# it (the pid file names it; only a dockerd on our data root is touched).
stale_dockerd() {
    local pid
    pid=$(cat "$DEPLOY_CACHE/dockerd.pid" 2>/dev/null) || return 0
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" |
        grep -q -- "--data-root $DEPLOY_CACHE/docker "; then
        note "stopping a dockerd left by an earlier run (pid $pid)"
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 150); do [ -d "/proc/$pid" ] || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$DEPLOY_CACHE/dockerd.pid"
}

# docker_start: starts dockerd on $DEPLOY_CACHE/docker and points
# DOCKER_HOST at it; stopped on exit with everything it runs.
docker_start() {
    need dockerd "$DOCKER"
    stale_dockerd
    DOCKER_RUN=$(mktemp -d /tmp/fanyi-dockerd.XXXXXX) # short: socket paths have a limit
    dockerd --data-root "$DEPLOY_CACHE/docker" --exec-root "$DOCKER_RUN/exec" \
        -H "unix://$DOCKER_RUN/docker.sock" --pidfile "$DOCKER_RUN/docker.pid" \
        --bridge=none --iptables=false --ip-forward=false --ip-masq=false \
        >"$DOCKER_RUN/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    echo "$DOCKERD_PID" >"$DEPLOY_CACHE/dockerd.pid"
    on_exit docker_stop
    export DOCKER_HOST="unix://$DOCKER_RUN/docker.sock"
    wait_for 60 "$DOCKER" info || {
        tail -20 "$DOCKER_RUN/dockerd.log" >&2
        die "dockerd did not start"
    }
    # Containers of an earlier run that was killed: this data root is ours.
    local old
    old=$("$DOCKER" ps -aq)
    [ -z "$old" ] || "$DOCKER" rm -f $old >/dev/null
}

docker_stop() {
    [ -n "${DOCKERD_PID:-}" ] || return 0
    local left
    left=$("$DOCKER" ps -q 2>/dev/null)
    [ -z "$left" ] || "$DOCKER" rm -f $left >/dev/null 2>&1
    kill -TERM "$DOCKERD_PID" 2>/dev/null
    for _ in $(seq 150); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$DOCKERD_PID" 2>/dev/null
    wait "$DOCKERD_PID" 2>/dev/null
    rm -f "$DEPLOY_CACHE/dockerd.pid"
    # dockerd leaves its netns bind mount (exec-root/netns/default) behind.
    local m
    for m in $(awk -v r="$DOCKER_RUN/" 'index($2, r) == 1 {print $2}' /proc/self/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
    rm -rf "$DOCKER_RUN"
    DOCKERD_PID=
}

# --- images ----------------------------------------------------------------

# The machine's Debian mirror (the URI its apt sources name for bookworm).
debian_mirror() {
    local uri
    uri=$(grep -hs -A3 '^Types: deb$' /etc/apt/sources.list.d/*.sources |
        awk '/^URIs:/ {u=$2} /^Suites:.*bookworm( |$)/ {print u; exit}')
    [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' \
        /etc/apt/sources.list 2>/dev/null)
    echo "${uri:-http://deb.debian.org/debian}"
}

# base_image: localhost/debian:bookworm, a minimal Debian bookworm made by
# debootstrap (no registry is reachable here); its tarball is cached.
base_image() {
    "$DOCKER" image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
    local tar="$DEPLOY_CACHE/debian-bookworm.tar"
    if [ ! -s "$tar" ]; then
        need debootstrap
        local root="$DEPLOY_CACHE/rootfs.tmp" mirror
        mirror=$(debian_mirror)
        rm -rf "$root"
        note "debootstrap bookworm from $mirror"
        debootstrap --variant=minbase bookworm "$root" "$mirror" >"$DEPLOY_CACHE/debootstrap.log" 2>&1 ||
            die "debootstrap failed: $(tail -5 "$DEPLOY_CACHE/debootstrap.log")"
        # The same apt sources as the machine's Debian ones (updates, security).
        if [ -f /etc/apt/sources.list.d/debian.sources ]; then
            cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/debian.sources"
            rm -f "$root/etc/apt/sources.list"
        fi
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
        tar -C "$root" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
        rm -rf "$root"
    fi
    note "docker import $BASE_IMAGE"
    "$DOCKER" import "$tar" "$BASE_IMAGE" >/dev/null
}

# build_image TAG DOCKERFILE CONTEXT [docker build options...]: builds
# with the local base (apt inside reaches the Debian mirror: host network).
build_image() {
    local tag=$1 file=$2 context=$3
    shift 3
    "$DOCKER" build -q --network=host --build-arg "BASE=$BASE_IMAGE" -f "$file" -t "$tag" "$@" \
        "$context" >"$FY_TMP/build.log" 2>&1 || {
        tail -30 "$FY_TMP/build.log" >&2
        die "docker build of $tag failed"
    }
}

# models_root DIR: DIR/zh-en holds the fixture's synthetic model (hard links).
models_root() {
    [ -f "$FIXTURE_MODEL/vocab.zhen.spm" ] || die "no fixture model in $FIXTURE_MODEL (synth_models)"
    mkdir -p "$1"
    cp -al "$FIXTURE_MODEL" "$1/zh-en" 2>/dev/null || cp -a "$FIXTURE_MODEL" "$1/zh-en"
    chmod -R a+rX "$1"
}

# A check that counts like lib.sh's: check "what" CMD...
check() {
    local what=$1
    shift
    FY_LAST=$what
    if "$@"; then ok; else
        FY_FAIL=$((FY_FAIL + 1))
        echo "FAIL: $what" >&2
    fi
}

# mirror_start DIR: the fixture model served by tests/modelmgmt/test_server.py
# on a free loopback port at a catalogue-like path, and a manifest for it.
# Sets MIRROR_URL (for --mirror), MIRROR_MANIFEST, MIRROR_LOG.
mirror_start() {
    local dir=$1
    mkdir -p "$dir/srv"
    MIRROR_MANIFEST="$dir/manifest.json"
    MIRROR_LOG="$dir/requests.log"
    python3 - "$FIXTURE_MODEL" "$dir/srv" "$MIRROR_MANIFEST" <<'PY'
import hashlib, json, os, shutil, sys
src, srv, out = sys.argv[1:4]
files = []
for n in sorted(os.listdir(src)):
    loc = f"models/zh-en/{n}"
    os.makedirs(os.path.join(srv, os.path.dirname(loc)), exist_ok=True)
    shutil.copy(os.path.join(src, n), os.path.join(srv, loc))
    data = open(os.path.join(src, n), "rb").read()
    files.append({"name": n, "location": loc, "size": len(data),
                  "sha256": hashlib.sha256(data).hexdigest()})
json.dump({"schema": 1, "base_url": "http://127.0.0.1:1/unused/", "models": {"zh-en": {
    "version": "synth", "source": "zh", "target": "en", "architecture": "tiny",
    "channel": "release", "files": files}}}, open(out, "w"))
PY
    chmod -R a+rX "$dir"
    python3 "$FANYI_SOURCE_DIR/tests/modelmgmt/test_server.py" --root "$dir/srv" \
        --port-file "$dir/port" --log "$MIRROR_LOG" --lifetime 550 &
    MIRROR_PID=$!
    on_exit 'kill "$MIRROR_PID" 2>/dev/null'
    wait_for 10 test -s "$dir/port" || die "the mirror did not start"
    MIRROR_URL="http://127.0.0.1:$(cat "$dir/port")/ok/"
    touch "$MIRROR_LOG"
}

# --- podman ----------------------------------------------------------------

# podman_setup: PODMAN runs podman on a store of our own under
# $DEPLOY_CACHE/podman, with what this machine needs in containers.conf
# (limits root cannot raise, runc, cgroupfs); containers of an earlier run
# that was killed are removed first, ours at exit.
podman_setup() {
    local run="/tmp/fanyi-podman-$(printf '%s' "$DEPLOY_CACHE" | md5sum | cut -c1-8)"
    mkdir -p "$run"
    cat >"$run/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
    export CONTAINERS_CONF="$run/containers.conf"
    # The store remembers these paths: they stay the same between runs.
    PODMAN="podman --root $DEPLOY_CACHE/podman --runroot $run/run --tmpdir $run/tmp"
    podman_clean
    on_exit podman_clean
}
podman_clean() {
    $PODMAN pod rm -af -t 10 >/dev/null 2>&1
    $PODMAN rm -af -t 10 >/dev/null 2>&1
    $PODMAN volume prune -f >/dev/null 2>&1
}

# podman_image NAME: loads $DEPLOY_CACHE/NAME.tar (saved by deploy_image)
# unless podman holds that image already.
podman_image() {
    local want have
    want=$(cat "$DEPLOY_CACHE/$1.id")
    have=$($PODMAN image inspect -f '{{.Id}}' "localhost/$1:test" 2>/dev/null)
    [ "sha256:$have" = "$want" ] && return 0
    $PODMAN load -q -i "$DEPLOY_CACHE/$1.tar" >/dev/null || die "podman load of $1.tar failed"
}
