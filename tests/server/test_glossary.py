#!/usr/bin/env python3
"""test_glossary.py - glossaries and confidence through the real `fanyi serve`
(synthetic zh-en, en-zh, de-en and en-de models; a zh -> de request goes
through English):

1. the native glossary routes: create (TSV, CSV, an object of terms, several
   dictionaries), list (all, by direction), get, rename and merge, import
   (raw TSV) and export (TSV, CSV, JSON), delete a dictionary, delete; bad
   entries refused with messages naming them (empty, duplicate, too long,
   invalid UTF-8, a line that is no entry), unknown ids 404, the API token
   guards every route;
2. translations that use one: glossary_id and an inline glossary, each
   target term exactly once and no trace of the source term, in HTML, in a
   sentence of only a term (never sent to the engine), case-insensitive
   English terms with the occurrence's case, keep-as-is terms, a pivot
   (zh -> de through English: applied on the last leg), beam search (the
   alternatives too), a document (HTML, the term across a tag) with
   glossary_id, errors for an unknown id, a bad inline entry, a
   glossary_id without a target;
3. the cache: a sentence cached for a glossary is not the answer for a
   request without it (nor the other way round), and is one with it;
4. persistence: a glossary created before a restart is used after it;
5. two replicas sharing a real redis-server: a glossary made on A is
   applied on B, B's update is A's next answer, a sentence A translated
   with it is B's cache hit (and not without it), a delete on B is one on A;
6. the plug-ins' prompts over the OpenAI API: Kiss Translator's batch JSON
   glossary and its "# Glossary:" block, Immersive Translate's terms_prompt;
7. confidence: "scores" per sentence (finite numbers, null for a sentence
   of glossary terms only), in each SSE sentence event and the final one,
   and absent unless asked; the synthetic models' random weights do not
   order a garbled input below a clean one, so no such order is asserted;
8. /languages: the rules table's native name and direction.
"""
import base64
import json
import os
import shutil
import tempfile

from fylib import BUILD, T, Server, sse_events, wait_for
from redislib import RedisServer

M = os.path.join(BUILD, "models")
ROOT = tempfile.mkdtemp(prefix="fanyi-gl-models-")
for name, src in {"zh-en": "tiny-int8-sl", "en-zh": "firefox-en-zh", "de-en": "tiny-de-en",
                  "en-de": "tiny-en-de"}.items():
    os.symlink(os.path.join(M, src), os.path.join(ROOT, name))
DATA = tempfile.mkdtemp(prefix="fanyi-gl-data-")
TOKEN = "gl-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def server(data=DATA, extra=()):
    return Server(["--data-dir", data, "--api-token", TOKEN, "--threads", "1", *extra],
                  model=None, models=ROOT)


def post(s, path, body, headers=AUTH):
    return s.post(path, body, headers)


def tr(s, body):
    st, _, b = post(s, "/translate", body)
    T.eq(st, 200, f"translate {body.get('text')!r}: {b}")
    return b if st == 200 else {}


def create(s, body):
    st, _, b = post(s, "/glossaries", body)
    T.eq(st, 201, f"create {body.get('name')}: {b}")
    return b.get("id", "") if isinstance(b, dict) else ""


def error(s, method, path, body, status, part, headers=AUTH):
    st, _, b = s.request(method, path, body, headers)
    msg = b.get("error", {}).get("message", "") if isinstance(b, dict) else str(b)
    T.ok(st == status and part in msg, f"{method} {path}: want {status} '{part}', got {st} {b}")


