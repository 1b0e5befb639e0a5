#!/bin/bash
# make_corpus.sh - (re)writes the seed corpora under tests/fuzz/corpus/.
# Usage: tests/fuzz/make_corpus.sh BUILD_DIR   (a fuzz build: see run.sh)
# The seeds are committed; run this only when a file format changes. Needs
# spm_train only if tests/fuzz/models/*.spm are missing (they are committed).
# Regression inputs (corpus/*/regress-*) are kept as they are.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: make_corpus.sh BUILD_DIR}
gen="$build/tests/fuzz/fuzz_gen_seeds"
c="$here/corpus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$c"/{fuzz_marian,fuzz_config,fuzz_shortlist,fuzz_spm_load,fuzz_spm_encode,fuzz_segment,fuzz_cleanup}

# Models and shortlists: toy sizes, valid in every respect; the models' YAML.
"$gen" "$c/fuzz_marian" "$tmp" "$c/fuzz_config"
printf 'type: transformer\ndim-emb: 8\nenc-depth: 1\ndec-depth: 1\ntransformer-heads: 2\ntransformer-dim-ffn: 16\ndec-cell: ssru\ntransformer-decoder-autoreg: rnn\ntransformer-ffn-activation: relu\ntied-embeddings-all: true\ndim-vocabs: [24, 24]\n' >"$c/fuzz_config/flow.yml"
printf '{type: transformer, dim-emb: "8", enc-depth: &d 1, dec-depth: *d, dim-vocabs: [24, 24, 24]}\n' >"$c/fuzz_config/anchors.yml"
printf -- '- a\n- b\n' >"$c/fuzz_config/list.yml"
printf 'dim-emb: 99999999999999999999\ntransformer-heads: -3\ntied-embeddings: maybe\n' >"$c/fuzz_config/badvals.yml"
# fuzz_shortlist inputs start with two parameter bytes (vocab selector, flags;
# flag 8 = fix the checksum up).
for f in "$tmp"/lex-*.bin; do
    b=$(basename "$f" .bin)
    { printf '\x04\x00'; cat "$f"; } >"$c/fuzz_shortlist/$b-a.bin"
    { printf '\x09\x05'; cat "$f"; } >"$c/fuzz_shortlist/$b-b.bin"
    { printf '\x06\x0d'; cat "$f"; } >"$c/fuzz_shortlist/$b-c.bin"
done

# SentencePiece: the two fixed models (trained on a few KB of tests/data/text).
if [ ! -f "$here/models/tiny_bf.spm" ] || [ ! -f "$here/models/tiny_id.spm" ]; then
    mkdir -p "$here/models"
    head -c 6000 "$here/../data/text/mixed.txt" >"$tmp/c.txt"
    common=(--input="$tmp/c.txt" --vocab_size=1200 --model_type=unigram --hard_vocab_limit=false
            --num_threads=1 --minloglevel=2)
    spm_train "${common[@]}" --model_prefix="$tmp/bf" --byte_fallback=true \
        --normalization_rule_name=nmt_nfkc
    spm_train "${common[@]}" --model_prefix="$tmp/id" --normalization_rule_name=identity \
        --user_defined_symbols='<sep>,中国'
    cp "$tmp/bf.model" "$here/models/tiny_bf.spm"
    cp "$tmp/id.model" "$here/models/tiny_id.spm"
fi
cp "$here/models/tiny_bf.spm" "$here/models/tiny_id.spm" "$c/fuzz_spm_load/"

# Text samples: Chinese, mixed, English, HTML, protected spans, invalid UTF-8.
text() { # NAME BYTES... (printf format)
    printf "$2" >"$c/$1"
}
samples=(
    'zh|你好，世界。今天天气很好！我们去公园吧？'
    'mixed|请访问 https://example.com/path?q=1 或发邮件到 a@b.org。价格是 50%%，重 3.5 kg。\n\n  第二段：`code span` 不翻译。'
    'en|Hello world. This has no Chinese at all.\n'
    'lines|第一行\n第二行\r\n\n    缩进的第三行。\n'
    'long|这是一个非常长的句子，它包含了许多的词语和标点符号，而且还会继续下去，直到超过最大长度限制为止，因为我们需要测试切分的行为，以及连接以后的结果是否正确无误。'
    'quotes|他说：“你好。”然后离开了。（括号里的话。）「引号」《书名》'
)
i=0
for s in "${samples[@]}"; do
    name=${s%%|*}
    body=${s#*|}
    text "fuzz_segment/plain-$name" "\\x00\\x00$body"
    text "fuzz_segment/plain-$name-tr" "\\x0e\\x20$body"
    text "fuzz_spm_encode/$name" "\\x00$body"
    text "fuzz_spm_encode/$name-id" "\\x01$body"
    text "fuzz_cleanup/$name" "$body"
    i=$((i + 1))
done
htmls=(
    'p|<p>你好，<b>世界</b>。</p><p>第二段<br>换行</p>'
    'doc|<!DOCTYPE html><html><head><title>标题</title><style>p{color:red}</style></head><body><div class="x">中文 &amp; English &#x4E2D;&nbsp;</div><script>var a="中文";</script></body></html>'
    'notr|<p translate="no">不要翻译</p><span class="notranslate">也不要</span><pre>预格式\n文本</pre><code>代码</code>'
    'attrs|<a href="http://x.cn/中文" title="标题">链接文字</a><img alt="图片说明" src=x.png><!-- 注释 -->'
    'broken|<p>未闭合 <b>粗体 <i>斜体</p></div>&bogus; &#99999999; <a href="x>坏的'
)
for s in "${htmls[@]}"; do
    name=${s%%|*}
    body=${s#*|}
    text "fuzz_segment/html-$name" "\\x01\\x00$body"
    text "fuzz_segment/html-$name-tr" "\\x0b\\x10$body"
done
text fuzz_segment/invalid-utf8 '\x00\x00中文\xff\xfe\xe4\xb8 截断'
text fuzz_spm_encode/invalid-utf8 '\x00中文\xff\xfe\xe4\xb8 \xc0\x80 \xed\xa0\x80 \xf4\x90\x80\x80'
text fuzz_spm_encode/controls '\x00a\x01b\tc\x7f\xc2\x85d   e\xe3\x80\x80f\xef\xbc\xa1'
text fuzz_cleanup/invalid-utf8 '中文\xff\xfe\xe4\xb8 \xc0\x80 \xed\xa0\x80 \xf4\x90\x80\x80'
text fuzz_cleanup/punct 'Hello ， world ！！ It is , is  good .. . the the the the the the end。'
text fuzz_cleanup/urls 'See http://a.b/c?d=1,2 . Mail x@y.org ！ `x`'
# HTTP requests for fuzz_http (routes, bodies, credentials, raw HTTP).
"$here/fuzz_http_seeds.sh"
echo "corpus written to $c"
