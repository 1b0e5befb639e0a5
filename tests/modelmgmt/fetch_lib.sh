# fetch_lib.sh - shared by the `fanyi model fetch` tests: the loopback mirror
# (test_server.py), manifests of a directory's files, and the version store
# beside a model directory (docs/models.md). Source it after tests/lib.sh.
FETCH_HERE="$FANYI_SOURCE_DIR/tests/modelmgmt"
SRV_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$FY_TMP"' EXIT

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# start_mirror ROOT [test_server.py options]: serves ROOT on a free 127.0.0.1
# port; sets U (its base URL) and LOG (one line per request).
start_mirror() {
    local root=$1
    shift
    LOG="$FY_TMP/server.log"
    : >"$LOG"
    python3 "$FETCH_HERE/test_server.py" --root "$root" --port-file "$FY_TMP/port" --log "$LOG" \
        --lifetime 300 "$@" &
    SRV_PID=$!
    for _ in $(seq 100); do [ -s "$FY_TMP/port" ] && break; sleep 0.05; done
    U="http://127.0.0.1:$(cat "$FY_TMP/port")"
}

# wait_requests N: until the mirror has logged more than N requests (at most 10 s).
wait_requests() {
    for _ in $(seq 200); do [ "$(wc -l <"$LOG")" -gt "$1" ] && return 0; sleep 0.05; done
    return 1
}

# write_manifest OUT MODEL VERSION DIR PREFIX [NAME...]: a manifest of the files
# NAME (default: every file) in DIR, in that order, each at PREFIX/NAME on the mirror.
write_manifest() {
    local out=$1 model=$2 version=$3 dir=$4 prefix=$5 sep="" p n
    shift 5
    [ $# -gt 0 ] || set -- $(ls "$dir")
    {
        echo '{"schema": 1, "base_url": "http://127.0.0.1:1/unused/", "models": {"'"$model"'": {"version": "'"$version"'", "files": ['
        for n in "$@"; do
            p="$dir/$n"
            printf '%s{"name": "%s", "location": "%s/%s", "size": %s, "sha256": "%s"}\n' \
                "$sep" "$n" "$prefix" "$n" "$(size "$p")" "$(sha "$p")"
            sep=","
        done
        echo ']}}}'
    } >"$out"
}

# The version store of a model directory D, its staging directory, the partial
# download of a file NAME in it.
store_of() { echo "$(dirname "$1")/.fanyi-versions/$(basename "$1")"; }
staging_of() { find "$(store_of "$1")" -maxdepth 1 -name '*.staging' 2>/dev/null; }
part_of() { find "$(store_of "$1")" -name ".$2.*.part" 2>/dev/null; }

# tidy D: D is fetch's link to the store's only version, and the store holds
# nothing else but its lock (and retired.N directories of files kept).
tidy() {
    local s v got
    s=$(store_of "$1")
    got=$(ls -A "$s" 2>/dev/null | grep -v '^retired\.' | tr '\n' ' ')
    v=${got%% *}
    if [[ "$got" =~ ^[A-Za-z0-9._+]+-[0-9a-f]{12}\.[0-9]+\ lock\ $ ]] &&
        [ "$(readlink "$1")" = ".fanyi-versions/$(basename "$1")/$v" ]; then
        ok
    else
        bad "$1 -> $(readlink "$1"), its store holds: $got"
    fi
}
