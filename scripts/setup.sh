#!/usr/bin/env bash
# setup.sh - installs every build and test dependency (Debian + npm).
# Idempotent and non-interactive; run as root or with sudo available.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential cmake pkg-config git ca-certificates curl python3
    clang clang-format libclang-rt-14-dev   # formatting check, libFuzzer
    sentencepiece                           # reference spm_encode/spm_decode/spm_train
    libmicrohttpd-dev libjansson-dev        # HTTP server, JSON
    libgnutls28-dev openssl                 # HTTPS (libmicrohttpd's TLS); test certificates
    libyaml-dev                             # model.yml inside Marian models
    libcld2-dev                             # language detection (CLD2, as in Firefox)
    libzip-dev libxml2-dev                  # documents: zip archives, XML parts
    python3-docx python3-odf python3-lxml python3-ebooklib   # document tests: real readers
    python3-requests                        # chunked request bodies (test_chunked.py)
    libcurl4-openssl-dev libssl-dev         # model fetch, sha256
    libhiredis-dev redis-server             # the Redis cache tier (hiredis 0.14), its tests
    chromium fonts-wqy-microhei             # UI tests (driven by playwright-core), CJK glyphs
    wrk hyperfine                           # benchmarks
    nginx haproxy                           # load-balancer tests (tests/lb)
    docker.io docker-compose debootstrap    # deploy tests: image, compose (tests/deploy start their own dockerd)
    podman runc catatonit                   # deploy tests: kube play (catatonit: the pause image podman builds)
    systemd systemd-container               # deploy tests: systemd-analyze, the unit under systemd-nspawn
    qemu-user                               # portability test: CPUs without AVX/AVX2
)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
# kubectl kustomize (deploy tests); Debian's kubectl when none is installed.
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
command -v npm >/dev/null 2>&1 || packages+=(npm)

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

if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
echo "setup: dependencies installed"
