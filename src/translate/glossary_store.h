/* glossary_store.h - the glossaries users keep on the server.
 *
 * A stored glossary is DeepL's v3 model: an id (a UUID), a name, a creation
 * time and dictionaries, each a compiled fy_glossary (text/glossary.h) for
 * one direction. Every API's glossary routes (native, DeepL v2 and v3) and
 * every translation that names a glossary_id read this one store; a
 * translation takes the dictionary of its own direction
 * (fy_glossary_store_get).
 *
 * Persistence: each glossary is one file, <dir>/<id>.glossary (a line
 * format: "fanyi glossary 1", id, name, created, then per dictionary
 * "dict SRC TGT N" and its N entries as TSV, then "end"), written to a
 * temporary file, synced and renamed over the old one, so a crash leaves
 * the old file or the new one. The directory is read when the store opens
 * (a file that does not parse is skipped, named in one log line, and left
 * where it is); it is created on the first write.
 *
 * Sharing (redis set): the glossaries of every replica are also in Redis,
 * the hash fanyi:glossary:<id> (field v: a version that changes with every
 * write, field data: the file's text; a deleted glossary keeps v and
 * "deleted"), and the set fanyi:glossaries of the live ids. Every read
 * asks Redis for the version (one round trip; the whole glossary only when
 * it changed, and it is compiled once per version), so a glossary written
 * on one replica is what every other replica uses from its next request
 * on. Writes go to Redis first and fail (FY_ENET) when it cannot be
 * reached, so the replicas never disagree; reads fall back to the copy in
 * memory. A replica that starts puts the glossaries of its directory that
 * Redis has never seen into it (a Redis without persistence loses
 * nothing), and drops its file of one Redis says was deleted.
 *
 * Limits: names of at most FY_GSTORE_NAME_MAX bytes (no control
 * characters), FY_GSTORE_DICTS_MAX dictionaries per glossary, and the
 * options' number of glossaries and bytes of terms in all (FY_ELIMIT).
 *
 * Thread-safe: any thread may call anything; a glossary returned by
 * fy_glossary_store_get stays valid (its own reference) whatever happens
 * to the store afterwards.
 */
#ifndef FY_TRANSLATE_GLOSSARY_STORE_H
#define FY_TRANSLATE_GLOSSARY_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "text/glossary.h"
#include "translate/cache_redis.h"
#include "util/error.h"
#include "util/lang.h"

#define FY_GSTORE_NAME_MAX  1024 /* bytes of a name (DeepL's) */
#define FY_GSTORE_DICTS_MAX 64   /* dictionaries (directions) of one glossary */
#define FY_GSTORE_ID_MAX    40   /* an id and its NUL */

typedef struct fy_glossary_store fy_glossary_store;

typedef struct fy_glossary_store_options {
    const char *dir;               /* where the files go; NULL: memory only */
    const fy_redis_options *redis; /* shared with the other replicas; NULL: none
                                     (host, port, auth, db and timeout_ms are used) */
    size_t max_glossaries;         /* default 1000 (DeepL's per account) */
    size_t max_bytes;              /* bytes of terms of all glossaries (default 64 MiB) */
    /* One line (no newline) about a file skipped or Redis trouble; NULL: silent. */
    void (*log)(void *user, const char *line);
    void *log_user;
} fy_glossary_store_options;

/* Fills *o with the defaults above (no directory, no Redis). */
void fy_glossary_store_options_default(fy_glossary_store_options *o);

/* Opens the store and reads o->dir (and Redis). NULL with FY_EINVAL (bad
 * options) or FY_ENOMEM; a directory that cannot be read is logged, not an
 * error (the store starts empty). */
fy_glossary_store *fy_glossary_store_open(const fy_glossary_store_options *o, fy_error *err);

/* Frees s; NULL harmless. Glossaries returned earlier stay valid. */
void fy_glossary_store_free(fy_glossary_store *s);

