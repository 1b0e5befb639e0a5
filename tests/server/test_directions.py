#!/usr/bin/env python3
"""test_directions.py - one `fanyi serve --models DIR` with zh-en, en-zh,
de-en and en-de models (synthetic, fixture synth_models):

- every dialect routes by its own language codes, `auto` picks the model
  by detection, and each answer equals `fanyi translate --from ... --to ...`;
- de->zh goes through English (two models), and equals the CLI's pivot;
- an unsupported pair is a 400 that names the pairs there are;
- /languages (native/LibreTranslate, DeepL, Google) lists what can be served;
- models load lazily; under a small --models-memory the least recently used
  idle one is unloaded, and alternating requests keep answering (no 5xx);
- concurrent first requests load a model once;
- metrics and logs carry the direction.
"""
import os
import shutil
import subprocess
import tempfile
import threading

from fylib import BIN, BUILD, T, Server

M = os.path.join(BUILD, "models")
MODELS = {"zh-en": "tiny-int8-sl", "en-zh": "firefox-en-zh", "de-en": "tiny-de-en",
          "en-de": "tiny-en-de"}
ZH = "这家饭馆的饺子又便宜又好吃。"
EN = "The weather is nice today, so we are going to the park."
DE = "Das Wetter ist heute schön, wir gehen in den Park."

root = tempfile.mkdtemp(prefix="fanyi-models-")
for name, src in MODELS.items():
    os.symlink(os.path.join(M, src), os.path.join(root, name))
# Not a direction, or not a model: skipped.
os.mkdir(os.path.join(root, "notes"))
os.mkdir(os.path.join(root, "fr-en"))


