"""mixlib.py - the mixed requests bench/soak and bench/overload send: single
sentences, multi-sentence paragraphs, HTML, and arrays of texts, through the
native API and the LibreTranslate, DeepL, DeepLX, Google, Immersive and Kiss
dialects (JSON and form bodies), plus the native SSE stream; and the
single-request answers they are checked against.
"""
import random
import re
import time
import urllib.parse

import loadlib

# A request's answer is compared byte for byte with the one it got alone,
# except DeepLX's "id", which the API defines as a per-request counter.
DEEPLX_ID = re.compile(rb'"id":\d+')


def normalize(kind, body):
    return DEEPLX_ID.sub(b'"id":0', body) if kind.startswith("deeplx") else body


def _form(pairs):
    return urllib.parse.urlencode(pairs).encode()


def _html(a, b, c):
    return f"<p>{a}<b>{b}</b></p><ul><li>{c}</li></ul>"


# kind -> builder(pick) returning (path, body bytes, headers); pick(k) gives
# k distinct sentences.
KINDS = {
    "native-sentence": lambda p: ("/translate", loadlib.json_body({"text": p(1)[0]}), loadlib.JSON),
    "native-paragraph": lambda p: ("/translate", loadlib.json_body({"text": "".join(p(4))}),
                                   loadlib.JSON),
    "native-html": lambda p: ("/translate", loadlib.json_body({"text": _html(*p(3)), "html": True}),
                              loadlib.JSON),
    "native-array": lambda p: ("/translate", loadlib.json_body({"text": p(3)}), loadlib.JSON),
    "native-stream": lambda p: ("/translate/stream", loadlib.json_body({"text": "".join(p(3))}),
                                loadlib.JSON),
    "libre-sentence": lambda p: ("/translate",
                                 loadlib.json_body({"q": p(1)[0], "source": "zh", "target": "en"}),
                                 loadlib.JSON),
    "libre-array-auto": lambda p: ("/translate",
                                   loadlib.json_body({"q": p(2), "source": "auto", "target": "en"}),
                                   loadlib.JSON),
    "libre-form": lambda p: ("/translate", _form([("q", s) for s in p(2)] +
                                                 [("source", "zh"), ("target", "en")]), loadlib.FORM),
    "libre-html": lambda p: ("/translate", loadlib.json_body({"q": _html(*p(3)), "source": "zh",
                                                              "target": "en", "format": "html"}),
                             loadlib.JSON),
    "deepl-array": lambda p: ("/v2/translate",
                              loadlib.json_body({"text": p(3), "target_lang": "EN-US"}), loadlib.JSON),
    "deepl-form": lambda p: ("/v2/translate", _form([("text", s) for s in p(2)] +
                                                    [("target_lang", "EN")]), loadlib.FORM),
    "deepl-html": lambda p: ("/v2/translate", loadlib.json_body({"text": [_html(*p(3))],
                                                                 "target_lang": "EN",
                                                                 "tag_handling": "html"}),
                             loadlib.JSON),
    "deeplx-paragraph": lambda p: ("/deeplx", loadlib.json_body({"text": "".join(p(3)),
                                                                 "source_lang": "ZH",
                                                                 "target_lang": "EN"}), loadlib.JSON),
    "google-array": lambda p: ("/language/translate/v2",
                               loadlib.json_body({"q": p(2), "target": "en", "format": "text"}),
                               loadlib.JSON),
    "imme-list": lambda p: ("/imme", loadlib.json_body({"source_lang": "auto", "target_lang": "en",
                                                        "text_list": p(2)}), loadlib.JSON),
    "kiss-texts": lambda p: ("/kiss", loadlib.json_body({"texts": p(2), "from": "zh", "to": "en"}),
                             loadlib.JSON),
}


def build(sentences, n, seed=1, kinds=None):
    """n requests (kind, path, body, headers), cycling through the kinds,
    drawing sentences at random (fixed seed)."""
    rng = random.Random(seed)
    kinds = kinds or list(KINDS)
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        path, body, headers = KINDS[kind](lambda k: rng.sample(sentences, k))
        out.append((kind, path, body, headers))
    return out


def single_answers(port, reqs, tool):
    """Each request's answer alone, one after the other (status must be 200);
    returns (answers, seconds)."""
    c = loadlib.Client(port, timeout=300)
    answers = []
    t0 = time.monotonic()
    for kind, path, body, headers in reqs:
        st, _, data = c.request("POST", path, body, headers)
        if st != 200:
            loadlib.die(tool, f"{kind}: single request answered {st}: {data[:300]!r}")
        answers.append(normalize(kind, data))
    c.close()
    return answers, time.monotonic() - t0