def routes(s):
    gid = create(s, {"name": "Energy", "source": "zh", "target": "en",
                     "entries": "发电厂\tpower plant\n北京\tBeijing\n"})
    T.ok(len(gid) == 36 and gid.count("-") == 4, f"a UUID: {gid}")
    st, _, b = s.get(f"/glossaries/{gid}", AUTH)
    T.eq((st, b.get("name"), b.get("dictionaries")),
         (200, "Energy", [{"source": "zh", "target": "en", "entries": 2}]), "GET one")
    T.ok(b.get("created", "").endswith("Z"), f"created is an ISO time: {b.get('created')}")
    csv = create(s, {"name": "CSV", "dictionaries": [
        {"source": "en", "target": "de", "format": "csv", "entries": 'source,target\n"power plant",Kraftwerk\n'},
        {"source": "de", "target": "en", "entries": {"Kraftwerk": "power plant"}}]})
    st, _, b = s.get("/glossaries?source=en&target=de", AUTH)
    T.eq([g["id"] for g in b.get("glossaries", [])], [csv], "listed by direction")
    st, _, b = s.get("/glossaries", AUTH)
    T.eq(sorted(g["id"] for g in b["glossaries"]), sorted([gid, csv]), "listed all")
    st, _, b = s.request("PATCH", f"/glossaries/{gid}",
                         {"name": "Energy 2", "source": "zh", "target": "en",
                          "entries": {"北京": "Peking", "上海": "Shanghai"}}, AUTH)
    T.eq((st, b.get("name"), b.get("dictionaries", [{}])[0].get("entries")), (200, "Energy 2", 3),
         "PATCH renames and merges")
    st, h, text = s.get(f"/glossaries/{gid}/entries?source=zh&target=en", AUTH)
    T.eq((st, h.get("content-type", "").split(";")[0], sorted(text.strip().split("\n"))),
         (200, "text/tab-separated-values",
          sorted(["北京\tPeking", "上海\tShanghai", "发电厂\tpower plant"])), "export TSV")
    st, _, b = s.get(f"/glossaries/{gid}/entries?source=zh&target=en&format=json", AUTH)
    T.eq(b.get("entries", {}).get("北京"), "Peking", "export JSON")
    st, _, text = s.get(f"/glossaries/{csv}/entries?source=en&target=de&format=csv", AUTH)
    T.eq(text, "power plant,Kraftwerk\n", "export CSV")
    st, _, b = s.request("PUT", f"/glossaries/{gid}/entries?source=zh&target=en",
                         "发电厂\tpower plant\n北京\tBeijing\n",
                         {**AUTH, "Content-Type": "text/tab-separated-values"})
    T.eq((st, b.get("dictionaries", [{}])[0].get("entries")), (200, 2), "import raw TSV replaces")
    st, _, _ = s.request("DELETE", f"/glossaries/{csv}/entries?source=de&target=en", None, AUTH)
    st2, _, b = s.get(f"/glossaries/{csv}", AUTH)
    T.eq((st, len(b.get("dictionaries", []))), (204, 1), "a dictionary deleted")
    # Bad entries, each named.
    base = {"name": "bad", "source": "en", "target": "de"}
    error(s, "POST", "/glossaries", {**base, "entries": "\tLeer\n"}, 400, "line 1: the source term is empty")
    error(s, "POST", "/glossaries", {**base, "entries": "a\tb\nA\tc\n"}, 400,
          "line 2: duplicate source term 'a' (already in entry 1)")
    error(s, "POST", "/glossaries", {**base, "entries": "x" * 1025 + "\ty\n"}, 400,
          "is longer than 1024 bytes (1025)")
    error(s, "POST", "/glossaries", {**base, "entries": "ab\n"}, 400,
          "line 1: no tab between the source and the target term")
    error(s, "POST", "/glossaries", {**base, "entries": {"a": 1}}, 400, "the target of 'a' must be a string")
    error(s, "POST", "/glossaries", {**base, "entries": {"a\u0007": "b"}}, 400, "control character (U+0007)")
    error(s, "PUT", f"/glossaries/{gid}/entries?source=zh&target=en", b"\xe5\x8f\tx\n", 400,
          "not valid UTF-8", {**AUTH, "Content-Type": "text/tab-separated-values"})
    error(s, "POST", "/glossaries", {"source": "en", "target": "de", "entries": "a\tb"}, 400,
          "field 'name' is required")
    error(s, "POST", "/glossaries", {**base, "source": "xx-!", "entries": "a\tb"}, 400,
          "field 'source' must be a language code")
    error(s, "GET", "/glossaries/nope", None, 404, "no glossary 'nope'")
    error(s, "POST", "/glossaries", {**base, "entries": "a\tb"}, 401, "an API token is required", {})
    error(s, "GET", "/glossaries", None, 401, "an API token is required", {})
    st, _, _ = s.request("DELETE", f"/glossaries/{csv}", None, AUTH)
    T.eq(st, 204, "DELETE")
    error(s, "GET", f"/glossaries/{csv}", None, 404, "no glossary")
    return gid


