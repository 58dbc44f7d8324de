/* runner_output.h — writing a run's outputs (runner_output.c): results.csv, the summaries,
 * meta.json and shard.json's identity fields. */
#ifndef KVB_CLI_RUNNER_OUTPUT_H
#define KVB_CLI_RUNNER_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "runner_rows.h"

/* meta.json's and shard.json's identity fields (version, spec name, path, real path, hash). */
void runner_json_spec(FILE *f, const kvb_experiment *e, const char *real_given);
uint64_t runner_text_hash(const char *s);
void runner_app(char *b, size_t cap, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int runner_write_csv(const kvb_experiment *e, FILE *f, const unit_result *res, size_t units);
int runner_write_outputs(const kvb_experiment *e, const char *dir, const unit_result *res,
                         size_t units, int jobs, size_t rows, size_t failed, double wall,
                         const char *real);

#endif