def cli(text, src, tgt):
    """`fanyi translate --models ROOT --from src --to tgt` of one line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FANYI_MODEL")}
    p = subprocess.run([BIN, "translate", "--models", root, "--from", src, "--to", tgt],
                       input=text + "\n", capture_output=True, text=True, env=env, timeout=300)
    T.eq(p.returncode, 0, f"cli {src}->{tgt} exit ({p.stderr.strip()})")
    return p.stdout[:-1] if p.stdout.endswith("\n") else p.stdout


want = {("zh", "en"): cli(ZH, "zh", "en"), ("en", "zh"): cli(EN, "en", "zh"),
        ("de", "en"): cli(DE, "de", "en"), ("de", "zh"): cli(DE, "de", "zh"),
        ("zh", "de"): cli(ZH, "zh", "de")}
for k, v in want.items():
    T.ok(isinstance(v, str) and v.strip(), f"cli {k} gives a translation")
p = subprocess.run([BIN, "translate", "--models", root, "--from", "fr", "--to", "en"],
                   input="Bonjour.\n", capture_output=True, text=True, timeout=60)
T.ok(p.returncode != 0 and "fr->en" in p.stderr and "zh->en" in p.stderr,
     f"cli: no fr->en model, the pairs listed: {p.stderr.strip()}")


def dialects(s):
    # Native, explicit and auto.
    for (src, tgt), text in [(("zh", "en"), ZH), (("en", "zh"), EN), (("de", "zh"), DE),
                             (("de", "en"), DE)]:
        st, _, b = s.post("/translate", {"text": text, "source": src, "target": tgt})
        T.eq((st, b.get("translation")), (200, want[(src, tgt)]), f"native {src}->{tgt}")
    st, _, b = s.post("/translate", {"text": [ZH, EN, DE], "target": "zh"})
    T.eq(st, 200, "native auto array status")
    T.eq(b.get("source"), ["zh", "en", "de"], "auto detects each text's language")
    T.eq(b.get("translation"), [ZH, want[("en", "zh")], want[("de", "zh")]],
         "auto: Chinese passes through, English and German are translated")
    st, _, b = s.post("/translate", {"text": [ZH, DE]})
    T.eq((st, b.get("target"), b.get("translation")),
         (200, ["en", "en"], [want[("zh", "en")], want[("de", "en")]]), "no target: into English")
    st, _, b = s.post("/translate", {"text": EN})
    T.ok(st == 400 and "which language" in b["error"]["message"],
         f"English with no target, two languages English goes into: 400 {b}")
    # LibreTranslate codes.
    st, _, b = s.post("/translate", {"q": EN, "source": "en", "target": "zh-Hans"})
    T.eq((st, b.get("translatedText")), (200, want[("en", "zh")]), "libre en->zh-Hans")
    st, _, b = s.post("/translate", {"q": ZH, "source": "auto", "target": "en"})
    T.eq(b.get("detectedLanguage", {}).get("language"), "zh-Hans", "libre auto detects zh-Hans")
    # DeepL and DeepLX: upper case, regions.
    st, _, b = s.post("/v2/translate", {"text": [EN], "source_lang": "EN", "target_lang": "ZH"})
    T.eq((st, b), (200, {"translations": [{"detected_source_language": "EN",
                                           "text": want[("en", "zh")]}]}), "deepl EN->ZH")
    st, _, b = s.post("/v2/translate", {"text": [ZH], "target_lang": "EN-GB"})
    T.eq((st, b["translations"][0]), (200, {"detected_source_language": "ZH",
                                            "text": want[("zh", "en")]}), "deepl auto->EN-GB")
    st, _, b = s.post("/deeplx", {"text": ZH, "source_lang": "auto", "target_lang": "EN-US"})
    T.eq((st, b.get("data"), b.get("source_lang"), b.get("target_lang")),
         (200, want[("zh", "en")], "ZH", "EN-US"), "deeplx echoes EN-US")
    # Google: zh-CN.
    st, _, b = s.post("/language/translate/v2", {"q": [EN], "target": "zh-CN", "format": "text"})
    T.eq((st, b), (200, {"data": {"translations": [
        {"translatedText": want[("en", "zh")], "detectedSourceLanguage": "en"}]}}), "google zh-CN")
    # Immersive, Kiss.
    st, _, b = s.post("/imme", {"source_lang": "auto", "target_lang": "zh-CN", "text_list": [EN]})
    T.eq((st, b), (200, {"translations": [{"detected_source_lang": "en",
                                           "text": want[("en", "zh")]}]}), "imme zh-CN")
    st, _, b = s.post("/kiss", {"text": DE, "from": "de", "to": "zh-CN"})
    T.eq((st, b.get("text"), b.get("from")), (200, want[("de", "zh")], "de"), "kiss de->zh-CN")
    # Unsupported pairs name what exists.
    st, _, b = s.post("/translate", {"text": "Bonjour", "source": "fr", "target": "en"})
    msg = b.get("error", {}).get("message", "") if isinstance(b, dict) else ""
    T.ok(st == 400 and "fr" in msg and "zh->en" in msg and "en->zh" in msg,
         f"fr->en is a 400 naming the pairs: {st} {msg}")
    st, _, b = s.post("/v2/translate", {"text": ["x"], "target_lang": "JA"})
    T.ok(st == 400 and "zh->en" in b.get("message", ""), f"deepl JA: 400 in DeepL's shape {b}")
    st, _, b = s.post("/translate", {"q": "x", "source": "chinese!", "target": "en"})
    T.ok(st == 400 and "not a language code" in b.get("error", ""), f"libre bad code {b}")


def languages(s):
    st, _, b = s.get("/languages")
    got = {l["code"]: l["targets"] for l in b} if st == 200 else {}
    T.eq(got, {"de": ["en", "zh-Hans"], "en": ["de", "zh-Hans"], "zh-Hans": ["de", "en"]},
         "/languages: direct pairs and pivots through English (LibreTranslate's zh-Hans)")
    st, _, b = s.get("/v2/languages?type=target")
    T.eq(sorted(l["language"] for l in b), ["DE", "EN-GB", "EN-US", "ZH", "ZH-HANS"],
         "deepl target languages (DeepL's regional variants)")
    st, _, b = s.get("/language/translate/v2/languages")
    T.eq(sorted(l["language"] for l in b["data"]["languages"]), ["de", "en", "zh", "zh-CN"],
         "google languages (Chinese as zh and zh-CN, as Google lists it)")
    st, _, b = s.get("/version")
    pairs = sorted((p["source"], p["target"], p["pivot"]) for p in b["languages"])
    T.ok(("de", "zh", True) in pairs and ("zh", "en", False) in pairs, f"/version pairs {pairs}")
    T.ok(all("/" not in m["model"] for m in b["models"]), "/version shows no paths")


def loaded(s):
    st, _, b = s.get("/ready")
    return {m["direction"]: m["loaded"] for m in b["models"]}


# ---- one server, no memory limit: routing, dialects, languages ----
with Server(["--threads", "2"], models=root) as s:
    T.eq(loaded(s), {"de-en": False, "en-de": False, "en-zh": False, "zh-en": False},
         "nothing is loaded before the first request")
    dialects(s)
    languages(s)
    T.eq(loaded(s), {"de-en": True, "en-de": False, "en-zh": True, "zh-en": True},
         "the models requests used are loaded, the others not")
    m = s.metrics()
    T.ok(m.get('fanyi_direction_requests_total{direction="de-en-zh",status="200"}', 0) >= 1,
         "metrics count the pivot direction")
    T.ok(m.get('fanyi_model_sentences_total{direction="en-zh"}', 0) >= 1, "per-model sentences")
    sizes = {d: m[f'fanyi_model_memory_bytes{{direction="{d}"}}'] for d in ("zh-en", "en-zh")}
    T.ok(all(v > 0 for v in sizes.values()), f"model sizes measured {sizes}")
    T.ok("direction=zh-en" in s.log(), "the request log names the direction")

# ---- room for one model: the least recently used idle one goes ----
budget_mb = int(max(sizes.values()) * 1.5 / (1 << 20)) + 1
with Server(["--threads", "2", "--models-memory", str(budget_mb)], models=root) as s:
    s.post("/translate", {"text": ZH, "source": "zh", "target": "en"})
    s.post("/translate", {"text": EN, "source": "en", "target": "zh"})
    T.eq(loaded(s)["zh-en"], False, "zh-en unloaded to make room for en-zh")
    errors = []

    def alternate(k):
        for i in range(6):
            pair, text = (("zh", "en"), ZH) if (i + k) % 2 else (("en", "zh"), EN)
            st, _, b = s.post("/translate", {"text": text, "source": pair[0], "target": pair[1]})
            if st != 200 or b.get("translation") != want[pair]:
                errors.append((st, b))

    th = [threading.Thread(target=alternate, args=(k,)) for k in range(4)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    T.eq(errors, [], "alternating directions under a one-model budget: all 200, right answers")
    m = s.metrics()
    T.ok(m['fanyi_model_unloads_total{direction="zh-en"}'] +
         m['fanyi_model_unloads_total{direction="en-zh"}'] >= 1, "unloads counted")
    T.ok(m["fanyi_models_memory_bytes"] <= max(sizes.values()) * 2.01,
         "memory stays within what the budget allows while requests hold models")

# ---- concurrent first requests load once ----
with Server(["--threads", "2"], models=root) as s:
    results = []

    def first():
        results.append(s.post("/translate", {"text": EN, "source": "en", "target": "zh"})[0])

    th = [threading.Thread(target=first) for _ in range(8)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    T.eq(results, [200] * 8, "eight concurrent first requests all answered")
    T.eq(s.metrics()['fanyi_model_loads_total{direction="en-zh"}'], 1.0, "the model loaded once")

# ---- --model DIR: the direction from the file names ----
with Server(["--threads", "1"], model=os.path.join(M, "firefox-en-zh")) as s:
    T.ok("models=en-zh" in s.ready_line, f"--model reads en-zh from the file names: {s.ready_line}")
    st, _, b = s.post("/translate", {"text": EN, "target": "zh"})
    T.eq((st, b.get("translation")), (200, want[("en", "zh")]), "--model en-zh answers")
    st, _, b = s.post("/translate", {"text": [EN, ZH]})
    T.eq((st, b.get("target"), b.get("translation")), (200, ["zh", "zh"], [want[("en", "zh")], ZH]),
         "only en->zh: English goes into Chinese by default, Chinese passes through")

shutil.rmtree(root)
T.finish()
