/* jobs_state.c - a document job's state as the JSON text the store keeps:
 * one object, every field of fy_job_info, times in wall-clock ms. A state
 * written by another replica (or an older server) reads the same; fields
 * it lacks keep their zero values. */
#include "translate/jobs_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"

static const char *const state_names[] = {"queued", "translating", "done", "error", "canceled"};

const char *fy_job_state_name(int state)
{
    return state >= 0 && state <= FY_JOB_CANCELED ? state_names[state] : "unknown";
}

/* The string fields, by offset: one table for both directions. */
#define STR(f)                                                                                     \
    {                                                                                              \
#f, offsetof(fy_job_info, f), sizeof((fy_job_info *)0)->f                                  \
    }
static const struct {
    const char *key;
    size_t off, cap;
} strs[] = {STR(filename), STR(name),     STR(format),    STR(mime),  STR(source),
            STR(target),   STR(detected), STR(direction), STR(error), STR(notes),
            STR(client),   STR(key),      STR(glossary)};

#define U64(f)                                                                                     \
    {                                                                                              \
#f, offsetof(fy_job_info, f), sizeof((fy_job_info *)0)->f                                  \
    }
static const struct {
    const char *key;
    size_t off, size; /* size: 8 (uint64_t, int64_t) or sizeof(size_t) */
} nums[] = {U64(bytes),      U64(result_bytes), U64(chars),       U64(units),
            U64(sentences),  U64(done),         U64(pages),       U64(pages_done),
            U64(created_ms), U64(started_ms),   U64(finished_ms), U64(expires_ms)};

static json_int_t num_get(const fy_job_info *info, size_t k)
{
    const char *p = (const char *)info + nums[k].off;
    if (nums[k].size == sizeof(size_t)) return (json_int_t) * (const size_t *)p;
    return (json_int_t) * (const int64_t *)p;
}

static void num_set(fy_job_info *info, size_t k, json_int_t v)
{
    char *p = (char *)info + nums[k].off;
    if (v < 0) v = 0;
    if (nums[k].size == sizeof(size_t))
        *(size_t *)p = (size_t)v;
    else
        *(int64_t *)p = (int64_t)v;
}

char *jobs_state_encode(const fy_job_info *info)
{
    json_t *o = json_pack("{s:s,s:s,s:b,s:i,s:b,s:f,s:I}", "id", info->id, "state",
                          fy_job_state_name(info->state), "bilingual", info->bilingual, "code",
                          info->code, "watched", info->watched, "eta", info->seconds_remaining,
                          "saved_ms", (json_int_t)fy_wall_ms());
    for (size_t k = 0; o && k < sizeof strs / sizeof *strs; k++)
        json_object_set_new(o, strs[k].key, json_string((const char *)info + strs[k].off));
    for (size_t k = 0; o && k < sizeof nums / sizeof *nums; k++)
        json_object_set_new(o, nums[k].key, json_integer(num_get(info, k)));
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

int jobs_state_decode(const char *text, fy_job_info *info, fy_error *err)
{
    memset(info, 0, sizeof *info);
    json_t *o = json_loads(text, 0, NULL);
    json_t *id = json_object_get(o, "id"), *st = json_object_get(o, "state");
    if (!json_is_object(o) || !json_is_string(id) || !json_is_string(st)) {
        json_decref(o);
        return fy_err(err, FY_EFORMAT, "a document job's state is damaged");
    }
    snprintf(info->id, sizeof info->id, "%s", json_string_value(id));
    info->state = FY_JOB_ERROR;
    for (int k = 0; k <= FY_JOB_CANCELED; k++)
        if (!strcmp(json_string_value(st), state_names[k])) info->state = k;
    for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) {
        const char *v = json_string_value(json_object_get(o, strs[k].key));
        if (v) snprintf((char *)info + strs[k].off, strs[k].cap, "%s", v);
    }
    for (size_t k = 0; k < sizeof nums / sizeof *nums; k++) {
        json_t *v = json_object_get(o, nums[k].key);
        if (json_is_integer(v)) num_set(info, k, json_integer_value(v));
    }
    info->bilingual = json_is_true(json_object_get(o, "bilingual"));
    info->watched = json_is_true(json_object_get(o, "watched"));
    info->code = (int)json_integer_value(json_object_get(o, "code"));
    /* The estimate as it stands now: what was left then, less the time since. */
    json_t *eta = json_object_get(o, "eta");
    double left = json_is_number(eta) ? json_number_value(eta) : -1;
    int64_t saved = json_integer_value(json_object_get(o, "saved_ms"));
    if (left >= 0 && saved > 0) {
        left -= (double)(fy_wall_ms() - saved) / 1000.0;
        if (left < 0) left = 0;
    }
    info->seconds_remaining = info->state == FY_JOB_TRANSLATING ? left : -1;
    json_decref(o);
    return 0;
}

void jobs_note(fy_job_info *info, const char *note)
{
    size_t at = strlen(info->notes);
    if (at + strlen(note) + 2 > sizeof info->notes) return;
    snprintf(info->notes + at, sizeof info->notes - at, "%s%s", at ? "\n" : "", note);
}
