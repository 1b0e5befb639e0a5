#!/bin/bash
# fuzz_http_seeds.sh - (re)writes the seeds of fuzz_http in
# tests/fuzz/corpus/fuzz_http/ (deterministic; called by make_corpus.sh).
# Regression inputs (regress-*) are kept as they are.
#
# A structured seed is 6 bytes then QUERY \1 HEADER \1 BODY (see fuzz_http.c):
#   kind (0; 7 = raw), route, method (< 0xa0: the route's own; else
#   GET POST HEAD OPTIONS PUT DELETE PATCH get FOO CONNECT by % 10),
#   Content-Type, server/credentials (0x10 = the token server + way n),
#   extra header n (1 X-Request-Id, 2 If-None-Match, 3 Origin, 4 Accept,
#   5 Cookie, 6 Authorization, 7 Content-Type, 11 X-Fuzz with the value's
#   bytes as they are (CR, LF, NUL), 14 the asset's ETag, 15 a second Host,
#   Content-Length or Transfer-Encoding by the value's first byte % 3) | flags
#   (0x10 chunked, 0x20 Expect: 100-continue, 0x40 body past the limit,
#   0x80 wrong Content-Length).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
d="$here/corpus/fuzz_http"
mkdir -p "$d"
find "$d" -type f ! -name 'regress-*' -delete
token=s3cret-T0ken

# NAME ROUTE METHOD CTYPE AUTH XHDR QUERY HEADER BODY (first six: hex bytes)
s() {
    { printf "\\x00\\x$2\\x$3\\x$4\\x$5\\x$6"; printf '%s\001%s\001%s' "$7" "$8" "$9"; } >"$d/$1"
}
# NAME BYTES (printf format): raw HTTP sent as it is (raw-tok-*: to the token server)
raw() {
    case $1 in tok-*) printf '\x0f' ;; *) printf '\x07' ;; esac >"$d/raw-$1"
    printf "$2" >>"$d/raw-$1"
}

