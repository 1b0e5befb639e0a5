"""test_redis.py - the shared Redis tier with two real `fanyi serve`
replicas and a real redis-server this test starts on a loopback port:

1. a sentence translated on replica A is a Redis hit on replica B, whose
   engine does not run it; a Redis hit is then a memory hit (the memory
   tier is in front); the stored key names the model's direction and has
   the TTL;
2. redis-server killed with SIGKILL under load: no request fails, the
   lookups are counted as errors, the breaker opens and logs one line,
   /ready stays ready and says the tier is down;
3. redis-server started again: hits resume without restarting Fanyi;
4. a "Redis" that accepts connections and never answers: every request
   still answers, well within its deadline.
"""
import threading

from fylib import Server, T, ZH, now, wait_for
from redislib import RedisServer, SilentServer

LOOKUPS = 'fanyi_cache_lookups_total{tier="%s",result="%s"}'
# One worker keeps the engine counts exact; the timeout is generous for
# sanitizer builds on a loaded machine (a loopback round trip takes ~0.1 ms;
# a lookup over it counts as an error, and an exact count of hits would miss
# one). Redis killed refuses at once: no lookup waits for it.
ARGS = ["--threads", "1", "--redis-timeout-ms", "2000"]
# 512 distinct texts, so that every request under load asks Redis.
WORDS = ["你好", "谢谢", "再见", "朋友", "学校", "火车站", "饺子", "天气"]
DISTINCT = [f"{a}，{b}，{c}。" for a in WORDS for b in WORDS for c in WORDS]


def m(server, name, default=0.0):
    return server.metrics().get(name, default)


def redis_up(server):
    return m(server, "fanyi_cache_redis_up") == 1.0


def redis_tier(server):
    st, _, body = server.get("/ready")
    tiers = {t["tier"]: t for t in body.get("cache", [])}
    return st, body.get("status"), tiers.get("redis")


def shared(a, b, text, what):
    """text translated on a is then a Redis hit on b, whose engine stays idle."""
    w0 = m(a, "fanyi_cache_redis_writes_total")
    first = a.translate(text)
    T.ok(wait_for(lambda: m(a, "fanyi_cache_redis_writes_total") > w0, 10),
         f"{what}: A stored its translation in Redis")
    b0 = b.metrics()
    again = b.translate(text)
    b1 = b.metrics()
    T.eq(again, first, f"{what}: B answers what A translated")
    T.eq(b1[LOOKUPS % ("redis", "hit")] - b0[LOOKUPS % ("redis", "hit")], 1.0,
         f"{what}: one Redis hit on B")
    T.eq(b1["fanyi_sentences_translated_total"] - b0["fanyi_sentences_translated_total"], 0.0,
         f"{what}: B's engine did not run")


def load(server, texts, stop, statuses):
    """Posts texts in turn until stop is set; records every status (or the
    exception) in statuses."""
    i = 0
    while not stop.is_set() and i < len(texts):
        try:
            st, _, _ = server.post("/translate", {"text": texts[i]}, timeout=60)
            statuses.append(st)
        except Exception as e:  # a failed request is what this test looks for
            statuses.append(repr(e))
        i += 1


def kill_under_load(r, a, b):
    e0 = m(a, LOOKUPS % ("redis", "error"))
    stop = threading.Event()
    statuses = []
    threads = [threading.Thread(target=load, args=(a, DISTINCT[k::3], stop, statuses))
               for k in range(3)]
    for t in threads:
        t.start()
    wait_for(lambda: len(statuses) >= 10, 30)
    r.kill9()
    n_at_kill = len(statuses)
    wait_for(lambda: len(statuses) >= n_at_kill + 20, 30)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    T.ok(len(statuses) >= n_at_kill + 20, f"requests went on after the kill ({len(statuses)})")
    T.eq([s for s in statuses if s != 200], [], "no request failed while Redis died")
    T.ok(m(a, LOOKUPS % ("redis", "error")) > e0, "lookups counted as errors")
    T.eq(m(a, "fanyi_cache_redis_breaker_open"), 1.0, "the breaker is open")
    T.eq(m(a, "fanyi_cache_redis_up"), 0.0, "the tier is down")
    T.ok(m(a, "fanyi_cache_redis_breaker_opened_total") >= 1, "breaker openings counted")
    T.eq(a.log().count("unavailable"), 1, "one log line for the outage")
    st, status, tier = redis_tier(a)
    T.ok(st == 200 and status == "ready", f"/ready stays ready without Redis ({st} {status})")
    T.ok(tier and tier["up"] is False and tier["breaker_open"] is True and "note" in tier,
         f"/ready says the Redis tier is down: {tier}")
    T.eq(b.translate(ZH[5]) != "", True, "B translates too while Redis is down")


