/* store.c - the version store beside a model directory (layout in store.h).
 *
 * Paths from the user are resolved once, into a descriptor of DIR's parent;
 * from there on everything is opened with openat(..., O_NOFOLLOW), so a link
 * planted anywhere in the store (the store itself, a version, a staging
 * directory) makes fetch stop instead of writing where the link points.
 */
#include "model/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/sha256.h"
#include "util/clock.h"

#define LOCK_NAME "lock"
/* Where a switch keeps the link until the rename, and where a plain DIR
 * swapped out for the link lands; a fetch killed in between leaves them for
 * the next one to clear (clear_leftovers). */
#define LINK_TMP "link.tmp"
#define PREVIOUS "previous"
#define RETIRED  "retired."
#define STAGING  ".staging"

enum { RETRY = 1 }; /* a store directory vanished under us: open it again */

void fy_store_note(const fy_fetch_options *o, const char *fmt, ...)
{
    if (!o->note) return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->note(o->ctx, line);
}

int fy_store_fault(const fy_fetch_options *o, const char *stage)
{
    if (o->test_kill_at && !strcmp(o->test_kill_at, stage)) raise(SIGKILL);
    if (o->test_fail_at && !strcmp(o->test_fail_at, stage)) {
        errno = EIO;
        return 1;
    }
    return 0;
}

static char *cat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s", a, b, c);
    return p;
}

/* ---- the id -------------------------------------------------------------- */

static int safe_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '+' || c == '_' || c == '-';
}

int fy_store_id(const fy_manifest_model *model, char *id, size_t cap)
{
    fy_sha256 *h = fy_sha256_new();
    if (!h) return FY_ENOMEM;
    char line[128];
    for (size_t i = 0; i < model->nfiles; i++) {
        const fy_manifest_file *f = &model->files[i];
        fy_sha256_update(h, f->name, strlen(f->name) + 1);
        int n = snprintf(line, sizeof line, "%s %llu\n", f->sha256, (unsigned long long)f->size);
        fy_sha256_update(h, line, (size_t)n);
    }
    char hex[65];
    fy_sha256_hex(h, hex);
    fy_sha256_free(h);
    /* The version is for people reading the store; only safe characters. */
    char ver[33];
    size_t n = 0;
    for (const char *c = model->version; *c && n < sizeof ver - 1; c++)
        ver[n++] = safe_char(*c) ? *c : '_';
    ver[n] = '\0';
    snprintf(id, cap, "%s-%.12s", n && ver[0] != '.' ? ver : "v", hex);
    return 0;
}

/* ---- resolving DIR --------------------------------------------------------- */

static void strip_slashes(char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
}