# Routes: 00 /translate 01 /translate/stream 02 /detect 03 /v2/translate
# 04 /deeplx 05 /language/translate/v2 06 /imme 07 /kiss 08 /languages
# 09 /health 0a /ready 0b /metrics 0c /version 0d / 0e /openapi.json
# 0f..15 UI assets 16.. unknown paths.
# Content types: 00 json 01 json;charset 02 form 03 multipart(boundary fzb)
# 04 multipart without boundary 05 text/plain 06 none 07 xml 08 ld+json
# 09 */* 0a FORM 0b empty 0c empty boundary 0d text/html.
s native 00 00 00 00 00 '' '' '{"text":"你好，世界。今天天气很好。"}'
s native-array 00 00 01 00 00 '' '' '{"text":["你好","谢谢",""],"source":"zh","target":"en"}'
s native-html 00 00 00 00 00 '' '' '{"text":"<p>你好，<b>世界</b>。</p><script>x</script>","html":true}'
s native-en 00 00 06 00 00 '' '' '{"text":"Hello world. No Chinese here."}'
s native-badlang 00 00 00 00 00 '' '' '{"text":"你好","source":"ja","target":"fr"}'
s native-types 00 00 00 00 00 '' '' '{"text":[1,null,"x"],"html":"yes","target":7}'
s native-toomany 00 00 00 00 00 '' '' '{"text":["一","二","三","四","五"]}'
s native-toolong 00 00 00 00 00 '' '' "{\"text\":\"$(printf '长%.0s' {1..210})\"}"
s native-form 00 00 02 00 00 '' '' 'text=%E4%BD%A0%E5%A5%BD&html=true&source=auto'
s native-curl-form 00 00 02 00 00 '' '' '  {"text":"你好"}'
s libre 00 00 00 00 00 '' '' '{"q":"你好。再见。","source":"auto","target":"en","format":"text"}'
s libre-form 00 00 02 00 00 '' '' 'q=%E4%BD%A0%E5%A5%BD&q=abc&source=zh&target=en&format=html'
s libre-list 00 00 0a 00 00 '' '' 'q[]=%E4%BD%A0&target=en'
s libre-multipart 00 00 03 00 00 '' '' $'--fzb\r\nContent-Disposition: form-data; name="q"\r\n\r\n你好\r\n--fzb\r\nContent-Disposition: form-data; name="target"\r\n\r\nen\r\n--fzb--\r\n'
s libre-multipart-file 00 00 03 00 00 '' '' $'--fzb\r\nContent-Disposition: form-data; name="q"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n你好\r\n--fzb--\r\n'
s libre-apikey 00 00 00 10 00 '' '' "{\"q\":\"你好\",\"target\":\"en\",\"api_key\":\"$token\"}"
s stream 01 00 00 00 00 '' '' '{"text":"你好，世界。今天天气很好。"}'
s stream-array 01 00 00 00 00 '' '' '{"text":["你好。","<b>世界</b>"],"html":true}'
s detect 02 00 00 00 00 '' '' '{"q":"你好"}'
s detect-form 02 00 02 00 00 '' '' 'q=hello'
s deepl 03 00 00 00 00 '' '' '{"text":["你好"],"target_lang":"EN","source_lang":"ZH","tag_handling":"html"}'
s deepl-form 03 00 02 10 00 '' '' "text=%E4%BD%A0&text=b&target_lang=EN-US&auth_key=$token"
s deepl-key 03 00 00 13 00 '' '' '{"text":["你好","世界"],"target_lang":"EN-GB","tag_handling":"xml"}'
s deeplx 04 00 00 00 00 '' '' '{"text":"你好","source_lang":"auto","target_lang":"EN"}'
s deeplx-array 04 00 00 00 00 '' '' '{"text":["你好"],"target_lang":"EN"}'
s google 05 00 00 00 00 '' '' '{"q":["你好","<b>世界</b>"],"target":"en","format":"html"}'
s google-form 05 00 02 17 00 '' '' 'q=%E4%BD%A0%E5%A5%BD&target=en&format=text'
s google-missing 05 00 00 00 00 '' '' '{"q":"你好"}'
s imme 06 00 00 00 00 '' '' '{"source_lang":"zh-CN","target_lang":"en","text_list":["你好","世界"]}'
s imme-bad 06 00 00 00 00 '' '' '{"target_lang":"en","text_list":"你好"}'
s kiss 07 00 00 00 00 '' '' '{"text":"你好","from":"zh","to":"en"}'
s kiss-texts 07 00 00 00 00 '' '' '{"texts":["a","你好"],"to":"en-US"}'
s languages 08 00 06 00 00 '' '' ''
s health 09 00 06 00 00 '' '' ''
s ready 0a 00 06 00 00 '' '' ''
s metrics 0b 00 06 00 00 '' '' ''
s version 0c 00 06 10 00 '' '' ''
s ui 0d 00 06 00 00 '' '' ''
s openapi-etag 0e 00 06 00 0e '' '' ''
s app-head 10 a2 06 00 00 '' '' ''
s docs-etag 12 00 06 00 0e '' '' ''
s options 00 a3 06 10 03 '' 'https://example.com' ''
s options-unknown 16 a3 06 00 00 '' '' ''
s put 00 a4 00 00 00 '' '' '{"text":"你好"}'
s get-translate 00 a0 06 00 00 'text=%E4%BD%A0' '' ''
s post-health 09 a1 00 00 00 '' '' '{}'
s unknown 16 00 06 00 00 '' '' ''
s traversal 19 00 06 00 00 '' '' ''
s traversal-enc 1a 00 06 00 00 '' '' ''
s method-lower 00 a7 00 00 00 '' '' '{"text":"你好"}'
# Credentials on the token server (0x10 + way).
s tok-none 00 00 00 10 00 '' '' '{"text":"你好"}'
s tok-bearer 00 00 00 11 00 '' '' '{"text":"你好"}'
s tok-wrong 00 00 00 12 00 '' '' '{"text":"你好"}'
s tok-header 01 00 00 14 00 '' '' '{"text":"你好"}'
s tok-query 06 00 00 16 00 'x=1' '' '{"target_lang":"en","text_list":["你好"]}'
s tok-empty 07 00 00 19 00 '' '' '{"text":"你好","to":"en"}'
s tok-dup 02 00 00 11 06 '' "Bearer $token" '{"q":"你好"}'
# Headers and flags.
s id-sane 00 00 00 00 01 '' 'my-id_1.2:3' '{"text":"你好"}'
s id-insane 00 00 00 00 01 '' 'bad id<>"' '{"text":"你好"}'
s ctype-dup 00 00 00 00 07 '' 'application/x-www-form-urlencoded' '{"text":"你好"}'
s chunked 00 00 00 00 10 '' '' '{"text":"你好，世界。今天天气很好。我们去公园吧？"}'
s expect 03 00 00 00 20 '' '' '{"text":"你好","target_lang":"EN"}'
s big-cl 00 00 00 00 40 '' '' '{"text":"你好"}'
s big-chunked 00 00 00 00 50 '' '' '{"text":"你好"}'
s cl-huge 00 00 00 00 80 '' '' '{"text":"你好"} '
s cl-short 00 00 00 00 80 '' '' '{"text":"你好"}'
s query-junk 00 00 00 00 00 'a=1&b=%ZZ&&=&token&q=%00' '' '{"text":"你好"}'
# Strict framing (src/server/strict.c): raw values, repeated framing headers.
s raw-cr 09 00 06 00 0b '' $'a\rb' ''
s raw-ctl 00 00 00 00 0b '' $'a\x01b' '{"text":"你好"}'
s raw-smuggle 00 00 00 00 0b '' $'a\r\nContent-Length: 0' '{"text":"你好"}'
s raw-fold 09 00 06 00 0b '' $'a\r\n b' ''
printf '\x00\x09\x00\x06\x00\x0b\x01a\x00b\x01' >"$d/raw-nul" # NUL: not in a shell string
s dup-host 09 00 06 00 0f '' 'cother' ''
s dup-cl 00 00 00 00 0f '' 'a5' '{"text":"你好"}'
s dup-te 00 00 00 00 0f '' 'bgzip, chunked' '{"text":"你好"}'
s dup-te-chunked 00 00 00 00 1f '' 'bgzip' '{"text":"你好"}'

