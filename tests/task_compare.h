/* task_compare.h — what the task-generator tests (test_tasks.c, test_task_gemma3.c) compare: a
 * task's whole length and whether two tasks are the same tokens and answer. */
#ifndef KVB_TESTS_TASK_COMPARE_H
#define KVB_TESTS_TASK_COMPARE_H

#include <stdint.h>
#include <string.h>

#include "tasks.h"

static inline size_t total_of(const kvb_task *t) {
  return t->n_context + t->n_question + t->n_cue + t->max_new;
}

static inline int same_task(const kvb_task *a, const kvb_task *b) {
  return a->n_context == b->n_context && a->n_question == b->n_question && a->n_cue == b->n_cue &&
         !memcmp(a->context, b->context, a->n_context * sizeof(int32_t)) &&
         !memcmp(a->question, b->question, a->n_question * sizeof(int32_t)) &&
         !memcmp(a->cue, b->cue, a->n_cue * sizeof(int32_t)) && !strcmp(a->answer, b->answer);
}

#endif
