#!/usr/bin/env bash
# setup.sh [--serve] - installs dependencies. Idempotent and non-interactive;
# run as root or with sudo available.
#
#   scripts/setup.sh          everything the build and the whole test suite use
#                             (.ci/run, scripts/test.sh): the Debian packages, then
#                             the pinned npm packages (npm ci), skipped when
#                             node_modules already holds what package-lock.json pins
#   scripts/setup.sh --serve  only what building and serving fanyi need
#                             (scripts/run.sh): Debian packages, no Node, no network
#                             when they are installed
set -euo pipefail
cd "$(dirname "$0")/.."
serve_only=0
case "${1:-}" in
--serve) serve_only=1 ;;
"") ;;
*)
    echo "usage: scripts/setup.sh [--serve]" >&2
    exit 2
    ;;
esac

# Building and serving: the compiler, the libraries fanyi links, spm_train
# (model synth, for ./scripts/run.sh --synth), CA certificates (model fetch).
serve_packages=(
    build-essential cmake pkg-config ca-certificates
    sentencepiece                           # spm_train: synthetic models
    libmicrohttpd-dev libjansson-dev        # HTTP server, JSON
    libgnutls28-dev                         # HTTPS (libmicrohttpd's TLS)
    libyaml-dev                             # model.yml inside Marian models
    libcld2-dev                             # language detection (CLD2, as in Firefox)
    libzip-dev libxml2-dev                  # documents: zip archives, XML parts
    libmupdf-dev libmujs-dev libgumbo-dev libopenjp2-7-dev libjbig2dec0-dev libjpeg-dev
    libfreetype-dev libharfbuzz-dev zlib1g-dev   # PDF: MuPDF (static) and what it links; hb-subset
    fonts-liberation2 fonts-dejavu-core fonts-wqy-microhei   # fonts PDF translations are set in
    libcurl4-openssl-dev libssl-dev         # model fetch, sha256
    libhiredis-dev                          # the Redis cache tier (hiredis 0.14)
)
# Testing, formatting, benchmarking and deploying on top of that.
test_packages=(
    git curl python3
    clang clang-format libclang-rt-14-dev   # formatting check, libFuzzer
    openssl                                 # test certificates
    python3-docx python3-odf python3-lxml python3-ebooklib   # document tests: real readers
    python3-requests                        # chunked request bodies (test_chunked.py)
    python3-reportlab poppler-utils mupdf-tools fontconfig  # PDF tests: make PDFs; pdftotext, pdfinfo; mutool; fc-list
    redis-server                            # the Redis cache tier's tests
    chromium fonts-wqy-microhei             # UI tests (driven by playwright-core), CJK glyphs
    wrk hyperfine                           # benchmarks
    nginx haproxy                           # load-balancer tests (tests/lb)
    docker.io docker-compose debootstrap    # deploy tests: image, compose (tests/deploy start their own dockerd)
    podman runc catatonit                   # deploy tests: kube play (catatonit: the pause image podman builds)
    systemd systemd-container               # deploy tests: systemd-analyze, the unit under systemd-nspawn
    qemu-user                               # portability test: CPUs without AVX/AVX2
    libvulkan-dev glslc glslang-tools spirv-tools   # the Vulkan backend (FANYI_VULKAN): headers, shader compiler, checks
    mesa-vulkan-drivers vulkan-tools        # lavapipe (a CPU Vulkan driver: the GPU tests run on it), vulkaninfo
)
packages=("${serve_packages[@]}")
if [ "$serve_only" = 0 ]; then
    packages+=("${test_packages[@]}")
    command -v node >/dev/null 2>&1 || packages+=(nodejs)
    # kubectl kustomize (deploy tests); Debian's kubectl when none is installed.
    command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
    command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ "$serve_only" = 1 ]; then
    echo "setup: build dependencies installed"
    exit 0
fi

# node_modules matches the lock file when npm's own record of what it
# installed (node_modules/.package-lock.json) holds every locked package at
# its locked version and hash (optional ones for other platforms may be absent).
node_modules_current() {
    python3 - <<'PY'
import json, sys
try:
    want = json.load(open("package-lock.json"))["packages"]
    have = json.load(open("node_modules/.package-lock.json"))["packages"]
except (OSError, ValueError, KeyError):
    sys.exit(1)
for name, p in want.items():
    if not name:
        continue
    h = have.get(name)
    if h is None and p.get("optional"):
        continue
    if h is None or (h.get("version"), h.get("integrity")) != (p.get("version"), p.get("integrity")):
        sys.exit(1)
PY
}
if [ -f package-lock.json ]; then
    if node_modules_current; then
        echo "setup: node_modules matches package-lock.json (npm ci skipped)"
    else
        npm ci --no-audit --no-fund --loglevel=error
    fi
fi
echo "setup: dependencies installed"
