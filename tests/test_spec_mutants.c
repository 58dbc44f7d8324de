/* test_spec_mutants.c — mutants selected from a spec, the same way as from C (mutant.h):
 * `method "subgen" { mutant = "mu_norm" }` runs SubGen's mu_norm mutant (also when a sweep
 * supplies a required parameter), `stream "adv_sphere" { mutant = "clustered" }` and
 * `probe "kcenter" { mutant = "nearest" }` reach their generators, and an unknown mutant name,
 * or a number, is a spec error naming the spec's file:line, the type and its mutants. Runs the
 * kvbound binary next to this test's directory (B/tests/.. = B). */
#include "unit.h"
#include "cli_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>





/* Runs spec `name` with `text`; returns its results.csv (or NULL), the exit status in *rc, the
 * output in out and the spec's path in spec. */
static char *run_spec(const char *name, const char *text, int *rc, char *out, size_t cap,
                      char *spec, size_t spec_cap) {
  char cmd[2048], path[256];
  snprintf(spec, spec_cap, "%s/%s.lua", tmp, name);
  write_file(spec, text);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/%s --jobs 1", kvbound, spec, tmp, name);
  *rc = sh(cmd, out, cap);
  snprintf(path, sizeof path, "%s/%s/results.csv", tmp, name);
  return read_file(path);
}

/* Field idx (0-based) of a CSV line into buf. */
static void field(const char *line, int idx, char *buf, size_t cap) {
  for (int i = 0; i < idx && line; i++) {
    line = strchr(line, ',');
    if (line) line++;
  }
  size_t n = 0;
  while (line && line[n] && line[n] != ',' && line[n] != '\n' && n + 1 < cap) n++;
  memcpy(buf, line ? line : "", n);
  buf[n] = '\0';
}

static int column(const char *csv, const char *name) {
  char buf[64];
  for (int i = 0; i < 64; i++) {
    field(csv, i, buf, sizeof buf);
    if (strcmp(buf, name) == 0) return i;
    if (!buf[0]) break;
  }
  return -1;
}

/* The values of column col on the rows whose method label is `label`, in order. */
static size_t values_of(const char *csv, const char *label, int col, double *v, size_t cap) {
  int lc = column(csv, "method");
  size_t n = 0;
  for (const char *l = strchr(csv, '\n'); l && l[1] && n < cap; l = strchr(l + 1, '\n')) {
    char lab[64], val[64];
    field(l + 1, lc, lab, sizeof lab);
    if (strcmp(lab, label) != 0) continue;
    field(l + 1, col, val, sizeof val);
    v[n++] = atof(val);
  }
  return n;
}

static void method_mutant(void) {
  char out[16384], spec[256];
  int rc;
  /* t is supplied by the sweep: the whole-spec check sees "mutant" at every sweep point */
  char *a = run_spec("mu",
                     "stream \"clusterable\" { n = 120, d_key = 4, d_value = 3, m = 3, delta = 0.5 }\n"
                     "method \"subgen\" { delta = 0.5, s = 8, label = \"faithful\" }\n"
                     "method \"subgen\" { delta = 0.5, s = 8, mutant = \"mu_norm\", label = \"mu\" }\n"
                     "sweep \"t\" { 2, 4 }\n"
                     "trials(3)\n",
                     &rc, out, sizeof out, spec, sizeof spec);
  double f[16], m[16];
  int col = a ? column(a, "rel_error") : -1;
  size_t nf = a ? values_of(a, "faithful", col, f, 16) : 0,
         nm = a ? values_of(a, "mu", col, m, 16) : 0, differ = 0;
  for (size_t i = 0; i < nf && i < nm; i++) differ += f[i] != m[i];
  /* the same coins (trial substreams), so only the mutant's µ = Σ‖v‖ can make them differ */
  CHECK(rc == 0 && nf == 6 && nm == 6 && differ > 0, "spec: method \"subgen\" { mutant = \"mu_norm\" } runs the mutant",
        "rc %d, rows %zu/%zu, differing %zu: %s", rc, nf, nm, differ, out);
  free(a);
}

