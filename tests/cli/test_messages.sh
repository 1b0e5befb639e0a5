#!/usr/bin/env bash
# Messages for people (issue 24): the help says what the product does (every
# direction, not zh->en only), the directions a help text offers are the
# catalogue's, and a fetch without network says how to install anyway (the
# files to copy, where, and --mirror).
. "$FANYI_SOURCE_DIR/tests/lib.sh"
F="$FANYI_BIN"
unset FANYI_MODEL_DIR FANYI_MODELS_DIR
export HOME="$FY_TMP/home"
# A loopback port nobody listens on: "no network" without touching one.
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

run "$F" model list --available --json
expect_status 0
python3 -c 'import json, sys; print("\n".join(m["name"] for m in json.load(open(sys.argv[1]))))' \
    "$FY_TMP/out" >"$FY_TMP/catalogue"
[ "$(wc -l <"$FY_TMP/catalogue")" -gt 50 ] && ok || bad "the catalogue has $(wc -l <"$FY_TMP/catalogue") directions"

# fanyi --help: the product, and directions that exist.
run "$F" --help
expect_status 0
if grep -qi 'chinese-to-english\|zh->en only' "$FY_TMP/out"; then bad "--help still sells zh->en only"; else ok; fi
expect_out "every$"
expect_out "^direction Firefox ships"
for d in $(grep -oE '\b[a-z]{2}-[a-z]{2}\b' "$FY_TMP/out" | sort -u); do
    grep -qx "$d" "$FY_TMP/catalogue" && ok || bad "fanyi --help names $d, which the catalogue lacks"
done

# model fetch --help: the number of directions, and examples that fetch takes
# (an unknown one is a usage error, status 2; a known one reaches the network).
run "$F" model fetch --help
expect_status 0
expect_out "\($(wc -l <"$FY_TMP/catalogue") directions: 'fanyi model list"
if grep -q 'zh-Hant' "$FY_TMP/out"; then bad "model fetch --help offers zh-Hant, which the catalogue lacks"; else ok; fi
examples=$(sed -n '/any spelling of the languages, e.g.$/{n;p}' "$FY_TMP/out" | sed 's/([^)]*)//g; s/[,.]/ /g')
[ -n "$examples" ] && ok || bad "no examples found in model fetch --help"
for d in $examples; do
    run "$F" model fetch "$d" --dir "$FY_TMP/x" --mirror "http://127.0.0.1:$closed/" --retries 0 --timeout 2
    expect_status 3
done
run "$F" model fetch zh-Hant-en
expect_status 2

# Offline (every https request through a proxy that is not there): the
# files, the directory, verify, --mirror.
https_proxy="http://127.0.0.1:$closed" HTTPS_PROXY="http://127.0.0.1:$closed" no_proxy= NO_PROXY= \
    run "$F" model fetch zh-en --dir "$FY_TMP/z" --retries 0 --timeout 2
expect_status 3
expect_err "cannot reach firefox-settings-attachments.cdn.mozilla.net"
expect_err "^fanyi model fetch: without network access, install zh-en either$"
expect_err "by copying model.zhen.intgemm.alphas.bin, lex.50.50.zhen.s2t.bin and vocab.zhen.spm \(66.8 MiB,$"
expect_err "into $FY_TMP/z/,$"
expect_err "then checking them: fanyi model verify $FY_TMP/z$"
expect_err "fanyi model fetch zh-en --mirror URL "

# Sizes for people: translate's limits in MiB with the option's name (the
# rest is in test_translate_file.sh), in its help too.
run "$F" translate --help
expect_out "--max-document-mb N +the largest document --file reads, in MiB"
expect_out "--force +replace OUT if it exists"
finish
