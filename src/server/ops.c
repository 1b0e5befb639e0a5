/* ops.c - operations endpoints, open even when a token is set: /health,
 * /ready, /metrics, /version, /openapi.json. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

/* Each device: its workers and whether it still works. */
static json_t *devices_json(fy_server *s, int *alive)
{
    fy_device_stats ds[FY_SCHED_DEVICES];
    int n = fy_scheduler_device_stats(s->sched, ds, FY_SCHED_DEVICES);
    json_t *list = json_array();
    *alive = 0;
    for (int i = 0; i < n && i < FY_SCHED_DEVICES; i++) {
        const fy_nn_dev *d = server_device(s, ds[i].name);
        json_t *o = json_pack("{s:s,s:s,s:i,s:I,s:I,s:f,s:I}", "name", ds[i].name, "status",
                              ds[i].failed ? "failed" : "ok", "workers", ds[i].threads, "sentences",
                              (json_int_t)ds[i].sentences, "batches", (json_int_t)ds[i].batches,
                              "busy_seconds", ds[i].busy_seconds, "memory_bytes",
                              (json_int_t)fy_nn_dev_used(d));
        if (d) json_object_set_new(o, "device", json_string(d->desc));
        json_array_append_new(list, o);
        *alive += !ds[i].failed;
    }
    return list;
}

/* Liveness, cheap enough for a probe every second: alive while a device
 * can still translate. With every one failed (a lost GPU) a restart is what
 * can help, so liveness says so; /ready has the devices' details. */
static enum MHD_Result op_health(req *r)
{
    if (fy_scheduler_devices_alive(r->srv->sched) > 0)
        return reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
    return reply_json(r, 503,
                      json_pack("{s:s,s:s}", "status", "error", "error",
                                "no compute device left: every device failed"));
}

/* The models: direction, file name and whether loaded (never a path:
 * anyone may read /ready and /version). */
static json_t *models_json(fy_server *s)
{
    json_t *list = json_array();
    for (size_t i = 0; i < fy_registry_count(s->reg); i++) {
        fy_direction_info d;
        fy_registry_info(s->reg, i, &d);
        json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:s,s:b}", "direction", d.name,
                                              "source", d.source, "target", d.target, "model",
                                              d.model, "loaded", d.loaded));
    }
    return list;
}

/* The cache tiers and whether each answers. A remote tier that is down
 * does not make the server unready: the engine translates without it. */
static json_t *cache_json(fy_server *s)
{
    fy_cache_stats t[FY_CACHE_TIERS_MAX];
    size_t n = fy_cache_tier_stats(s->cache, t, FY_CACHE_TIERS_MAX);
    json_t *list = json_array();
    for (size_t i = 0; i < n && i < FY_CACHE_TIERS_MAX; i++) {
        json_t *o = json_pack("{s:s,s:b}", "tier", t[i].tier, "up", t[i].up);
        if (t[i].remote) {
            json_object_set_new(o, "breaker_open", json_boolean(t[i].breaker_open));
            if (!t[i].up)
                json_object_set_new(o, "note", json_string("unavailable: translating without it"));
        }
        json_array_append_new(list, o);
    }
    return list;
}

/* Ready: models load on demand, so the server is ready while it is not
 * draining and the queue has room; a load balancer stops sending when it
 * is not. The cache is optional: it is reported, never a reason. */
static enum MHD_Result op_ready(req *r)
{
    fy_scheduler_stats st;
    fy_scheduler_get_stats(r->srv->sched, &st);
    int saturated = st.queue_depth * 10 >= st.queue_max * 9;
    int draining = atomic_load(&r->srv->draining);
    int alive;
    json_t *devices = devices_json(r->srv, &alive);
    const char *status = draining    ? "draining"
                         : !alive    ? "no compute device left"
                         : saturated ? "saturated"
                                     : "ready";
    size_t budget, used = fy_registry_memory(r->srv->reg, &budget);
    json_t *body = json_pack("{s:s,s:o,s:I,s:I,s:I,s:I,s:o,s:o}", "status", status, "models",
                             models_json(r->srv), "models_memory_bytes", (json_int_t)used,
                             "models_memory_budget_bytes", (json_int_t)budget, "queue_depth",
                             (json_int_t)st.queue_depth, "queue_capacity", (json_int_t)st.queue_max,
                             "cache", cache_json(r->srv), "devices", devices);
    return reply_json(r, draining || saturated || !alive ? 503 : 200, body);
}

static enum MHD_Result op_metrics(req *r)
{
    size_t len = 0;
    char *text = metrics_render(r->srv, &len);
    if (!text) return reply_error(r, 500, "out of memory");
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    return reply_queue(r, 200, resp);
}

/* Every pair a request may ask for, pivots through English included. */
static json_t *pairs_json(fy_registry *reg)
{
    char src[64][FY_LANG_MAX], tgt[64][FY_LANG_MAX];
    json_t *list = json_array();
    size_t ns = fy_registry_sources(reg, src, 64);
    for (size_t i = 0; i < ns; i++) {
        size_t nt = fy_registry_targets(reg, src[i], tgt, 64);
        for (size_t k = 0; k < nt; k++)
            json_array_append_new(
                list, json_pack("{s:s,s:s,s:b}", "source", src[i], "target", tgt[k], "pivot",
                                fy_registry_route_kind(reg, src[i], tgt[k]) == 2));
    }
    return list;
}

static enum MHD_Result op_version(req *r)
{
    fy_server *s = r->srv;
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s->sched, &st);
    /* The limits let clients (the web UI's character counter) follow the
     * server's configuration instead of guessing it. */
    json_t *body =
        json_pack("{s:s,s:o,s:i,s:o,s:I,s:I,s:b}", "version", s->version, "models", models_json(s),
                  "threads", st.threads, "languages", pairs_json(s->reg), "max_chars",
                  (json_int_t)s->o.max_chars, "max_items", (json_int_t)s->o.max_items,
                  "auth_required", s->o.api_token && *s->o.api_token);
    return reply_json(r, 200, body);
}

enum MHD_Result op_openapi(req *r)
{
    return reply_asset(r, fy_web_asset_find("/openapi.json"));
}

static enum MHD_Result op_root(req *r)
{
    return reply_asset(r, fy_web_asset_find("/"));
}

static const route ops_routes[] = {
    {"GET", "/", "ui", 0, 0, op_root, NULL},
    {"GET", "/health", "health", 0, 0, op_health, NULL},
    {"GET", "/ready", "ready", 0, 0, op_ready, NULL},
    {"GET", "/metrics", "metrics", 0, 0, op_metrics, NULL},
    {"GET", "/version", "version", 0, 0, op_version, NULL},
    {"GET", "/openapi.json", "openapi", 0, 0, op_openapi, NULL},
};

const dialect dialect_ops = {"ops",        ops_routes, sizeof ops_routes / sizeof *ops_routes,
                             native_error, NULL,       0};