/* What a glossary is, without its entries. */
typedef struct fy_gstore_dict {
    char source[FY_LANG_MAX], target[FY_LANG_MAX];
    size_t entries;
} fy_gstore_dict;

typedef struct fy_glossary_meta {
    char id[FY_GSTORE_ID_MAX];
    char name[FY_GSTORE_NAME_MAX + 1];
    int64_t created_ms; /* Unix time */
    int ndicts;
    fy_gstore_dict dicts[FY_GSTORE_DICTS_MAX];
} fy_glossary_meta;

/* Creates a glossary named name with dictionaries dicts[0..n) (compiled,
 * each direction once, both languages given; referenced by the store, the
 * caller keeps its own references). *out (may be NULL) receives its
 * description. 0, or FY_EINVAL (a name that is empty, too long or holds a
 * control character; no dictionary; two for one direction; a dictionary
 * without languages), FY_ELIMIT (too many glossaries or bytes), FY_EIO (the
 * file cannot be written), FY_ENET (Redis cannot be reached), FY_ENOMEM. */
int fy_glossary_store_create(fy_glossary_store *s, const char *name, fy_glossary *const *dicts,
                             int n, fy_glossary_meta *out, fy_error *err);

/* The description of glossary id into *out. 0 or FY_ENOTFOUND. */
int fy_glossary_store_meta(fy_glossary_store *s, const char *id, fy_glossary_meta *out,
                           fy_error *err);

/* Every glossary's description, oldest first, into *list (malloc'd, *n of
 * them; NULL when none); with source and target (neither NULL nor ""),
 * those with a dictionary for that direction only. 0 or FY_ENOMEM. */
int fy_glossary_store_list(fy_glossary_store *s, const char *source, const char *target,
                           fy_glossary_meta **list, size_t *n, fy_error *err);

/* Glossary id's dictionary for source -> target: a new reference (release
 * with fy_glossary_unref), or NULL with FY_ENOTFOUND ("no glossary 'x'",
 * "glossary 'x' has no dictionary for en -> de") or FY_ENOMEM. For every
 * translation that names a glossary. */
fy_glossary *fy_glossary_store_get(fy_glossary_store *s, const char *id, const char *source,
                                   const char *target, fy_error *err);

/* Glossary id's dictionaries into target (every source), new references
 * into out[0..cap): returns how many (0: none into target), or
 * FY_ENOTFOUND ("no glossary 'x'"). For a translation whose source is
 * detected per text. */
int fy_glossary_store_get_into(fy_glossary_store *s, const char *id, const char *target,
                               fy_glossary **out, int cap, fy_error *err);

/* How fy_glossary_store_update treats the dictionaries it is given. */
enum {
    FY_GSTORE_REPLACE, /* each replaces (or adds) the dictionary of its direction */
    FY_GSTORE_MERGE,   /* each's entries are added to its direction's dictionary, replacing
                          entries of the same source term (DeepL's PATCH) */
};

/* Renames glossary id (name NULL: unchanged) and applies dicts[0..n) in
 * mode. *out (may be NULL) receives the result. Errors as
 * fy_glossary_store_create, and FY_ENOTFOUND. */
int fy_glossary_store_update(fy_glossary_store *s, const char *id, const char *name,
                             fy_glossary *const *dicts, int n, int mode, fy_glossary_meta *out,
                             fy_error *err);

/* Removes glossary id's dictionary for source -> target (the last one may
 * go: a glossary without dictionaries stays). 0, FY_ENOTFOUND, FY_EIO,
 * FY_ENET. */
int fy_glossary_store_delete_dict(fy_glossary_store *s, const char *id, const char *source,
                                  const char *target, fy_error *err);

/* Deletes glossary id. 0, FY_ENOTFOUND, FY_EIO, FY_ENET. */
int fy_glossary_store_delete(fy_glossary_store *s, const char *id, fy_error *err);

#endif