def applied(s, gid):
    b = tr(s, {"text": "这个发电厂很大。北京很美。", "source": "zh", "target": "en", "glossary_id": gid})
    t = b.get("translation", "")
    T.ok(t.count("power plant") == 1 and t.count("Beijing") == 1 and "发电厂" not in t,
         f"glossary_id: each target once: {t!r}")
    b = tr(s, {"text": "这个发电厂很大。", "source": "zh", "target": "en",
               "glossary": {"发电厂": "Kraftwerk-X"}})
    T.ok(b.get("translation", "").count("Kraftwerk-X") == 1, f"inline glossary: {b}")
    b = tr(s, {"text": "<p>这个<b>发电厂</b>很大。</p>", "source": "zh", "target": "en", "html": True,
               "glossary": {"发电厂": "power & light"}})
    T.ok("<b>power &amp; light</b>" in b.get("translation", ""), f"in HTML, escaped, in its tags: {b}")
    b = tr(s, {"text": "北京。", "source": "zh", "target": "en", "glossary_id": gid, "scores": True})
    T.eq((b.get("translation"), b.get("scores")), ("Beijing.", [{"score": None, "margin": None}]),
         "a sentence of a term only: no engine (no score), cleaned up for English")
    b = tr(s, {"text": "The POWER PLANT and the Power plant and Fanyi.", "source": "en", "target": "de",
               "glossary": {"power plant": "kraftwerk", "Fanyi": ""}})
    t = b.get("translation", "")
    T.ok("KRAFTWERK" in t and "Kraftwerk" in t and "Fanyi" in t and "PLANT" not in t.upper()
         .replace("KRAFTWERK", ""), f"English terms by case, kept term: {t!r}")
    pivot = create(s, {"name": "zh-de", "source": "zh", "target": "de", "entries": "发电厂\tKraftwerk\n"})
    st, _, b = post(s, "/translate", {"text": "这个发电厂很大。", "source": "zh", "target": "de",
                                      "glossary_id": pivot})
    T.ok(st == 200 and b["translation"].count("Kraftwerk") == 1,
         f"a pivot through English: the term on the last leg: {b}")
    b = tr(s, {"text": "这个发电厂很大。", "source": "zh", "target": "en", "glossary_id": gid,
               "beam": 3, "alternatives": 2})
    T.ok(b.get("translation", "").count("power plant") == 1 and
         all(a.count("power plant") == 1 for a in b.get("alternatives", [])),
         f"beam search: the translation and its alternatives: {b}")
    error(s, "POST", "/translate", {"text": "你好", "target": "en", "glossary_id": "nope"}, 400,
          "field 'glossary_id': no glossary 'nope'")
    error(s, "POST", "/translate", {"text": "你好", "glossary_id": gid}, 400,
          "field 'glossary_id' needs the target language ('target')")
    error(s, "POST", "/translate", {"text": "你好", "target": "en", "glossary": {"": "x"}}, 400,
          "field 'glossary': the source term is empty")
    error(s, "POST", "/translate", {"text": "你好", "target": "en", "glossary": ["x"]}, 400,
          "field 'glossary' must be an object of terms")


def document(s, gid):
    """A document (POST /translate/document) with glossary_id: the term,
    split by an inline tag, comes out as the target once; an unknown id is
    refused before the stream starts."""
    html = "<html><body><p>这个发<b>电</b>厂很大。</p><p>北京很美。</p></body></html>"
    q = f"/translate/document?filename=a.html&source=zh&target=en&glossary_id={gid}"
    st, _, text = s.request("POST", q, html.encode(), {**AUTH, "Content-Type": "text/html"})
    lines = [json.loads(x) for x in text.splitlines() if x.strip()] if st == 200 else []
    done = [x for x in lines if x.get("event") == "done"]
    out = base64.b64decode(done[0]["data"]).decode() if done else ""
    T.ok(out.count("power plant") == 1 and out.count("Beijing") == 1 and "发" not in out
         and "北京" not in out, f"a document with glossary_id (the term across a tag): {st} {out!r}")
    error(s, "POST", "/translate/document?filename=a.txt&target=en&glossary_id=nope", "北京很美。",
          400, "field 'glossary_id': no glossary 'nope'")


