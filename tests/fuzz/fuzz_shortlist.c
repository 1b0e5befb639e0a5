/* fuzz_shortlist.c - libFuzzer harness for the binary lexical shortlist.
 *
 * Input layout: 2 bytes of parameters (target vocabulary size selector and
 * a flag byte), then the shortlist file itself (checksum fixed up when flag
 * bit 3 is set). The file goes through a memfd (fy_shortlist_open takes a
 * path); if it opens, batches of source ids
 * taken from the file bytes (in range and out of range) are selected with
 * both the allocating and the scratch variant, shared and not, with caps too
 * small and big enough, and the results checked for the documented shape.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/shortlist.h"

static int memfd = -1;
static char memfd_path[64];

static int memfd_set(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("fuzz_shortlist", 0);
        if (memfd < 0) return -1;
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) != 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(memfd, data + done, size - done, (off_t)done);
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

/* The documented result: ascending, no duplicates, every id < vocab. */
static void check_ids(const int32_t *ids, long n, int vocab)
{
    for (long i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= vocab) abort();
        if (i > 0 && ids[i] <= ids[i - 1]) abort();
    }
}

enum { MAX_SRC = 64, MAX_OUT = 1 << 16 };

static void select_batch(const fy_shortlist *s, const int32_t *src, size_t n, int vocab, int shared)
{
    static int32_t out[MAX_OUT];
    fy_error err = {0};
    long r = fy_shortlist_select(s, src, n, vocab, out, MAX_OUT, &err);
    if (r >= 0) {
        if ((size_t)r > MAX_OUT) abort();
        check_ids(out, r, vocab);
    } else if (err.msg[0] == 0) {
        abort();
    }
    size_t scratch = fy_shortlist_scratch_bytes(s, vocab);
    uint8_t *seen = malloc(scratch ? scratch : 1);
    if (!seen) return;
    memset(seen, 0xA5, scratch); /* contents must be ignored on entry */
    long r2 = fy_shortlist_select_ex(s, src, n, vocab, shared, out, MAX_OUT, seen, &err);
    if (r2 >= 0) check_ids(out, r2, vocab);
    if (!shared && (r >= 0) != (r2 >= 0)) abort(); /* the two forms agree on success */
    /* A cap of 3 is too small for any non-empty aligned result: must not overrun. */
    int32_t small[3 + 8];
    for (int i = 0; i < 11; i++) small[i] = -7;
    fy_shortlist_select_ex(s, src, n, vocab, shared, small, 3, seen, NULL);
    for (int i = 3; i < 11; i++)
        if (small[i] != -7) abort();
    free(seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    int vocab_sel = data[0], flags = data[1];
    data += 2;
    size -= 2;
    /* Flag bit 3: fix the checksum first, so that mutations of the sizes,
       offsets and ids reach the checks behind it instead of all failing as
       FY_EHASH. */
    static uint64_t fixed[(1 << 20) / 8];
    if ((flags & 8) && size >= 16 && size <= sizeof fixed) {
        memcpy(fixed, data, size);
        fixed[1] = fy_shortlist_checksum(fixed + 2, (size - 16) / 8);
        data = (const uint8_t *)fixed;
    }
    if (memfd_set(data, size) != 0) abort();
    fy_error err = {0};
    fy_shortlist *s = fy_shortlist_open(memfd_path, &err);
    if (!s) {
        if (err.code >= 0 || err.msg[0] == 0) abort();
        return 0;
    }
    int srcv = fy_shortlist_src_vocab_size(s);
    int maxt = fy_shortlist_max_target(s);
    if (srcv < 0 || maxt < 0 || fy_shortlist_frequent(s) < 0 || fy_shortlist_best(s) < 0) abort();
    /* Target vocab: around the largest listed id (too small, exact, bigger). */
    long long v = (long long)maxt + vocab_sel % 17 - 4; /* maxt may be INT32_MAX */
    int vocab = v < 1 ? 1 : v > MAX_OUT / 2 ? MAX_OUT / 2 : (int)v;

    int32_t src[MAX_SRC];
    size_t n = 0;
    for (size_t i = 0; i + 1 < size && n < MAX_SRC; i += 7) {
        int v = data[i] | data[i + 1] << 8;
        src[n++] = (flags & 4) ? v - 3 : (srcv > 0 ? v % srcv : 0);
    }
    select_batch(s, src, n, vocab, flags & 1);
    select_batch(s, src, 0, vocab, (flags >> 1) & 1);
    fy_shortlist_free(s);
    return 0;
}
