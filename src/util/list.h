/* list.h - intrusive doubly linked lists: one set of macros for every
 * list of the program (live requests, connections, jobs, the queue).
 *
 * An element is any struct with `prev` and `next` pointers to its own type.
 * A list is a head pointer (NULL when empty), or a head and a tail pointer
 * for the lists that append. The macros evaluate their arguments more than
 * once: pass plain variables or fields.
 */
#ifndef FY_UTIL_LIST_H
#define FY_UTIL_LIST_H

#include <stddef.h>

/* Puts x first in the list at head. */
#define FY_LIST_PUSH(head, x)                                                                      \
    do {                                                                                           \
        (x)->prev = NULL;                                                                          \
        (x)->next = (head);                                                                        \
        if (head) (head)->prev = (x);                                                              \
        (head) = (x);                                                                              \
    } while (0)

/* Takes x out of the list at head. */
#define FY_LIST_UNLINK(head, x)                                                                    \
    do {                                                                                           \
        if ((x)->prev)                                                                             \
            (x)->prev->next = (x)->next;                                                           \
        else                                                                                       \
            (head) = (x)->next;                                                                    \
        if ((x)->next) (x)->next->prev = (x)->prev;                                                \
        (x)->prev = (x)->next = NULL;                                                              \
    } while (0)

/* Puts x last in the list from head to tail. */
#define FY_LIST_APPEND(head, tail, x)                                                              \
    do {                                                                                           \
        (x)->next = NULL;                                                                          \
        (x)->prev = (tail);                                                                        \
        if (tail)                                                                                  \
            (tail)->next = (x);                                                                    \
        else                                                                                       \
            (head) = (x);                                                                          \
        (tail) = (x);                                                                              \
    } while (0)

/* Takes x out of the list from head to tail. */
#define FY_LIST_UNLINK2(head, tail, x)                                                             \
    do {                                                                                           \
        if ((x)->next)                                                                             \
            (x)->next->prev = (x)->prev;                                                           \
        else                                                                                       \
            (tail) = (x)->prev;                                                                    \
        FY_LIST_UNLINK(head, x);                                                                   \
    } while (0)

#endif
