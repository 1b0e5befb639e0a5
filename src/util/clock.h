/* clock.h - the monotonic clock every module measures time with.
 *
 * Deadlines, timeouts and latencies use CLOCK_MONOTONIC (never the wall
 * clock, which can jump); pthread condition variables that wait on these
 * times must be created with pthread_condattr_setclock(CLOCK_MONOTONIC).
 */
#ifndef FY_UTIL_CLOCK_H
#define FY_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Microseconds on CLOCK_MONOTONIC. */
int64_t fy_now_us(void);

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t fy_now_ms(void);

/* Seconds on CLOCK_MONOTONIC, as a double (for measurements). */
double fy_now_s(void);

/* Milliseconds since the Unix epoch on the wall clock: only for times that
 * are stored or shown and must mean the same to another process or after a
 * restart (a document job's creation, its expiry), never for deadlines. */
int64_t fy_wall_ms(void);

/* The timespec of an absolute CLOCK_MONOTONIC time in microseconds (for
 * pthread_cond_timedwait). */
struct timespec fy_timespec_us(int64_t us);

#endif
