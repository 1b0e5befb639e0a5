#!/usr/bin/env python3
"""test_auth.py - --api-token: every way each dialect sends the token, 401
without one, 403 with a wrong one, ops endpoints open; and the token from
FANYI_API_TOKEN. Without a token nothing is required (see test_api.py)."""
import os
import shutil
import subprocess
import tempfile

from fylib import BIN, MODEL, T, Server, ZH

TOKEN = "s3cret-token"


def check(s):
    want = s.post("/translate", {"text": ZH[0]}, {"Authorization": f"Bearer {TOKEN}"})
    T.eq(want[0], 200, "Bearer accepted")
    cases = [
        ("/translate", {"text": ZH[0]}, {}, ""),
        ("/translate/stream", {"text": ZH[0]}, {}, ""),
        ("/translate", {"q": ZH[0], "target": "en"}, {}, ""),
        ("/detect", {"q": ZH[0]}, {}, ""),
        ("/v2/translate", {"text": [ZH[0]], "target_lang": "EN"}, {}, ""),
        ("/deeplx", {"text": ZH[0], "target_lang": "EN"}, {}, ""),
        ("/language/translate/v2", {"q": ZH[0], "target": "en"}, {}, ""),
        ("/imme", {"text_list": [ZH[0]], "target_lang": "en"}, {}, ""),
        ("/kiss", {"text": ZH[0], "to": "en"}, {}, ""),
    ]
    for path, body, _, _ in cases:
        st, h, b = s.post(path, body)
        # DeepL answers 403 to a missing key too (deepl-node: AuthorizationError).
        T.eq(st, 403 if path == "/v2/translate" else 401, f"{path} without a token")
        T.ok(h.get("x-request-id"), f"{path} 401 has X-Request-Id")
        st, _, _ = s.post(path, body, {"Authorization": "Bearer wrong"})
        T.eq(st, 403, f"{path} with a wrong token")
        st, _, _ = s.post(path, body, {"Authorization": f"Bearer {TOKEN}"})
        T.eq(st, 200, f"{path} with the token")
    # Error shapes per dialect.
    _, _, b = s.post("/translate", {"text": "a"})
    T.eq(b["error"]["code"], "unauthorized", "native 401 shape")
    _, _, b = s.post("/translate", {"q": "a", "target": "en"})
    T.ok(isinstance(b.get("error"), str), f"libre 401 shape {b}")
    _, _, b = s.post("/v2/translate", {"text": ["a"], "target_lang": "EN"})
    T.eq(list(b), ["message"], "deepl 403 shape")
    st, _, b = s.get("/v2/usage")
    T.eq((st, list(b)), (403, ["message"]), "deepl /v2/usage needs the key")
    st, _, b = s.get("/v2/usage", {"Authorization": f"DeepL-Auth-Key {TOKEN}"})
    T.eq((st, sorted(b)), (200, ["character_count", "character_limit"]), "/v2/usage with the key")
    st, _, b = s.get(f"/language/translate/v2?q=a&target=en&key={TOKEN}")
    T.eq(st, 200, "google GET translate with ?key=")
    st, _, b = s.get("/language/translate/v2?q=a&target=en&key=nope")
    T.eq((st, b["error"]["status"]), (403, "PERMISSION_DENIED"), "google GET, wrong key")
    st, _, b = s.post("/translate", {"text": "a", "target_lang": "EN"})
    T.eq((st, b), (401, {"code": 401, "message": b.get("message")}), "deeplx 401 shape on /translate")
    _, _, b = s.post("/language/translate/v2", {"q": "a", "target": "en"})
    T.eq(b["error"]["status"], "UNAUTHENTICATED", "google 401 shape")
    _, _, b = s.post("/language/translate/v2", {"q": "a", "target": "en"},
                     {"Authorization": "Bearer x"})
    T.eq(b["error"]["status"], "PERMISSION_DENIED", "google 403 shape")
    # Every way of sending it.
    body = {"text": ZH[0]}
    for how, path, b, hdr in [
        ("X-API-Token", "/translate", body, {"X-API-Token": TOKEN}),
        ("?token=", f"/translate?token={TOKEN}", body, {}),
        ("?api_key=", f"/translate?api_key={TOKEN}", body, {}),
        ("?key= (Google)", f"/language/translate/v2?key={TOKEN}", {"q": ZH[0], "target": "en"}, {}),
        ("DeepL-Auth-Key", "/v2/translate", {"text": [ZH[0]], "target_lang": "EN"},
         {"Authorization": f"DeepL-Auth-Key {TOKEN}"}),
        ("libre api_key in JSON", "/translate", {"q": ZH[0], "target": "en", "api_key": TOKEN}, {}),
    ]:
        st, _, _ = s.post(path, b, hdr)
        T.eq(st, 200, f"token via {how}")
    st, _, _ = s.post("/translate", f"q={ZH[0]}&target=en&api_key={TOKEN}".encode(),
                      {"Content-Type": "application/x-www-form-urlencoded"})
    T.eq(st, 200, "token via libre api_key in a form")
    st, _, _ = s.post("/translate", f"q={ZH[0]}&target=en&api_key=nope".encode(),
                      {"Content-Type": "application/x-www-form-urlencoded"})
    T.eq(st, 403, "wrong api_key in a form")
    st, _, _ = s.post("/translate", {"text": ZH[0]}, {"X-API-Token": TOKEN + "x"})
    T.eq(st, 403, "token with a suffix is wrong")
    st, _, _ = s.post("/translate", {"text": ZH[0]}, {"X-API-Token": TOKEN[:-1]})
    T.eq(st, 403, "token prefix is wrong")
    st, _, _ = s.post("/translate", "{broken", {})
    T.eq(st, 401, "no credentials and a broken body: 401")
    # Ops stay open.
    for p in ["/health", "/ready", "/metrics", "/version", "/openapi.json", "/languages", "/"]:
        st, _, _ = s.get(p)
        T.eq(st, 200, f"{p} open without a token")