def never_answers():
    with SilentServer() as s:
        args = ["--threads", "1", "--redis", f"redis://127.0.0.1:{s.port}",
                "--redis-timeout-ms", "100", "--timeout-ms", "60000"]
        with Server(args) as c:
            took = []
            results = []

            def one(text):
                t0 = now()
                results.append(c.post("/translate", {"text": text}, timeout=30)[0])
                took.append(now() - t0)

            threads = [threading.Thread(target=one, args=(ZH[k],)) for k in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            for k in range(4, 8):
                one(ZH[k])
            T.eq(results, [200] * 8, "every request answered with a silent Redis")
            # Lookups give up after 100 ms, then the breaker skips Redis: far
            # from the request deadline a lookup that waited on would reach.
            T.ok(max(took) < 30.0, f"well within the 60 s deadline (slowest {max(took):.2f} s)")
            T.ok(s.accepted >= 1, "fanyi did connect to the silent server")
            T.ok(m(c, LOOKUPS % ("redis", "error")) >= 1, "its lookups counted as errors")
            T.ok(m(c, "fanyi_cache_redis_breaker_opened_total") >= 1, "the breaker opened")
            st, status, tier = redis_tier(c)
            T.ok(st == 200 and status == "ready" and tier["up"] is False,
                 f"/ready: ready, Redis down ({st} {status} {tier})")


with RedisServer() as r:
    url = f"redis://127.0.0.1:{r.port}"
    # A: memory in front of Redis, from the flag; B: Redis alone, from the
    # environment.
    with Server(ARGS + ["--redis", url, "--redis-ttl", "3600"]) as a, \
            Server(ARGS + ["--cache-mb", "0"], env={"FANYI_REDIS": url}) as b:
        T.ok(wait_for(lambda: redis_up(a) and redis_up(b), 10), "both replicas reach Redis")
        # The line is written just after the state changes: wait for it too.
        T.ok(wait_for(lambda: "redis: connected to 127.0.0.1" in a.log(), 10),
             "the connection is logged")
        st, status, tier = redis_tier(a)
        T.ok(st == 200 and tier and tier["up"] is True, f"/ready lists the Redis tier: {tier}")
        T.eq(LOOKUPS % ("memory", "hit") in b.metrics(), False, "B has no memory tier")

        shared(a, b, ZH[0], "A then B")
        shared(b, a, ZH[1], "B then A")
        a0 = a.metrics()
        a.translate(ZH[1])
        a1 = a.metrics()
        T.eq(a1[LOOKUPS % ("memory", "hit")] - a0[LOOKUPS % ("memory", "hit")], 1.0,
             "a Redis hit is then a memory hit")
        T.eq(sum(a1[LOOKUPS % ("redis", x)] - a0[LOOKUPS % ("redis", x)]
                 for x in ("hit", "miss", "error")), 0.0, "... without asking Redis")
        direction = a.get("/version")[2]["models"][0]["direction"]
        keys = r.command("KEYS", "fanyi:3:*")
        T.ok(len(keys) >= 2 and all(k.startswith(f"fanyi:3:{direction}:".encode()) for k in keys),
             f"keys name the direction: {keys[:2]}")
        ttls = [r.command("TTL", k) for k in keys]
        T.ok(any(0 < t <= 3600 for t in ttls), f"--redis-ttl applies: {ttls}")
        T.ok(m(a, "fanyi_cache_redis_round_trip_seconds_count") >= 1, "round trips measured")

        kill_under_load(r, a, b)

        r.start()  # the same port, empty (no persistence)
        T.ok(wait_for(lambda: redis_up(a) and redis_up(b), 10),
             "both replicas reconnect by themselves")
        T.ok(wait_for(lambda: "available again" in a.log(), 10), "the recovery is logged")
        shared(a, b, ZH[2], "after the restart")

never_answers()
T.finish()
