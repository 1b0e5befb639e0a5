#!/bin/sh
# fanyi-entrypoint - the container image's entrypoint (deploy/Dockerfile).
#
#   fanyi-entrypoint [serve] [serve options...]  fetch what FANYI_FETCH names
#                                                and is missing, then exec
#                                                fanyi serve
#   fanyi-entrypoint fetch                       only fetch (an init container)
#   fanyi-entrypoint COMMAND...                  exec fanyi COMMAND... (model
#                                                list, translate, version, ...)
#
# FANYI_FETCH: directions, separated by spaces or commas ("zh-en en-zh"),
#   installed into $FANYI_MODELS_DIR/DIRECTION by `fanyi model fetch`; a
#   direction already installed and intact is not downloaded again.
# FANYI_FETCH_MIRROR: a mirror URL for --mirror (files at the catalogue's
#   paths); FANYI_FETCH_MANIFEST: a manifest file for --manifest.
set -eu

fetch() {
    for dir in $(printf '%s' "${FANYI_FETCH:-}" | tr ',' ' '); do
        set -- --quiet
        [ -n "${FANYI_FETCH_MIRROR:-}" ] && set -- "$@" --mirror "$FANYI_FETCH_MIRROR"
        [ -n "${FANYI_FETCH_MANIFEST:-}" ] && set -- "$@" --manifest "$FANYI_FETCH_MANIFEST"
        echo "fanyi-entrypoint: fanyi model fetch $dir into ${FANYI_MODELS_DIR:-the default models directory}" >&2
        fanyi model fetch "$dir" "$@"
    done
}

case "${1:-serve}" in
fetch)
    fetch
    ;;
serve)
    [ $# -gt 0 ] && shift
    fetch
    exec fanyi serve "$@"
    ;;
-*)
    fetch
    exec fanyi serve "$@"
    ;;
*)
    exec fanyi "$@"
    ;;
esac