def cached(s):
    """A sentence without a term: the same engine text with and without
    the glossary, cached apart (the glossary's hash is in the key)."""
    body = {"text": "天气预报说今天下午有雷阵雨。", "source": "zh", "target": "en",
            "glossary": {"发电厂": "power plant"}}
    plain = dict(body)
    del plain["glossary"]
    n = lambda: s.metrics()["fanyi_sentences_translated_total"]
    n0 = n()
    a = tr(s, body)
    b = tr(s, plain)
    T.eq(n() - n0, 2.0, "the request without the glossary is not answered by its cache entry")
    n1 = n()
    c, d = tr(s, body), tr(s, plain)
    T.eq((n() - n1, c, d), (0.0, a, b), "each is then answered by its own entry")


def scores(s):
    b = tr(s, {"text": "你好。今天天气很好。", "source": "zh", "target": "en", "scores": True})
    sc = b.get("scores", [])
    T.ok(len(sc) == 2 and all(isinstance(x["score"], float) and isinstance(x["margin"], float)
                              for x in sc), f"scores: one per sentence, finite: {sc}")
    b = tr(s, {"text": ["你好。", "谢谢。再见。"], "source": "zh", "target": "en", "scores": True})
    T.eq([len(x) for x in b.get("scores", [])], [1, 2], "an array of texts: an array of arrays")
    b = tr(s, {"text": "你好。", "source": "zh", "target": "en"})
    T.ok("scores" not in b, "no scores unless asked")
    again = tr(s, {"text": "你好。今天天气很好。", "source": "zh", "target": "en", "scores": True})
    T.eq(again.get("scores"), sc, "a cached sentence keeps its score")
    import http.client
    for asked in (True, False):
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=600)
        c.request("POST", "/translate/stream", json.dumps(
            {"text": "你好。今天天气很好。", "source": "zh", "target": "en", "scores": asked}),
            {**AUTH, "Content-Type": "application/json"})
        ev = sse_events(c.getresponse())
        c.close()
        sent = [d for e, d in ev if e == "sentence"]
        done = [d for e, d in ev if e == "done"]
        if asked:
            T.ok(len(sent) == 2 and all(isinstance(d.get("score", {}).get("score"), float)
                                        for d in sent) and done and len(done[0]["scores"]) == 2,
                 f"SSE: a score per sentence event and in done: {ev}")
        else:
            T.ok(sent and all("score" not in d for d in sent) and "scores" not in done[0],
                 "SSE: none unless asked")


def openai(s):
    kiss = {"targetLanguage": "en", "segments": [{"id": 1, "text": "这个发电厂很大。"}],
            "glossary": {"发电厂": "Power-Station"}}
    st, _, b = post(s, "/v1/chat/completions", {"model": "fanyi", "messages": [
        {"role": "system", "content": "Act as a translation API. Output a single raw JSON object only."},
        {"role": "user", "content": json.dumps(kiss, ensure_ascii=False)}]})
    out = json.loads(b["choices"][0]["message"]["content"]) if st == 200 else {}
    T.ok(st == 200 and "Power-Station" in out["translations"][0]["text"],
         f"Kiss Translator batch JSON: its glossary applied: {b}")
    user = ("# Context\nTitle: \nDescription: \nSummary: \nTone: \n\n# Glossary:\n- 发电厂: Power-Station\n"
            "- 北京: \n\n# Task\nTranslate the Source Text below to English.\n1. Use the Context to "
            "ensure accuracy.\n2. Adapt the wording to match the specified Tone.\n3. Output ONLY the "
            "translated text. No markdown, no explanations.\n\nSource Text: 北京的发电厂很大。\n\n"
            "Translated Text:")
    st, _, b = post(s, "/v1/chat/completions", {"model": "fanyi", "messages": [
        {"role": "system", "content": "You are a professional, authentic machine translation engine."},
        {"role": "user", "content": user}]})
    t = b["choices"][0]["message"]["content"] if st == 200 else ""
    T.ok("Power-Station" in t and "北京" in t, f"Kiss Translator '# Glossary:' block (and keep): {b}")
    system = ("You are a professional English native translator who needs to fluently translate text "
              "into English.\n\n## Translation Rules\n1. Output only the translated content\n5. Output "
              "translation directly (no separators, no extra text)\n\nRequired Terminology: You MUST "
              "use the following terms during translation, If 'source':'target', source == target, "
              "keep the source term unchanged.\n\n Terms -> \n\n '发电厂[Energy]': 'Power-Station', "
              "'北京': '北京'")
    st, _, b = post(s, "/v1/chat/completions", {"model": "fanyi", "messages": [
        {"role": "system", "content": system},
        {"role": "user", "content": "Translate to English (output translation only):\n\n北京的发电厂很大。"}]})
    t = b["choices"][0]["message"]["content"] if st == 200 else ""
    T.ok("Power-Station" in t and "北京" in t, f"Immersive Translate terms_prompt: {b}")