static const char *last_part(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Is target (a link's text) the link fetch makes for base,
 * ".fanyi-versions/BASE/NAME" with a plain NAME? */
static int our_link(const char *target, const char *base)
{
    size_t a = sizeof FY_STORE_DIR_NAME - 1, b = strlen(base);
    if (strncmp(target, FY_STORE_DIR_NAME "/", a + 1) || strncmp(target + a + 1, base, b) ||
        target[a + 1 + b] != '/')
        return 0;
    const char *name = target + a + 2 + b;
    return name[0] && name[0] != '.' && !strchr(name, '/');
}

/* dir with the user's own links at its last component followed (fetch's
 * link is what it replaces; other links say where the model should go),
 * "." and ".." resolved. Malloc'd into *out. */
static int resolve(const char *dir, char **out, fy_error *err)
{
    char *p = strdup(dir), target[PATH_MAX];
    if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
    for (int hops = 0; hops < 40; hops++) {
        strip_slashes(p);
        const char *b = last_part(p);
        if (!*b || !strcmp(b, ".") || !strcmp(b, "..")) {
            char *r = realpath(p, NULL);
            if (!r) {
                int rc = fy_err(err, FY_EIO, "cannot resolve %s: %s", p, strerror(errno));
                free(p);
                return rc;
            }
            free(p);
            p = r; /* fully resolved: no link left */
            break;
        }
        struct stat st;
        if (lstat(p, &st) || !S_ISLNK(st.st_mode)) break; /* missing or not a link */
        ssize_t n = readlink(p, target, sizeof target - 1);
        if (n < 0) break;
        target[n] = '\0';
        if (our_link(target, b)) break;
        char *next = NULL;
        if (target[0] == '/' || b == p) {
            next = strdup(target);
        } else {
            p[b - p] = '\0'; /* p is now "PARENT/" */
            next = cat3(p, target, "");
        }
        free(p);
        if (!(p = next)) return fy_err(err, FY_ENOMEM, "out of memory");
        if (hops == 39) {
            int rc = fy_err(err, FY_EIO, "%s: too many levels of symbolic links", dir);
            free(p);
            return rc;
        }
    }
    if (!strcmp(p, "/")) {
        free(p);
        return fy_err(err, FY_EINVAL, "cannot install a model as the directory /");
    }
    /* A version is never a model directory to fetch into (a renamed link of
     * fetch's, followed, would lead there). */
    for (const char *c = p; (c = strstr(c, FY_STORE_DIR_NAME)); c++) {
        size_t n = sizeof FY_STORE_DIR_NAME - 1;
        if ((c == p || c[-1] == '/') && (c[n] == '/' || !c[n])) {
            int rc = fy_err(err, FY_EINVAL,
                            "%s is inside a version store (%s); fetch into the model directory "
                            "that links to it",
                            dir, p);
            free(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

/* mkdir -p (the model directory's parents may not exist yet). */
static int make_dirs(const char *dir, fy_error *err)
{
    char *p = strdup(dir);
    if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) && errno != EEXIST) {
            rc = fy_err(err, FY_EIO, "cannot create directory %s: %s", p, strerror(errno));
            break;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    return rc;
}

/* ---- opening and locking --------------------------------------------------- */

/* Creates (if needed) and opens the directory name in at, refusing links. */
static int open_sub(int at, const char *name, const char *path, int *fd, fy_error *err)
{
    if (mkdirat(at, name, 0755) && errno != EEXIST) {
        int e = errno;                 /* the caller looks at it (denied) */
        if (e == ENOENT) return RETRY; /* at was removed meanwhile */
        fy_err(err, FY_EIO, "cannot create directory %s: %s", path, strerror(e));
        errno = e;
        return FY_EIO;
    }
    *fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd >= 0) return 0;
    if (errno == ENOENT) return RETRY;
    if (errno == ELOOP || errno == ENOTDIR)
        return fy_err(err, FY_EIO, "%s is not a directory (a symbolic link?); refusing to use it",
                      path);
    return fy_err(err, FY_EIO, "cannot open directory %s: %s", path, strerror(errno));
}

/* Is fd still the file called name in at? A lock on a file another fetch
 * has since removed (fy_store_close) would lock nothing. */
static int still_there(int fd, int at, const char *name)
{
    struct stat a, b;
    return !fstat(fd, &a) && !fstatat(at, name, &b, AT_SYMLINK_NOFOLLOW) && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

static long holder_pid(int fd)
{
    char buf[24] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return strtol(buf, NULL, 10);
}

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Waits for the lock: polls, since flock cannot time out by itself. */
static int wait_lock(fy_store *s, double deadline, fy_error *err)
{
    int noted = 0;
    while (flock(s->lock_fd, LOCK_EX | LOCK_NB)) {
        if (errno != EWOULDBLOCK && errno != EINTR)
            return fy_err(err, FY_EIO, "cannot lock %s/" LOCK_NAME ": %s", s->vdir,
                          strerror(errno));
        long pid = holder_pid(s->lock_fd);
        char who[40] = "";
        if (pid > 0) snprintf(who, sizeof who, " (pid %ld)", pid);
        if (s->o->no_wait)
            return fy_err(err, FY_EBUSY,
                          "another fetch%s is installing into %s; wait for it to finish, or run "
                          "without --no-wait to wait for it",
                          who, s->dir);
        if (fy_now_s() >= deadline)
            return fy_err(err, FY_EBUSY,
                          "another fetch%s is still installing into %s; gave up waiting for it "
                          "(--max-time)",
                          who, s->dir);
        if (!noted++)
            fy_store_note(s->o, "waiting for another fetch%s installing into %s", who, s->dir);
        struct timespec pause = {0, 50 * 1000000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

/* Is errno one that says the store cannot be written at all? */
static int denied(int e)
{
    return e == EACCES || e == EPERM || e == EROFS;
}

static int lock_store(fy_store *s, double deadline, fy_error *err)
{
    char *lock_path = cat3(s->vdir, "/", LOCK_NAME), *root_path = NULL;
    int rc = FY_ENOMEM;
    size_t plen = strlen(s->dir) - strlen(s->base);
    if (!lock_path || !(root_path = malloc(plen + sizeof FY_STORE_DIR_NAME))) goto done;
    snprintf(root_path, plen + sizeof FY_STORE_DIR_NAME, "%.*s%s", (int)plen, s->dir,
             FY_STORE_DIR_NAME);
    for (int tries = 0; tries < 50; tries++) {
        close_fd(&s->lock_fd);
        close_fd(&s->base_fd);
        close_fd(&s->root_fd);
        rc = open_sub(s->parent_fd, FY_STORE_DIR_NAME, root_path, &s->root_fd, err);
        if (!rc) rc = open_sub(s->root_fd, s->base, s->vdir, &s->base_fd, err);
        if (rc == RETRY) continue;
        s->denied = rc && denied(errno);
        if (rc) goto done;
        s->lock_fd = openat(s->base_fd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        struct stat st;
        if (s->lock_fd < 0 && errno == ENOENT) continue;
        s->denied = s->lock_fd < 0 && denied(errno);
        if (s->lock_fd < 0 || fstat(s->lock_fd, &st) || !S_ISREG(st.st_mode)) {
            rc = fy_err(err, FY_EIO, "cannot open the lock file %s: %s", lock_path,
                        s->lock_fd < 0 ? strerror(errno) : "not a regular file");
            goto done;
        }
        if ((rc = wait_lock(s, deadline, err))) goto done;
        if (!still_there(s->root_fd, s->parent_fd, FY_STORE_DIR_NAME) ||
            !still_there(s->base_fd, s->root_fd, s->base) ||
            !still_there(s->lock_fd, s->base_fd, LOCK_NAME))
            continue;
        char pid[24];
        int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(s->lock_fd, 0) || pwrite(s->lock_fd, pid, (size_t)n, 0) != n) {
            rc = fy_err(err, FY_EIO, "cannot write %s: %s", lock_path, strerror(errno));
            goto done;
        }
        rc = 0;
        goto done;
    }
    rc = fy_err(err, FY_EIO, "cannot lock %s: the store keeps being removed", lock_path);
done:
    if (rc == FY_ENOMEM) fy_err(err, rc, "out of memory");
    free(lock_path);
    free(root_path);
    return rc;
}

/* What PARENT/BASE is now (under the lock, so no fetch changes it). */
static int find_active(fy_store *s, fy_error *err)
{
    struct stat st;
    if (fstatat(s->parent_fd, s->base, &st, AT_SYMLINK_NOFOLLOW)) {
        if (errno == ENOENT) return 0;
        return fy_err(err, FY_EIO, "cannot stat %s: %s", s->dir, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        s->kind = FY_STORE_PLAIN;
        s->active_fd =
            openat(s->parent_fd, s->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->active_fd < 0)
            return fy_err(err, FY_EIO, "cannot open directory %s: %s", s->dir, strerror(errno));
        return 0;
    }
    char target[PATH_MAX];
    ssize_t n =
        S_ISLNK(st.st_mode) ? readlinkat(s->parent_fd, s->base, target, sizeof target - 1) : -1;
    if (n < 0) return fy_err(err, FY_EIO, "%s exists and is not a directory", s->dir);
    target[n] = '\0';
    if (!our_link(target, s->base))
        return fy_err(err, FY_EIO, "%s changed while fetch was starting (now a link to %s)", s->dir,
                      target);
    s->kind = FY_STORE_LINK;
    if (!(s->active = strdup(last_part(target)))) return fy_err(err, FY_ENOMEM, "out of memory");
    s->active_fd = openat(s->base_fd, s->active, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s->active_fd < 0 && errno != ENOENT) /* ENOENT: a dangling link, nothing installed */
        return fy_err(err, FY_EIO,
                      "%s/%s is not a directory (a symbolic link?); refusing to use it", s->vdir,
                      s->active);
    return 0;
}

/* ---- retiring old versions ------------------------------------------------- */

static int matches(const char *name, const char *prefix, const char *suffix)
{
    size_t n = strlen(name), p = strlen(prefix), s = strlen(suffix);
    return n > p + s && !strncmp(name, prefix, p) && !strcmp(name + n - s, suffix);
}

/* Is name one of the files a model directory is made of (the patterns of
 * discover.h, the manifest's names) or a hidden file (partial downloads)? */
static int model_file(const char *name, const fy_manifest_model *m)
{
    if (name[0] == '.' || matches(name, "model.", ".bin") || matches(name, "lex.", ".s2t.bin") ||
        matches(name, "vocab.", ".spm") || matches(name, "srcvocab.", ".spm") ||
        matches(name, "trgvocab.", ".spm"))
        return 1;
    for (size_t i = 0; i < m->nfiles; i++)
        if (!strcmp(name, m->files[i].name)) return 1;
    return 0;
}

/* Moves base_fd/name to a free retired.N; returns 0 and its name in to. */
static int move_retired(fy_store *s, const char *name, char *to, size_t cap)
{
    struct stat st;
    for (int n = 1; n < 10000; n++) {
        snprintf(to, cap, RETIRED "%d", n);
        if (!fstatat(s->base_fd, to, &st, AT_SYMLINK_NOFOLLOW)) continue;
        return renameat(s->base_fd, name, s->base_fd, to);
    }
    return -1;
}

/* Removes the directory base_fd/name that no longer holds the installed
 * model: its model files (everything, for a staging directory, whose files
 * are all fetch's), then the directory. Whatever else someone put there is
 * not deleted: the directory moves to retired.N, with a note. Links inside
 * are removed, never followed. */
static void retire(fy_store *s, const char *name, int everything)
{
    int fd = openat(s->base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR) unlinkat(s->base_fd, name, 0);
        return;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    int kept = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || S_ISDIR(st.st_mode) ||
            !(everything || model_file(e->d_name, s->model)) || unlinkat(fd, e->d_name, 0))
            kept++;
    }
    closedir(d);
    if (!kept && !unlinkat(s->base_fd, name, AT_REMOVEDIR)) return;
    char to[32];
    if (everything || !strncmp(name, RETIRED, sizeof RETIRED - 1)) return;
    if (!move_retired(s, name, to, sizeof to))
        fy_store_note(s->o, "kept the other files of a replaced %s in %s/%s", s->dir, s->vdir, to);
}

/* A fetch killed between creating the switch's link and the rename, or
 * between swapping out a plain DIR and retiring it, left these. */
static void clear_leftovers(fy_store *s)
{
    const char *names[] = {LINK_TMP, PREVIOUS};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (fstatat(s->base_fd, names[i], &st, AT_SYMLINK_NOFOLLOW)) continue;
        if (S_ISDIR(st.st_mode))
            retire(s, names[i], 0);
        else
            unlinkat(s->base_fd, names[i], 0);
    }
}

int fy_store_open(fy_store *s, const char *dir, const fy_manifest_model *model,
                  const fy_fetch_options *o, double deadline, fy_error *err)
{
    memset(s, 0, sizeof *s);
    s->parent_fd = s->root_fd = s->base_fd = s->lock_fd = s->active_fd = -1;
    s->o = o;
    s->model = model;
    int rc = resolve(dir, &s->dir, err);
    if (rc) return rc;
    const char *b = last_part(s->dir);
    size_t plen = (size_t)(b - s->dir); /* "PARENT/" as the user wrote it */
    char *parent = plen == 0 ? strdup(".") : plen == 1 ? strdup("/") : strndup(s->dir, plen - 1);
    s->base = strdup(b);
    size_t n = plen + sizeof FY_STORE_DIR_NAME + strlen(b) + 1;
    if ((s->vdir = malloc(n)))
        snprintf(s->vdir, n, "%.*s%s/%s", (int)plen, s->dir, FY_STORE_DIR_NAME, b);
    if (!parent || !s->base || !s->vdir) {
        free(parent);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    rc = make_dirs(parent, err);
    if (!rc && (s->parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = fy_err(err, FY_EIO, "cannot create directory %s: %s: %s", s->dir, parent,
                    strerror(errno));
    free(parent);
    if (rc) return rc;
    struct stat ps, st;
    fy_error e = {0};
    int mount_point = 0;
    if (!fstat(s->parent_fd, &ps) && !fstatat(s->parent_fd, s->base, &st, AT_SYMLINK_NOFOLLOW)) {
        if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
            return fy_err(err, FY_EIO, "%s exists and is not a directory", s->dir);
        /* The switch renames within the parent: a mount point cannot be replaced. */
        mount_point = S_ISDIR(st.st_mode) && st.st_dev != ps.st_dev;
    }
    if (mount_point)
        rc = fy_err(&e, FY_EIO,
                    "%s is a mount point: fetch installs a model by replacing the model directory "
                    "in one rename, which needs it on its parent's file system; mount the "
                    "directory above it instead",
                    s->dir);
    else
        rc = lock_store(s, deadline, &e);
    if (rc && (mount_point || s->denied)) {
        /* Nothing may change here (a mount point, a read-only models root, or
         * someone else's), but the installed model can still be checked
         * ("already installed"); any change fails with this message. */
        snprintf(s->why, sizeof s->why, "%s", e.msg);
        s->read_only = 1;
        s->active_fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return 0;
    }
    if (rc) return fy_err(err, rc, "%s", e.msg);
    if ((rc = find_active(s, err))) return rc;
    clear_leftovers(s);
    return 0;
}

/* ---- staging, versions, the switch ----------------------------------------- */

int fy_store_staging(fy_store *s, const char *id, int create, int *fd, fy_error *err)
{
    char name[128];
    snprintf(name, sizeof name, "%s" STAGING, id);
    *fd = -1;
    if (create && mkdirat(s->base_fd, name, 0755) && errno != EEXIST)
        return fy_err(err, FY_EIO, "cannot create directory %s/%s: %s", s->vdir, name,
                      strerror(errno));
    *fd = openat(s->base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd >= 0 || (errno == ENOENT && !create)) return 0;
    if (errno == ELOOP || errno == ENOTDIR)
        return fy_err(err, FY_EIO,
                      "%s/%s is not a directory (a symbolic link?); refusing to use it", s->vdir,
                      name);
    return fy_err(err, FY_EIO, "cannot open directory %s/%s: %s", s->vdir, name, strerror(errno));
}

void fy_store_drop_staging(fy_store *s, const char *id)
{
    char name[128];
    snprintf(name, sizeof name, "%s" STAGING, id);
    unlinkat(s->base_fd, name, AT_REMOVEDIR); /* fails, as it should, when it holds data */
}

/* N when name is "id.N", else 0. */
static long generation(const char *name, const char *id)
{
    size_t n = strlen(id);
    if (strncmp(name, id, n) || name[n] != '.' || !name[n + 1]) return 0;
    char *end;
    long g = strtol(name + n + 1, &end, 10);
    return *end || g <= 0 || name[n + 1] < '1' || name[n + 1] > '9' ? 0 : g;
}

/* The highest N of the versions id.N other than the active one (0: none),
 * and the highest N of all. */
static void generations(fy_store *s, const char *id, long *newest_other, long *newest)
{
    *newest_other = *newest = 0;
    int fd = openat(s->base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        long g = generation(e->d_name, id);
        if (g > *newest) *newest = g;
        if (g > *newest_other && !(s->active && !strcmp(s->active, e->d_name))) *newest_other = g;
    }
    closedir(d);
}

char *fy_store_candidate(fy_store *s, const char *id, int *fd)
{
    long other, newest;
    *fd = -1;
    generations(s, id, &other, &newest);
    if (!other) return NULL;
    char name[160];
    snprintf(name, sizeof name, "%s.%ld", id, other);
    *fd = openat(s->base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    char *copy = *fd >= 0 ? strdup(name) : NULL;
    if (!copy) close_fd(fd);
    return copy;
}

int fy_store_commit(fy_store *s, const char *id, char **version, fy_error *err)
{
    long other, newest;
    generations(s, id, &other, &newest);
    char from[160], to[160];
    snprintf(from, sizeof from, "%s" STAGING, id);
    snprintf(to, sizeof to, "%s.%ld", id, newest + 1);
    if (fy_store_fault(s->o, "commit") || renameat(s->base_fd, from, s->base_fd, to))
        return fy_err(err, FY_EIO, "cannot rename %s/%s to %s: %s", s->vdir, from, to,
                      strerror(errno));
    if (fsync(s->base_fd))
        return fy_err(err, FY_EIO, "cannot fsync directory %s: %s", s->vdir, strerror(errno));
    fy_store_fault(s->o, "committed");
    if (!(*version = strdup(to))) return fy_err(err, FY_ENOMEM, "out of memory");
    return 0;
}

/* Replaces a plain DIR with the link LINK_TMP: one exchange, or where the
 * file system has none (EINVAL), two renames with a moment without DIR in
 * between (never a mix of versions). The old directory ends up in the store. */
static int swap_plain(fy_store *s, const char **old)
{
    *old = LINK_TMP;
    if (!renameat2(s->base_fd, LINK_TMP, s->parent_fd, s->base, RENAME_EXCHANGE)) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    *old = PREVIOUS;
    if (renameat(s->parent_fd, s->base, s->base_fd, PREVIOUS)) return -1;
    if (!renameat(s->base_fd, LINK_TMP, s->parent_fd, s->base)) return 0;
    int e = errno;
    renameat(s->base_fd, PREVIOUS, s->parent_fd, s->base); /* put the old one back */
    errno = e;
    return -1;
}

int fy_store_switch(fy_store *s, const char *version, fy_error *err)
{
    size_t n = sizeof FY_STORE_DIR_NAME + strlen(s->base) + strlen(version) + 2;
    char *target = malloc(n);
    if (!target) return fy_err(err, FY_ENOMEM, "out of memory");
    snprintf(target, n, "%s/%s/%s", FY_STORE_DIR_NAME, s->base, version);
    unlinkat(s->base_fd, LINK_TMP, 0);
    int rc = 0;
    const char *old = NULL;
    if (symlinkat(target, s->base_fd, LINK_TMP)) {
        rc = fy_err(err, FY_EIO, "cannot create a symbolic link in %s: %s", s->vdir,
                    strerror(errno));
    } else if (fy_store_fault(s->o, "switch") ||
               (s->kind == FY_STORE_PLAIN
                    ? swap_plain(s, &old)
                    : renameat(s->base_fd, LINK_TMP, s->parent_fd, s->base))) {
        rc = fy_err(err, FY_EIO, "cannot switch %s to %s/%s: %s", s->dir, s->vdir, version,
                    strerror(errno));
        unlinkat(s->base_fd, LINK_TMP, 0); /* still the new link: nothing was swapped */
    } else if (fsync(s->parent_fd)) {
        rc = fy_err(err, FY_EIO, "cannot fsync the directory holding %s: %s", s->dir,
                    strerror(errno));
    }
    free(target);
    if (rc) return rc;
    fy_store_fault(s->o, "switched");
    if (old) retire(s, old, 0);
    char *v = strdup(version);
    if (!v) return fy_err(err, FY_ENOMEM, "out of memory");
    free(s->active);
    s->active = v;
    s->kind = FY_STORE_LINK;
    return 0;
}

void fy_store_cleanup(fy_store *s)
{
    int fd = openat(s->base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    /* Collect first: retire renames and removes entries of this directory. */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *x = e->d_name;
        if (!strcmp(x, ".") || !strcmp(x, "..") || !strcmp(x, LOCK_NAME) ||
            !strncmp(x, RETIRED, sizeof RETIRED - 1) || (s->active && !strcmp(x, s->active)))
            continue;
        if (n == cap) {
            char **g = realloc(names, (cap = cap ? 2 * cap : 8) * sizeof *g);
            if (!g) break;
            names = g;
        }
        if (!(names[n] = strdup(x))) break;
        n++;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        retire(s, names[i], matches(names[i], "", STAGING));
        free(names[i]);
    }
    free(names);
}

/* Does the store hold anything but its lock? */
static int holds_more_than_lock(fy_store *s)
{
    int fd = openat(s->base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return 1;
    }
    int more = 0;
    struct dirent *e;
    while (!more && (e = readdir(d)))
        more = strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, LOCK_NAME);
    closedir(d);
    return more;
}

void fy_store_close(fy_store *s)
{
    if (!s) return;
    /* Removed while still locked; a fetch waiting on this lock notices
     * (still_there) and opens the store again. */
    if (s->lock_fd >= 0 && !holds_more_than_lock(s)) {
        unlinkat(s->base_fd, LOCK_NAME, 0);
        unlinkat(s->root_fd, s->base, AT_REMOVEDIR);
        unlinkat(s->parent_fd, FY_STORE_DIR_NAME, AT_REMOVEDIR); /* fails while others use it */
    }
    close_fd(&s->active_fd);
    close_fd(&s->lock_fd);
    close_fd(&s->base_fd);
    close_fd(&s->root_fd);
    close_fd(&s->parent_fd);
    free(s->dir);
    free(s->vdir);
    free(s->base);
    free(s->active);
    memset(s, 0, sizeof *s);
    s->parent_fd = s->root_fd = s->base_fd = s->lock_fd = s->active_fd = -1;
}
