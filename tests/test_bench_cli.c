/* test_bench_cli.c — the kvb-bench command (tests/README.md, Benchmarks) end to end, never its speed:
 * --help, usage errors that name the flag, and one tiny run of every section whose JSON lines
 * are well formed and carry each figure with its limit; scripts/check-bench-ratios passes that
 * run's closing table (every ratio formed against the run's best limit, none beyond the spread)
 * and rejects a mutant's (--mutant ratio_worst: every ratio against the worst sample — a table
 * the spread alone cannot tell from the right one). No timed assertion. */
#include "cli_harness.h"

#ifndef KVB_BUILD_COMMIT
#define KVB_BUILD_COMMIT "unknown"
#endif

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char bench[520];

/* Every line starting with '{' ends with '}' and names its bench; returns how many. */
static int json_lines(const char *out, int *bad) {
  int n = 0;
  *bad = 0;
  for (const char *l = out; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    if (len && l[0] == '{') {
      n++;
      if (l[len - 1] != '}' || strncmp(l, "{\"bench\":\"", 10) != 0) (*bad)++;
      for (size_t i = 0; i + 3 < len; i++)
        if (!strncmp(l + i, "nan", 3) || !strncmp(l + i, "inf", 3)) (*bad)++; /* JSON has null */
    }
    l = e ? e + 1 : NULL;
  }
  return n;
}

