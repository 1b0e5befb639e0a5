/* mhd_probe.c - a bare libmicrohttpd server for bench/framing: what the
 * library itself lets through, at a given MHD_OPTION_STRICT_FOR_CLIENT.
 *
 *     mhd_probe STRICT     (prints the port, then serves until killed)
 *
 * Every request the library hands over is answered 200 with the number of
 * body bytes it delivered, after the whole body ("ok N"). Built by
 * bench/framing with `cc mhd_probe.c $(pkg-config --cflags --libs
 * libmicrohttpd)`; not part of the fanyi build.
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum MHD_Result ahc(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                           const char *version, const char *data, size_t *size, void **ctx)
{
    (void)cls, (void)url, (void)method, (void)version, (void)data;
    size_t *got = *ctx;
    if (!got) {
        *ctx = got = calloc(1, sizeof *got);
        return got ? MHD_YES : MHD_NO;
    }
    if (*size) {
        *got += *size;
        *size = 0;
        return MHD_YES;
    }
    char body[64];
    int n = snprintf(body, sizeof body, "ok %zu", *got);
    struct MHD_Response *r =
        MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **ctx,
                 enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    free(*ctx);
    *ctx = NULL;
}

int main(int argc, char **argv)
{
    int strict = argc > 1 ? atoi(argv[1]) : 0;
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, ahc, NULL,
                         MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_STRICT_FOR_CLIENT,
                         strict, MHD_OPTION_CONNECTION_TIMEOUT, 4u, MHD_OPTION_END);
    if (!d) return 1;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("%u\n", i ? i->port : 0);
    fflush(stdout);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
