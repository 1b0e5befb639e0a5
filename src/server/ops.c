/* ops.c - operations endpoints, open even when a token is set: /health,
 * /ready, /metrics, /version, /openapi.json. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

enum MHD_Result op_health(req *r)
{
    return reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

/* Ready: the model is loaded (it is, or we would not be listening) and the
 * queue has room; a load balancer stops sending when it does not. */
enum MHD_Result op_ready(req *r)
{
    fy_scheduler_stats st;
    fy_scheduler_get_stats(r->srv->sched, &st);
    int saturated = st.queue_depth * 10 >= st.queue_max * 9;
    int draining = atomic_load(&r->srv->draining);
    const char *status = draining ? "draining" : saturated ? "saturated" : "ready";
    json_t *body =
        json_pack("{s:s,s:s,s:I,s:I}", "status", status, "model", r->srv->model_name, "queue_depth",
                  (json_int_t)st.queue_depth, "queue_capacity", (json_int_t)st.queue_max);
    return reply_json(r, draining || saturated ? 503 : 200, body);
}

enum MHD_Result op_metrics(req *r)
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

enum MHD_Result op_version(req *r)
{
    fy_server *s = r->srv;
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s->sched, &st);
    /* The limits let clients (the web UI's character counter) follow the
     * server's configuration instead of guessing it. */
    json_t *body = json_pack("{s:s,s:s,s:s,s:i,s:[{s:s,s:s}],s:I,s:I,s:b}", "version", s->version,
                             "model", s->model_name, "model_dir", s->model_dir, "threads",
                             st.threads, "languages", "source", "zh", "target", "en", "max_chars",
                             (json_int_t)s->o.max_chars, "max_items", (json_int_t)s->o.max_items,
                             "auth_required", s->o.api_token && *s->o.api_token);
    return reply_json(r, 200, body);
}

enum MHD_Result op_openapi(req *r)
{
    return reply_asset(r, fy_web_asset_find("/openapi.json"));
}

enum MHD_Result op_root(req *r)
{
    return reply_asset(r, fy_web_asset_find("/"));
}
