#!/usr/bin/env bash
# install.sh [PREFIX] - puts fanyi on the PATH: installs the binary as
# PREFIX/bin/fanyi (default PREFIX ~/.local: ~/.local/bin/fanyi), building it
# first when build/ has none. The same as
#     cmake --install build --prefix ~/.local
# FANYI_PREBUILT=BIN installs that binary instead (the README test does).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-$HOME/.local}
if [ -n "${FANYI_PREBUILT:-}" ]; then
    install -D -m 0755 "$FANYI_PREBUILT" "$prefix/bin/fanyi"
else
    if [ ! -x build/src/fanyi ]; then
        scripts/setup.sh --serve
        scripts/build.sh --target fanyi build
    fi
    cmake --install build --prefix "$prefix" >/dev/null
fi
echo "install: $prefix/bin/fanyi"
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*)
    echo "install: $prefix/bin is not on your PATH yet; for this shell:"
    echo "    export PATH=\"$prefix/bin:\$PATH\""
    if [ "$prefix" = "$HOME/.local" ]; then
        echo "(Debian's ~/.profile puts ~/.local/bin on the PATH at each login once it exists)"
    fi
    ;;
esac