int main(int argc, char **argv) {
  (void)argc;
  (void)read_file; /* the harness's reader is not needed here */
  if (cli_harness_init(argv[0], "/tmp/kvb-bench-XXXXXX", "bench_cli")) return 1;
  snprintf(bench, sizeof bench, "%s", kvbound);
  char *sl = strrchr(bench, '/');
  snprintf(sl ? sl + 1 : bench, sizeof bench - (size_t)(sl ? sl + 1 - bench : 0), "kvb-bench");
  static char where[256]; /* one run starts from another directory: the path made absolute */
  char cwd[200];
  if (bench[0] == '/') where[0] = 0;
  else if (getcwd(cwd, sizeof cwd)) snprintf(where, sizeof where, "%s/", cwd);
  static char out[1 << 17];
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s --help", bench);
  int rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0 && strstr(out, "--threads") && strstr(out, "--json") && strstr(out, "--dtype"),
        "bench_cli: --help lists the flags", "rc %d: %.300s", rc, out);
  static const struct {
    const char *args, *want;
  } bad[] = {{"--n 0", "--n needs an integer"},
             {"--dtype f16", "--dtype is f32, f64"},
             {"--method nosuch", "unknown --method 'nosuch'"},
             {"--threads 0", "--threads"},
             {"--bogus", "unknown option '--bogus'"},
             {"--b", "--b needs a value"},
             {"--scaling-n 10:11", "at least 3 points"},
             {"--mutant nosuch", "--mutant is ratio_worst or ratio_paired"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(cmd, sizeof cmd, "%s %s", bench, bad[i].args);
    rc = sh(cmd, out, sizeof out);
    char name[160];
    snprintf(name, sizeof name, "bench_cli: '%s' is a usage error naming it", bad[i].args);
    CHECK(rc == 2 && strstr(out, bad[i].want), name, "rc %d: %.300s", rc, out);
  }
  /* one tiny run of every section, from another directory (the commit is the build's) */
  snprintf(cmd, sizeof cmd,
           "cd / && %s%s --method balancekv_block,exact_decode,subgen,quant,z_zero,knorm --n 512 "
           "--heads 2 --d 16 --b 64 --T 1 --reps 1 --dtype f32,f64 --subgen-n 12 --exact-n 11 "
           "--scaling-n 10:12 --budget 5 --threads 2 --json", where, bench);
  rc = sh(cmd, out, sizeof out);
  int badl, n = json_lines(out, &badl);
  CHECK(rc == 0 && n >= 10 && badl == 0, "bench_cli: a tiny run of every section writes "
        "well-formed JSON lines", "rc %d, %d lines, %d bad: %.600s", rc, n, badl, out);
  CHECK(strstr(out, "\"bench\":\"limits\"") && strstr(out, "\"copy_gbps\":") &&
            strstr(out, "\"sgemm_gflops\":") && strstr(out, "\"expf_ns\":"),
        "bench_cli: the limits are measured and reported", "%.400s", out);
  CHECK(strstr(out, "\"bench\":\"balancekv_block\"") && strstr(out, "\"x_bound\":") &&
            strstr(out, "\"x_bound_paired_median\":") &&
            strstr(out, "\"lim_gram\":") && strstr(out, "\"t_walk\":"),
        "bench_cli: block BalanceKV reports its time, Gram bound and phases", "%.400s", out);
  CHECK(strstr(out, "\"bench\":\"exact_decode\",") && strstr(out, "\"dtype\":\"f64\"") &&
            strstr(out, "\"fraction_copy\":") && strstr(out, "\"fraction_copy_paired_median\":"),
        "bench_cli: exact decode reports its fraction of the copy bandwidth (best and paired)",
        "%.400s", out);
  CHECK(strstr(out, "\"bench\":\"subgen\"") && strstr(out, "\"fraction_roofline\":") &&
            strstr(out, "\"bench\":\"subgen_slope\""),
        "bench_cli: SubGen reports its roofline fraction and slope", "%.400s", out);
  CHECK(strstr(out, "\"method\":\"z_zero\"") && strstr(out, "\"method\":\"knorm\"") &&
            strstr(out, "\"bench\":\"scaling_slope\"") && !strstr(out, "\"method\":\"exact\""),
        "bench_cli: the scaling table runs the named methods only, with slopes", "%.400s", out);
  CHECK(strstr(out, "(commit " KVB_BUILD_COMMIT ")") && strstr(out, "\"commit\":\"" KVB_BUILD_COMMIT "\""),
        "bench_cli: run from / it records the commit it was built from (" KVB_BUILD_COMMIT ")",
        "%.300s", out);
  CHECK(strstr(out, "\"bench\":\"quant_decode\",") && strstr(out, "\"cache\":\"q8_0\"") &&
            strstr(out, "\"cache\":\"q4_0\"") && strstr(out, "\"cache\":\"KIVI-2\"") &&
            strstr(out, "\"cache\":\"KIVI-4\"") && strstr(out, "\"exact_bytes_per_query\":"),
        "bench_cli: the quantized caches are timed against exact with their bytes per query",
        "%.400s", out);
  /* The closing table: every time/bound ratio against the run's best limit is within the
   * limit's spread of 1 (tests/bench_stats.h; the fractions of a bandwidth are not held to it
   * here: at this tiny shape the data sit in cache and beat the memory's bandwidth). */
  int nratio = 0, nlim = 0, outside = 0;
  for (const char *l = out; (l = strstr(l, "{\"bench\":\"")); l++) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
    if (strstr(line, "\"bench\":\"limit_series\"")) nlim++;
    if (!strstr(line, "\"bench\":\"ratio\"")) continue;
    nratio++;
    if (strstr(line, "\"kind\":\"x_bound\"") && !strstr(line, "\"within_spread\":1")) outside++;
  }
  CHECK(nratio >= 4 && nlim >= 4 && outside == 0 && strstr(out, "\"ratio_run_best\":") &&
            strstr(out, "\"ratio_paired\":") && strstr(out, "\"limit_spread\":"),
        "bench_cli: the closing table gives every ratio against the run's best limit with its "
        "paired ratio and spread, and no time/bound ratio falls below 1 by more than the spread",
        "%d ratios, %d limits, %d outside: %.600s", nratio, nlim, outside, out);
  /* The same closing table through scripts/check-bench-ratios, which recomputes every ratio
   * from the printed seconds, work and rate and asks that rate to be the series' best
   * (--in-cache: at this tiny shape the fractions of a bandwidth are not held to the spread). */
  char log[128], chk[512];
  snprintf(log, sizeof log, "%s/faithful.log", tmp);
  write_file(log, out);
  snprintf(chk, sizeof chk, "sh scripts/check-bench-ratios --in-cache %s", log);
  static char res[1 << 14];
  rc = sh(chk, res, sizeof res);
  CHECK(rc == 0 && strstr(res, "0 not"), "bench_cli: scripts/check-bench-ratios passes the tiny "
        "run's closing table (every ratio against the run's best limit, within its spread)",
        "rc %d: %.600s", rc, res);
  /* The same log through scripts/bench-tables (the generated tests/BENCHMARKS.md): the machine
   * named, each limit's samples with their spread, each ratio with its paired ratio. */
  snprintf(chk, sizeof chk, "sh scripts/bench-tables %s", log);
  rc = sh(chk, res, sizeof res);
  CHECK(rc == 0 && strstr(res, "Machine: **") && strstr(res, " cores (") &&
            strstr(res, "| bench | limit | samples | best | worst | spread (best/worst) |") &&
            strstr(res, "| kvb-bench 1 | SGEMM 1024^3 |") &&
            strstr(res, "| kvb-bench 1 | balancekv_block f32 b=64 T=1, 2 thr | SGEMM 1024^3 |") &&
            strstr(res, "| cache | wall µs/query |"),
        "bench_cli: scripts/bench-tables turns the run's log into the tables (machine, limits "
        "with spread, ratios against the run's best with paired ratio, quantized caches)",
        "rc %d: %.600s", rc, res);
  /* Mutant: the closing table against the worst sample of each limit. x_worst = x_best/spread,
   * so x_worst·spread = x_best ≥ 1 passes the spread test; the check must see that the rate is
   * not the series' best. (Deterministic unless every sample of a limit agrees to 6 digits.) */
  snprintf(cmd, sizeof cmd,
           "%s --mutant ratio_worst --method balancekv_block --n 256 --heads 1 --d 16 --b 64 "
           "--T 1 --reps 1 --dtype f32 --threads 2 --json", bench);
  rc = sh(cmd, out, sizeof out);
  snprintf(log, sizeof log, "%s/mutant.log", tmp);
  write_file(log, out);
  snprintf(chk, sizeof chk, "sh scripts/check-bench-ratios --in-cache %s", log);
  int rm = sh(chk, res, sizeof res);
  CHECK(rc == 0 && strstr(out, "TEST-ONLY MUTANT ratio_worst") && rm == 1 &&
            strstr(res, "not the run's best sample"),
        "bench_cli: mutant ratio_worst (ratios against the worst limit sample) is rejected by "
        "scripts/check-bench-ratios", "bench rc %d, check rc %d: %.600s", rc, rm, res);
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  sh(cmd, res, sizeof res);
  UNIT_EXIT();
}