static void stream_and_probe_mutants(void) {
  char out[16384], spec[256];
  int rc;
  /* clustered keys take 4 values: 4 farthest-first centers cover them (radius 0); the probe's
   * nearest-first mutant does not */
  char *a = run_spec("sp",
                     "stream \"adv_sphere\" { n = 200, d_key = 3, d_value = 2, mutant = \"clustered\" }\n"
                     "probe \"kcenter\" { centers = 4, label = \"far\" }\n"
                     "probe \"kcenter\" { centers = 4, mutant = \"nearest\", label = \"near\" }\n"
                     "queries { at = { 200 } }\n",
                     &rc, out, sizeof out, spec, sizeof spec);
  double f[4], n[4];
  int col = a ? column(a, "radius") : -1;
  size_t nf = a ? values_of(a, "far", col, f, 4) : 0, nn = a ? values_of(a, "near", col, n, 4) : 0;
  CHECK(rc == 0 && nf == 1 && nn == 1 && f[0] == 0 && n[0] > 0,
        "spec: stream and probe mutants reach their generator and probe",
        "rc %d, rows %zu/%zu, radius far %g near %g: %s", rc, nf, nn, nf ? f[0] : -1,
        nn ? n[0] : -1, out);
  free(a);
}

/* The INDEX stream's decoder mutant reaches Bob through the decode measure: exact attention
 * decodes every bit of one group faithfully (003 App. C at n = d), and every bit wrongly with
 * the threshold flipped. */
static void decode_mutant(void) {
  char out[16384], spec[256];
  int rc;
  for (int flip = 0; flip < 2; flip++) {
    char text[512];
    snprintf(text, sizeof text,
             "stream \"index_reduction\" { n = 16, d_key = 16, d_value = 16, r = 2%s }\n"
             "scale \"inv_sqrt_d\"\nmethod \"exact\" {}\ntrials(2)\nmeasures { \"decode\" }\n",
             flip ? ", mutant = \"threshold_flip\"" : "");
    char *a = run_spec(flip ? "dflip" : "dfaith", text, &rc, out, sizeof out, spec, sizeof spec);
    double acc[4];
    int col = a ? column(a, "decode_acc") : -1;
    size_t na = a ? values_of(a, "exact", col, acc, 4) : 0;
    CHECK(rc == 0 && na == 2 && acc[0] == (flip ? 0.0 : 1.0) && acc[1] == acc[0],
          flip ? "spec: the index_reduction stream's threshold_flip reaches Bob's decoder"
               : "spec: exact attention decodes one INDEX group exactly",
          "rc %d, rows %zu, decode_acc %g %g: %s", rc, na, na ? acc[0] : -1, na > 1 ? acc[1] : -1,
          out);
    free(a);
  }
}

/* A spec whose declaration on line `line` has a bad mutant: exit 2, file:line, the message. */
static void bad_mutant(const char *label, const char *text, int line, const char *want) {
  char out[16384], spec[256], where[300], name[200];
  int rc;
  char *a = run_spec("bad", text, &rc, out, sizeof out, spec, sizeof spec);
  snprintf(where, sizeof where, "%s:%d: ", spec, line);
  snprintf(name, sizeof name, "spec: %s is an error naming file:line", label);
  CHECK(rc == 2 && !a && strstr(out, where) && strstr(out, want) && !strstr(out, ".c:"), name,
        "rc %d, wanted '%s' and '%s' in: %s", rc, where, want, out);
  free(a);
}

static void errors(void) {
  const char *hdr = "stream \"gaussian\" { n = 64, d_key = 4, d_value = 4 }\n";
  char t[1024];
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nmethod \"subgen\" { delta = 1, t = 2, s = 2,\n"
           "  mutant = \"mu_nrom\" }\n", hdr);
  bad_mutant("an unknown method mutant", t, 3,
             "method 'subgen' has no mutant 'mu_nrom' (its mutants: cluster_lt,");
  bad_mutant("an unknown stream mutant",
             "method \"exact\" {}\nstream \"adv_sphere\" { n = 32, mutant = \"flat\" }\n", 2,
             "stream 'adv_sphere' has no mutant 'flat' (its mutants: clustered)");
  snprintf(t, sizeof t, "%sprobe \"walk\" { mutant = \"walk_sign\" }\n", hdr);
  bad_mutant("a mutant of a probe that has none", t, 2,
             "probe 'walk' has no mutant 'walk_sign' (it has none)");
  snprintf(t, sizeof t, "%smethod \"exact\" { mutant = 1 }\n", hdr);
  bad_mutant("a numeric mutant", t, 2, "method 'exact': mutant must be a name, got the number 1");
}

int main(int argc, char **argv) {
  (void)argc;
  if (cli_harness_init(argv[0], "/tmp/kvb-mut-XXXXXX", "spec")) return 1;
  method_mutant();
  stream_and_probe_mutants();
  decode_mutant();
  errors();
  char cmd[128], out[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  sh(cmd, out, sizeof out);
  UNIT_EXIT();
}