def languages(s):
    st, _, b = s.get("/languages")
    by = {x["code"]: x for x in b}
    T.eq((by["zh-Hans"]["native"], by["zh-Hans"]["dir"], by["en"]["native"], by["de"]["dir"]),
         ("简体中文", "ltr", "English", "ltr"), "/languages: native name and direction")


with server() as s:
    gid = routes(s)
    applied(s, gid)
    document(s, gid)
    cached(s)
    scores(s)
    openai(s)
    languages(s)
with server() as s:  # a restart: the glossary is back from its file
    b = tr(s, {"text": "北京。", "source": "zh", "target": "en", "glossary_id": gid})
    T.eq(b.get("translation"), "Beijing.", "persistence across a restart")

# Two replicas, one Redis.
with RedisServer() as r:
    url = f"redis://127.0.0.1:{r.port}"
    da, db = tempfile.mkdtemp(prefix="fanyi-gl-a-"), tempfile.mkdtemp(prefix="fanyi-gl-b-")
    # A lookup slower than --redis-timeout-ms counts as an error and B's engine
    # would translate: generous for a loaded machine's sanitizer builds.
    shared = ["--redis", url, "--redis-timeout-ms", "2000"]
    with server(da, shared) as a, server(db, shared) as b:
        g = create(a, {"name": "Shared", "source": "zh", "target": "en", "entries": "北京\tPeking\n"})
        t = tr(b, {"text": "北京。", "source": "zh", "target": "en", "glossary_id": g})
        T.eq(t.get("translation"), "Peking.", "made on A, applied on B")
        st, _, _ = b.request("PUT", f"/glossaries/{g}/entries?source=zh&target=en", "北京\tBeijing\n",
                             {**AUTH, "Content-Type": "text/tab-separated-values"})
        t = tr(a, {"text": "北京。", "source": "zh", "target": "en", "glossary_id": g})
        T.eq((st, t.get("translation")), (200, "Beijing."), "B's update is A's next answer")
        # The shared cache: a sentence A translated with the glossary is a
        # Redis hit on B with it (B's engine idle), and a miss without it.
        body = {"text": "北京的天气预报说今天有雨。", "source": "zh", "target": "en", "glossary_id": g}
        writes = lambda: a.metrics().get("fanyi_cache_redis_writes_total", 0.0)
        w0 = writes()
        ta = tr(a, body)
        T.ok(wait_for(lambda: writes() > w0, 10), "A stored its sentence in Redis")
        n = lambda: b.metrics()["fanyi_sentences_translated_total"]
        n0 = n()
        tb = tr(b, body)
        T.eq((n() - n0, tb.get("translation")), (0.0, ta.get("translation")),
             "A's sentence with the glossary is B's cache hit through Redis")
        T.ok("Beijing" in tb.get("translation", ""), f"and it has the term: {tb}")
        tr(b, {k: v for k, v in body.items() if k != "glossary_id"})
        T.eq(n() - n0, 1.0, "without the glossary the same sentence is B's engine's")
        keys = r.command("KEYS", "fanyi:3:*#*")
        T.ok(keys and all(k.startswith(b"fanyi:3:zh-en:") for k in keys),
             f"glossary sentences keyed apart in Redis: {keys[:2]}")
        st, _, _ = b.request("DELETE", f"/glossaries/{g}", None, AUTH)
        error(a, "GET", f"/glossaries/{g}", None, 404, "no glossary")
    shutil.rmtree(da)
    shutil.rmtree(db)

shutil.rmtree(DATA)
shutil.rmtree(ROOT)
T.finish()
