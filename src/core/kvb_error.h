/* kvb_error.h — status codes and error messages of libkvbound.
 *
 * Every library function that can fail returns a kvb_status and, on failure,
 * records a message for the user, retrievable by kvb_strerror_last(), and —
 * separately, for a developer — the source file and line that raised it
 * (kvb_error_where_last()). The library never aborts, exits or prints; on error
 * the object it was called on is left exactly as it was (src/README.md, Library).
 * The message buffer is thread-local so parallel trials do not clobber each
 * other's diagnostics. */
#ifndef KVB_ERROR_H
#define KVB_ERROR_H

typedef enum {
  KVB_OK = 0,        /* success */
  KVB_EINVAL = 1,    /* a parameter is out of range or meaningless (delta <= 0, s = 0, ...) */
  KVB_EDOM = 2,      /* an input value is not finite (NaN or Inf) */
  KVB_EDIM = 3,      /* dimension mismatch between arguments */
  KVB_ENULL = 4,     /* a required pointer argument is NULL */
  KVB_ENOMEM = 5,    /* memory allocation failed */
  KVB_ENOTFOUND = 6, /* a name (method, parameter, stream, claim) is unknown */
  KVB_ESTATE = 7,    /* the call is not valid in the object's current state (query before update) */
  KVB_EFAIL = 8,     /* a randomized algorithm reported FAIL (e.g. 003 Alg. 3 walk) */
  KVB_EIO = 9,       /* file could not be read or written */
  KVB_EFORMAT = 10,  /* malformed file or spec */
  KVB_ERANGE = 11    /* finite inputs whose result is outside double range (a score > 1.8e308) */
} kvb_status;

/* Human-readable name of a status code ("KVB_EINVAL"). */
const char *kvb_status_name(int status);

/* The message recorded by the last failing call in this thread ("" if none): what went wrong,
 * in the user's terms, without the status name or a source position. */
const char *kvb_strerror_last(void);
/* Where in libkvbound's source that message was raised ("params.c:116"; "" if none). */
const char *kvb_error_where_last(void);

/* How many messages this thread has recorded so far (kvb_error_set, kvb_error_restore): a
 * wrapper compares it before and after a callback to tell a failure that said why from one that
 * left the previous message standing (method.c). */
unsigned long long kvb_error_count(void);

/* Clears the thread's last message. */
void kvb_error_clear(void);

/* Records a formatted message for `status` and returns `status`. Use via KVB_ERROR. */
int kvb_error_set(int status, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Sets this thread's message and position verbatim (to carry a worker thread's error to the
 * thread that called into the library). Returns `status`. */
int kvb_error_restore(int status, const char *message, const char *where);

#define KVB_ERROR(status, ...) kvb_error_set((status), __FILE__, __LINE__, __VA_ARGS__)

#endif
