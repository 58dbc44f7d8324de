/* kvb_error.c — thread-local last-error message (see kvb_error.h). */
#include "kvb_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[512];
static _Thread_local char last_where[128];
static _Thread_local unsigned long long n_recorded;

const char *kvb_status_name(int status) {
  switch (status) {
    case KVB_OK: return "KVB_OK";
    case KVB_EINVAL: return "KVB_EINVAL";
    case KVB_EDOM: return "KVB_EDOM";
    case KVB_EDIM: return "KVB_EDIM";
    case KVB_ENULL: return "KVB_ENULL";
    case KVB_ENOMEM: return "KVB_ENOMEM";
    case KVB_ENOTFOUND: return "KVB_ENOTFOUND";
    case KVB_ESTATE: return "KVB_ESTATE";
    case KVB_EFAIL: return "KVB_EFAIL";
    case KVB_EIO: return "KVB_EIO";
    case KVB_EFORMAT: return "KVB_EFORMAT";
    case KVB_ERANGE: return "KVB_ERANGE";
    default: return "KVB_E?";
  }
}

const char *kvb_strerror_last(void) { return last_message; }

const char *kvb_error_where_last(void) { return last_where; }

unsigned long long kvb_error_count(void) { return n_recorded; }

void kvb_error_clear(void) { last_message[0] = last_where[0] = '\0'; }

int kvb_error_set(int status, const char *file, int line, const char *fmt, ...) {
  n_recorded++;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  const char *base = strrchr(file, '/');
  snprintf(last_where, sizeof last_where, "%s:%d", base ? base + 1 : file, line);
  return status;
}

int kvb_error_restore(int status, const char *message, const char *where) {
  n_recorded++;
  snprintf(last_message, sizeof last_message, "%s", message ? message : "");
  snprintf(last_where, sizeof last_where, "%s", where ? where : "");
  return status;
}