# Hostile bodies.
s xml 00 00 07 00 00 '' '' '<text>你好</text>'
s plain 00 00 05 00 00 '' '' '{"text":"你好"}'
s empty 00 00 00 00 00 '' '' ''
s not-object 00 00 00 00 00 '' '' '["你好"]'
s invalid-utf8 00 00 00 00 00 '' '' $'{"text":"\xff\xfe\xe4\xb8 \xc0\x80"}'
s invalid-utf8-form 03 00 02 00 00 '' '' 'text=%FF%FE&target_lang=EN'
s nul-escape 00 00 00 00 00 '' '' '{"text":"a\u0000b"}'
printf '\x00\x00\x00\x00\x00\x00\x01\x01{"text":"a\x00b"}' >"$d/nul-byte" # NUL: not in a shell string
s deep 00 00 00 00 00 '' '' "{\"text\":$(printf '[%.0s' {1..3000})"
s dup-keys 00 00 00 00 00 '' '' '{"text":"a","text":"b"}'
s json-trailing 00 00 00 00 00 '' '' '{"text":"你好"} {"x":1}'
s numbers 00 00 00 00 00 '' '' '{"text":"你好","html":1e999,"x":-0.0e-99999}'
s long-token 00 00 00 00 00 '' '' "{\"text\":\"$(printf 'a%.0s' {1..190})\"}"
s multipart-noboundary 00 00 04 00 00 '' '' $'--fzb\r\n\r\n'
s multipart-broken 05 00 03 00 00 '' '' $'--fzb\r\nContent-Disposition: form-data; name="q"\r\n\r\n你好'

# Raw HTTP.
raw pipelined 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n{"text":"你好"}GET /version HTTP/1.1\r\nHost: x\r\n\r\n'
raw http10 'GET /languages HTTP/1.0\r\n\r\n'
raw chunked-bad 'POST /kiss HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n'
raw chunked-ext 'POST /detect HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{"q":\r\n6\r\n"ab"}\r\n0\r\nTrailer: x\r\n\r\n'
raw cl-te 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'
raw cl-dup 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}'
raw cl-neg 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'
raw folding 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\n\r\n'
raw nohost 'GET /health HTTP/1.1\r\n\r\n'
raw version99 'GET /health HTTP/9.9\r\nHost: x\r\n\r\n'
raw absolute 'GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n'
raw lf-only 'GET /ready HTTP/1.1\nHost: x\n\n'
raw nul-header 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n'
raw head 'HEAD /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'
raw options-star 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'
raw cut-body 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"text":'
raw tok-bearer 'POST /kiss?x=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-T0ken\r\nContent-Length: 27\r\n\r\n{"text":"你好","to":"en"}'
raw tok-pipelined 'POST /detect?token=s3cret-T0ken HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nq=helloOPTIONS /detect HTTP/1.1\r\nHost: x\r\nOrigin: https://example.com\r\n\r\n'
raw te-gzip-chunked 'POST /translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'
raw te-identity 'POST /translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}'
raw chunk-2e63 'POST /translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\n{}\r\n0\r\n\r\n'
raw chunk-2e64 'POST /translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{}\r\n0\r\n\r\n'
raw cl-smuggle 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 37\r\n\r\n{}GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'
raw host-dup 'GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'
raw space-colon 'GET /health HTTP/1.1\r\nHost : x\r\n\r\n'
raw bare-cr 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n'
raw absolute-port 'GET HTTP://localhost:99/version?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n'
raw garbage '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'
echo "fuzz_http seeds written to $d"
