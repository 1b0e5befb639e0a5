#!/usr/bin/env python3
"""test_api.py - every endpoint and dialect of `fanyi serve` with its exact
response shape, and every request error with its status (auth off)."""
import http.client
import json
import socket
import urllib.parse

from fylib import T, Server, ZH

TEXT = ZH[0] + ZH[1]  # two sentences


def shape(obj, keys, what):
    T.ok(isinstance(obj, dict) and sorted(obj) == sorted(keys),
         f"{what}: keys {sorted(obj) if isinstance(obj, dict) else obj!r}, want {sorted(keys)}")


def is_str(v):
    return isinstance(v, str)


def endpoints(s):
    # Operations.
    st, h, b = s.get("/health")
    T.eq((st, b), (200, {"status": "ok"}), "/health")
    T.ok(h.get("x-request-id"), "X-Request-Id on /health")
    T.ok(h["content-type"].startswith("application/json"), "/health content type")
    st, _, b = s.get("/ready")
    T.eq(st, 200, "/ready status")
    T.eq(b.get("status"), "ready", "/ready body")
    st, _, b = s.get("/version")
    T.eq(st, 200, "/version")
    shape(b, ["version", "models", "threads", "languages", "max_chars", "max_items",
              "auth_required"], "/version")
    T.eq([(m["direction"], m["source"], m["target"]) for m in b["models"]], [("zh-en", "zh", "en")],
         "/version models")
    T.ok(all("/" not in m["model"] for m in b["models"]), "/version names files, not paths")
    T.eq(b["languages"], [{"source": "zh", "target": "en", "pivot": False}], "/version pairs")
    T.eq(b["threads"], 2, "/version threads")
    T.eq((b["max_chars"], b["max_items"], b["auth_required"]), (200, 4, False),
         "/version limits (--max-chars 200 --max-batch-items 4)")
    st, h, text = s.get("/metrics")
    T.eq(st, 200, "/metrics")
    T.ok(h["content-type"].startswith("text/plain"), "/metrics content type")
    for name in ["fanyi_requests_total", "fanyi_request_duration_seconds_bucket",
                 "fanyi_queue_depth", "fanyi_batch_size_bucket", "fanyi_sentences_translated_total",
                 "fanyi_tokens_translated_total", "fanyi_cache_hits_total",
                 "fanyi_cache_misses_total", "process_resident_memory_bytes"]:
        T.ok(name in text, f"/metrics has {name}")
    T.ok(s.metrics()["process_resident_memory_bytes"] > 1e6, "RSS reported")
    st, h, b = s.get("/openapi.json")
    T.eq(st, 200, "/openapi.json")
    T.ok(isinstance(b, dict) and b.get("openapi", "").startswith("3."), "OpenAPI 3 document")
    paths = b.get("paths", {}) if isinstance(b, dict) else {}
    for p, m in [("/translate", "post"), ("/translate/stream", "post"), ("/languages", "get"),
                 ("/detect", "post"), ("/v2/translate", "post"), ("/deeplx", "post"),
                 ("/language/translate/v2", "post"), ("/imme", "post"), ("/kiss", "post"),
                 ("/v2/languages", "get"), ("/language/translate/v2/languages", "get"),
                 ("/v2/usage", "get"), ("/v1/translate", "post"), ("/language/translate/v2", "get"),
                 ("/language/translate/v2/detect", "post"), ("/language/translate/v2/detect", "get"),
                 ("/language/translate/v2/languages", "post"), ("/translate_a/single", "get"),
                 ("/translate_a/single", "post"), ("/v2/glossaries", "get"),
                 ("/v2/glossary-language-pairs", "get"), ("/v2/document", "post"),
                 ("/frontend/settings", "get"), ("/suggest", "post"), ("/spec", "get"),
                 ("/v1/chat/completions", "post"), ("/v1/responses", "post"), ("/v1/models", "get"),
                 ("/health", "get"), ("/ready", "get"), ("/metrics", "get"), ("/version", "get"),
                 ("/openapi.json", "get"), ("/translate_file", "post"),
                 ("/download_file/{file}", "get"), ("/translate/document", "post"),
                 ("/documents", "post"), ("/documents", "get"), ("/documents/{id}", "get"),
                 ("/documents/{id}", "delete"), ("/documents/{id}/result", "get"),
                 ("/v2/document/{document_id}", "post"),
                 ("/v2/document/{document_id}/result", "post"),
                 ("/hcfy", "post"), ("/glossaries", "post"), ("/glossaries/{id}", "patch"),
                 ("/glossaries/{id}/entries", "put"), ("/v3/glossaries", "post")]:
        T.ok(m in paths.get(p, {}), f"openapi documents {m.upper()} {p}")
    refs = []

    def walk(v):
        if isinstance(v, dict):
            if "$ref" in v:
                refs.append(v["$ref"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(b)
    schemas = b.get("components", {}).get("schemas", {}) if isinstance(b, dict) else {}
    T.ok(refs and all(r.startswith("#/components/schemas/") and r.split("/")[-1] in schemas
                      for r in refs), "every $ref in the OpenAPI document resolves")
    T.eq(sorted(paths), sorted(["/translate", "/translate/stream", "/languages", "/detect",
                                "/v2/translate", "/v2/languages", "/deeplx",
                                "/v2/usage", "/v2/glossaries", "/v2/glossaries/{glossary_id}",
                                "/glossaries", "/glossaries/{id}", "/glossaries/{id}/entries",
                                "/v2/glossary-language-pairs", "/v3/glossaries", "/v2/document",
                                "/v1/translate", "/language/translate/v2/detect",
                                "/translate_a/single",
                                "/language/translate/v2", "/language/translate/v2/languages",
                                "/imme", "/frontend/settings", "/suggest", "/spec",
                                "/v1/chat/completions", "/v1/responses", "/v1/models",
                                "/translate_file", "/download_file/{file}",
                                "/translate/document", "/documents", "/documents/{id}",
                                "/documents/{id}/result", "/v2/document/{document_id}",
                                "/v2/document/{document_id}/result",
                                "/kiss", "/hcfy", "/health", "/ready", "/metrics", "/version",
                                "/openapi.json", "/"]), "OpenAPI paths are exactly the server's")
    st, h, page = s.get("/")
    T.eq(st, 200, "GET /")
    T.ok(h["content-type"].startswith("text/html") and '<script src="/app.js"' in page,
         "GET / is the web UI")
    T.ok("script-src 'self'" in h.get("content-security-policy", ""), "GET / has a strict CSP")
    T.ok(h.get("etag", "").startswith('"'), "GET / has an ETag")
    st, h, page = s.get("/docs")
    T.ok(st == 200 and "docs.js" in page, "GET /docs is the API page")
    st, h, _ = s.get("/../etc/passwd")
    T.eq(st, 404, "no file-system path over HTTP")

    # Native.
    want = s.translate(TEXT)
    T.ok(is_str(want) and want, "native translation is a non-empty string")
    st, h, b = s.post("/translate", {"text": TEXT, "source": "zh", "target": "en"})
    T.eq((st, b), (200, {"translation": want, "alternatives": [], "source": "zh", "target": "en"}),
         "native, explicit languages (beam 1: no alternatives)")
    st, _, b = s.post("/translate", {"text": [ZH[0], ZH[1], "hello"]})
    T.eq(st, 200, "native array status")
    shape(b, ["translation", "alternatives", "source", "target"], "native array")
    T.eq(b["alternatives"], [[], [], []], "native array: alternatives per text")
    T.eq((b["source"], b["target"]), (["zh", "zh", "en"], ["en", "en", "en"]),
         "native array: each text's languages")
    T.ok(isinstance(b["translation"], list) and len(b["translation"]) == 3, "array in order")
    T.eq(b["translation"][0], s.translate(ZH[0]), "array item 0 = single")
    T.eq(b["translation"][2], "hello", "English text passes through")
    st, _, b = s.post("/translate", {"text": []})
    T.eq((st, b), (200, {"translation": [], "alternatives": [], "source": [], "target": []}),
         "empty array")
    st, _, b = s.post("/translate", {"text": "<p>" + ZH[0] + "</p>", "html": True})
    T.ok(st == 200 and b["translation"].startswith("<p>") and b["translation"].endswith("</p>"),
         f"html keeps tags: {b}")
    # curl -d sends JSON labelled as a form: still JSON.
    st, _, b = s.post("/translate", json.dumps({"text": TEXT}),
                      {"Content-Type": "application/x-www-form-urlencoded"})
    T.eq((st, b.get("translation")), (200, want), "JSON labelled as form")

    # LibreTranslate.
    st, _, b = s.post("/translate", {"q": TEXT, "source": "auto", "target": "en"})
    T.eq(st, 200, "libre status")
    shape(b, ["translatedText", "detectedLanguage"], "libre auto")
    T.eq(b["translatedText"], want, "libre = native")
    T.eq(b["detectedLanguage"]["language"], "zh-Hans", "libre detectedLanguage (LibreTranslate's zh-Hans)")
    T.ok(50 <= b["detectedLanguage"]["confidence"] <= 100, "libre confidence is a percentage")
    st, _, b = s.post("/translate", {"q": [ZH[0], ZH[1]], "source": "zh", "target": "en",
                                     "format": "text", "api_key": ""})
    shape(b, ["translatedText"], "libre explicit source")
    T.eq(b["translatedText"], [s.translate(ZH[0]), s.translate(ZH[1])], "libre array")
    form = f"q={ZH[0]}&source=zh&target=en".encode()
    st, _, b = s.post("/translate", form, {"Content-Type": "application/x-www-form-urlencoded"})
    T.eq((st, b), (200, {"translatedText": s.translate(ZH[0])}), "libre form body")
    boundary = "XyZ"
    mp = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\n{ZH[0]}\r\n"
          f"--{boundary}\r\nContent-Disposition: form-data; name=\"target\"\r\n\r\nen\r\n"
          f"--{boundary}--\r\n").encode()
    st, _, b = s.post("/translate", mp, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    T.eq(st, 200, "libre multipart status")
    T.eq(b.get("translatedText"), s.translate(ZH[0]), "libre multipart")
    st, _, b = s.get("/languages")
    T.eq((st, b), (200, [{"code": "en", "name": "English", "native": "English", "dir": "ltr",
                          "targets": []},
                         {"code": "zh-Hans", "name": "Chinese", "native": "简体中文", "dir": "ltr",
                          "targets": ["en"]}]), "/languages")
    st, _, b = s.post("/detect", {"q": ZH[2]})
    T.eq((st, [d["language"] for d in b][:1]), (200, ["zh-Hans"]), "/detect zh-Hans")
    T.ok(all(0 <= d["confidence"] <= 100 for d in b), "/detect confidences are percentages")
    st, _, b = s.post("/detect", {"q": "Good morning, how are you today?"})
    T.eq([d["language"] for d in b][:1], ["en"], "/detect en")
    st, _, b = s.post("/detect", {"q": "12345 !!"})
    T.eq((st, b), (200, []), "/detect: no letters, no language")

    # DeepL v2 and DeepLX.
    st, _, b = s.post("/v2/translate", {"text": [TEXT], "target_lang": "EN-US"})
    T.eq((st, b), (200, {"translations": [{"detected_source_language": "ZH", "text": want}]}),
         "deepl")
    st, _, b = s.post("/v2/translate", f"text={ZH[0]}&text={ZH[1]}&target_lang=EN".encode(),
                      {"Content-Type": "application/x-www-form-urlencoded"})
    T.eq([t["text"] for t in b.get("translations", [])], [s.translate(ZH[0]), s.translate(ZH[1])],
         "deepl form with repeated text")
    st, _, b = s.post("/deeplx", {"text": TEXT, "source_lang": "ZH", "target_lang": "EN"})
    T.eq(st, 200, "deeplx status")
    shape(b, ["code", "id", "data", "alternatives", "source_lang", "target_lang", "method"],
          "deeplx")
    T.eq((b["code"], b["data"], b["alternatives"], b["source_lang"], b["target_lang"],
          b["method"]), (200, want, [], "ZH", "EN", "Free"), "deeplx values")
    T.ok(isinstance(b["id"], int), "deeplx id is a number")

    # Google v2.
    st, _, b = s.post("/language/translate/v2", {"q": [TEXT], "target": "en", "format": "text"})
    T.eq((st, b), (200, {"data": {"translations": [
        {"translatedText": want, "detectedSourceLanguage": "zh-CN"}]}}), "google (Google's zh-CN)")
    st, _, b = s.post("/language/translate/v2", {"q": TEXT, "source": "zh", "target": "en"})
    T.eq(b["data"]["translations"][0]["translatedText"], want, "google single q, html default")
    q = urllib.parse.quote(TEXT)
    for how, method, path, body, hdr in [
        ("GET, query string", "GET", f"/language/translate/v2?q={q}&target=en", None, {}),
        ("POST, query string, empty body", "POST", f"/language/translate/v2?q={q}&target=en", b"",
         {"Content-Type": "application/json"}),
        ("POST form", "POST", "/language/translate/v2", f"q={q}&target=en".encode(),
         {"Content-Type": "application/x-www-form-urlencoded"}),
        ("POST, body and query string", "POST", "/language/translate/v2?target=en&q=nope",
         {"q": [TEXT]}, {}),
    ]:
        st, _, b = s.request(method, path, body, hdr)
        T.eq((st, b), (200, {"data": {"translations": [
            {"translatedText": want, "detectedSourceLanguage": "zh-CN"}]}}), f"google {how}")
    # Not UTF-8 in a query value or a query name: a 400 saying so (the name not echoed).
    for path, says in [("/language/translate/v2?target=en&q=%E4%BD", "parameter 'q'"),
                       ("/language/translate/v2?%00%00q%22:%22%E4%BD%00%22%7D", "a parameter name")]:
        st, _, b = s.request("POST", path, b"", {"Content-Type": "application/json"})
        T.ok(st == 400 and says in b["error"]["message"], f"google {path}: 400 ({st} {b})")
    st, h, b = s.request("PUT", "/language/translate/v2", b"{}")
    T.eq((st, h.get("allow"), b["error"]["status"], b["error"]["errors"][0]["reason"]),
         (405, "GET, HEAD, POST, OPTIONS", "INVALID_ARGUMENT", "httpMethodNotAllowed"),
         "google 405: both methods allowed, Google's shape")
    # DeepL routes by prefix, any method: glossaries answer in DeepL's
    # shape (test_glossary.py, client_deepl_node).
    for method, path, status in [("DELETE", "/v2/glossaries/abc", 404),
                                 ("GET", "/v2/glossaries/abc/entries", 404),
                                 ("POST", "/v3/glossaries", 400), ("PUT", "/v2/glossaries", 405)]:
        st, _, b = s.request(method, path, b"" if method != "GET" else None)
        T.ok(st == status and list(b) == ["message"], f"{method} {path}: {status} in DeepL's shape "
             f"({st} {b})")
    # Documents (tests/clients/test_deepl_node_documents.js): DeepL's shape.
    st, _, b = s.request("POST", "/v2/document", b"")
    T.ok(st == 400 and list(b) == ["message"] and "missing file" in b["message"],
         f"POST /v2/document without a file: 400 in DeepL's shape ({st} {b})")
    st, h, b = s.request("GET", "/v2/document/ID")
    T.ok(st == 405 and list(b) == ["message"] and h.get("allow") == "POST, OPTIONS",
         f"GET /v2/document/ID: 405 in DeepL's shape ({st} {h.get('allow')} {b})")
    st, _, b = s.get("/v2/glossariesX")
    T.eq(st, 404, "a prefix route matches whole path segments only")

    # Immersive Translate, Kiss Translator: their own codes (zh-CN).
    st, _, b = s.post("/imme", {"source_lang": "zh", "target_lang": "en", "text_list": [TEXT, ZH[3]]})
    T.eq((st, b), (200, {"translations": [{"detected_source_lang": "zh-CN", "text": want},
                                          {"detected_source_lang": "zh-CN",
                                           "text": s.translate(ZH[3])}]}), "imme")
    st, _, b = s.post("/kiss", {"text": TEXT, "from": "zh", "to": "en"})
    T.eq((st, b), (200, {"text": want, "from": "zh-CN", "to": "en"}), "kiss single")
    st, _, b = s.post("/kiss", {"texts": [TEXT], "from": "auto", "to": "en"})
    T.eq((st, b), (200, {"translations": [{"text": want, "src": "zh-CN"}]}), "kiss list")

    # Request ids: a sane incoming id is echoed, every response has one.
    st, h, _ = s.get("/health", {"X-Request-Id": "abc-123"})
    T.eq(h.get("x-request-id"), "abc-123", "incoming X-Request-Id echoed")
    st, h, _ = s.get("/health", {"X-Request-Id": "bad id\x01"[:6]})
    T.ok(h.get("x-request-id") not in (None, "bad id"), "insane X-Request-Id replaced")


def errors(s):
    def err(method, path, body, status, field_or_text, headers=None, what=""):
        st, h, b = s.request(method, path, body, headers)
        T.eq(st, status, f"{what or path}: status")
        T.ok(h.get("x-request-id"), f"{what}: X-Request-Id on an error")
        text = json.dumps(b, ensure_ascii=False)
        T.ok(field_or_text in text, f"{what}: body {text} names {field_or_text!r}")
        return b

    b = err("POST", "/translate", {}, 400, "'text'", what="missing text")
    T.eq(list(b), ["error"], "native error shape")
    T.eq(sorted(b["error"]), ["code", "message"], "native error fields")
    err("POST", "/translate", {"text": 5}, 400, "'text'", what="text wrong type")
    err("POST", "/translate", {"text": ["a", 5]}, 400, "'text[1]'", what="array item wrong type")
    err("POST", "/translate", {"text": "a", "html": "yes"}, 400, "'html'", what="html not bool")
    err("POST", "/translate", {"text": "a", "target": 3}, 400, "'target'", what="target type")
    err("POST", "/translate", "{not json", 400, "invalid JSON", what="invalid JSON")
    err("POST", "/translate", "[1,2]", 400, "JSON object", what="JSON not an object")
    err("POST", "/translate", '{"text":"a","text":"b"}', 400, "duplicate", what="duplicate keys")
    err("POST", "/translate", b'{"text":"\xff\xfe"}', 400, "UTF-8", what="invalid UTF-8 JSON")
    err("POST", "/translate", '{"text":"a\\u0000b"}', 400, "NUL", what="NUL in JSON")
    err("POST", "/translate", "", 400, "empty", what="empty body")
    err("POST", "/translate", "q=%FF%FE&target=en", 400, "'q'",
        {"Content-Type": "application/x-www-form-urlencoded"}, what="invalid UTF-8 form")
    err("POST", "/translate", "<x/>", 415, "Content-Type", {"Content-Type": "application/xml"},
        what="wrong content type")
    deep = "[" * 5000 + "]" * 5000
    err("POST", "/translate", '{"text":' + deep + "}", 400, "error", what="deeply nested JSON")
    b = err("POST", "/translate", {"text": "a", "source": "fr", "target": "en"}, 400, "zh->en",
            what="unknown source language")
    T.ok("'fr'" in b["error"]["message"], "pair named")
    err("POST", "/translate", {"text": "a", "target": "de"}, 400, "zh->en", what="unknown target")
    b = err("POST", "/translate", {"q": "a", "source": "zh"}, 400, "'target'", what="libre target")
    T.ok(isinstance(b.get("error"), str), "libre error shape {error: string}")
    b = err("POST", "/translate", {"q": "a", "target": "en", "format": "pdf"}, 400, "'format'",
            what="libre format")
    b = err("POST", "/v2/translate", {"text": ["a"]}, 400, "target_lang", what="deepl target")
    T.eq(list(b), ["message"], "deepl error shape")
    b = err("POST", "/deeplx", {"text": ["a"], "target_lang": "EN"}, 400, "'text'",
            what="deeplx text must be a string")
    T.eq(sorted(b), ["code", "message"], "deeplx error shape")
    T.eq(b["code"], 400, "deeplx error code")
    b = err("POST", "/language/translate/v2", {"target": "en"}, 400, "'q'", what="google q")
    T.eq(sorted(b["error"]), ["code", "errors", "message", "status"], "google error shape")
    T.eq(b["error"]["status"], "INVALID_ARGUMENT", "google error status")
    err("POST", "/imme", {"target_lang": "en", "text_list": "a"}, 400, "'text_list'",
        what="imme text_list type")
    err("POST", "/kiss", {"to": "en"}, 400, "'text'", what="kiss missing text")
    err("POST", "/detect", {}, 400, "'q'", what="detect missing q")

    # Limits: --max-chars 200, --max-batch-items 4 in this server.
    b = err("POST", "/translate", {"text": "字" * 201}, 413, "200", what="over max-chars")
    err("POST", "/translate", {"text": ["字" * 100, "字" * 101]}, 413, "200",
        what="over max-chars in total")
    st, _, _ = s.post("/translate", {"text": "字" * 200})
    T.eq(st, 200, "exactly max-chars is fine")
    err("POST", "/translate", {"text": ["a"] * 5}, 413, "limit is 4", what="over max-batch-items")
    # 413 on the body, decided from Content-Length before it is read: send
    # the headers of a 100 MB body and nothing else.
    c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    c.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 104857600\r\n\r\n")
    resp = http.client.HTTPResponse(c)
    resp.begin()
    T.eq(resp.status, 413, "100 MB Content-Length refused before the body")
    T.ok(b"limit" in resp.read(), "413 names the limit")
    c.close()
    # A chunked body is decoded and served like one with a length
    # (test_chunked.py has the clients and the hostile framings).
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    c.putrequest("POST", "/translate")
    c.putheader("Transfer-Encoding", "chunked")
    c.putheader("Content-Type", "application/json")
    c.endheaders()
    body = json.dumps({"text": "a"}).encode()
    c.send(b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
    r = c.getresponse()
    T.eq((r.status, json.loads(r.read()).get("translation")), (200, "a"), "chunked body: served")
    c.close()

    b = err("GET", "/nope", None, 404, "no such endpoint", what="unknown path")
    st, h, _ = s.request("GET", "/translate")
    T.eq(st, 405, "GET /translate is 405")
    T.ok("POST" in h.get("allow", ""), "405 has Allow")
    st, _, _ = s.request("DELETE", "/health")
    T.eq(st, 405, "DELETE /health is 405")
    st, h, _ = s.request("OPTIONS", "/translate")
    T.eq(st, 204, "OPTIONS preflight")
    T.eq(h.get("access-control-allow-origin"), "*", "CORS origin on preflight")
    st, h, _ = s.post("/translate", {"text": "a"})
    T.eq(h.get("access-control-allow-origin"), "*", "CORS origin on answers")

    # The server is still healthy after all that.
    st, _, b = s.get("/health")
    T.eq((st, b), (200, {"status": "ok"}), "healthy after the errors")
    m = s.settled_metrics()
    T.ok(m.get('fanyi_requests_total{endpoint="translate",status="400"}', 0) >= 10,
         "metrics count 400s by endpoint")
    T.ok(m.get('fanyi_requests_total{endpoint="translate",status="413"}', 0) >= 3,
         "metrics count 413s")


# A generous deadline: sanitizer builds translate slowly.
with Server(["--threads", "2", "--max-chars", "200", "--max-batch-items", "4",
             "--timeout-ms", "600000", "--cors-origin", "*"]) as s:
    T.ok("threads=2" in s.ready_line and "models=zh-en" in s.ready_line,
         f"ready line {s.ready_line!r}")
    endpoints(s)
    errors(s)
    log = s.log()
rc = s.stop()
T.eq(rc, 0, "exit status after SIGTERM")
T.ok("endpoint=translate direction=zh-en status=200" in log and "chars=" in log and "ms=" in log,
     "one log line per request")
T.finish()