with Server(["--threads", "1", "--api-token", TOKEN]) as s:
    check(s)
    T.ok("visible to every local user" in s.log(), "a token on the command line is warned about")
# The token from a file (first line, line break and spaces around it ignored).
tmp = tempfile.mkdtemp()
token_file = os.path.join(tmp, "token")
with open(token_file, "w") as f:
    f.write(f"  {TOKEN}\n")
with Server(["--threads", "1", "--api-token-file", token_file]) as s:
    check(s)
    T.ok("visible to every local user" not in s.log(), "no warning for a token file")
with Server(["--threads", "1"], env={"FANYI_API_TOKEN_FILE": token_file}) as s:
    st, _, _ = s.post("/translate", {"text": ZH[0]}, {"X-API-Token": TOKEN})
    T.eq(st, 200, "FANYI_API_TOKEN_FILE token accepted")
for content, what in [("", "empty"), (None, "missing")]:
    path = os.path.join(tmp, what)
    if content is not None:
        open(path, "w").close()
    p = subprocess.run([BIN, "serve", "--port", "0", "--model", MODEL, "--api-token-file", path],
                       capture_output=True, text=True, timeout=30)
    T.ok(p.returncode == 2 and path in p.stderr, f"{what} token file: exit 2 naming it ({p.stderr!r})")
shutil.rmtree(tmp)
with Server(["--threads", "1"], env={"FANYI_API_TOKEN": TOKEN}) as s:
    st, _, _ = s.post("/translate", {"text": ZH[0]})
    T.eq(st, 401, "FANYI_API_TOKEN sets the token")
    st, _, _ = s.post("/translate", {"text": ZH[0]}, {"Authorization": f"Bearer {TOKEN}"})
    T.eq(st, 200, "FANYI_API_TOKEN token accepted")
T.finish()
