/* prop_shard.c — see prop_shard.h. Doubles are written with %.17g (an exact round trip), so a
 * merged report has the bytes a single process writes. */
#include "prop_shard.h"
#include "read_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '\\') fputs("\\\\", f);
    else if (*s == '\n') fputs("\\n", f);
    else if (*s == '\t') fputs("\\t", f);
    else fputc(*s, f);
  }
}

int prop_rec_write(FILE *f, const prop_run_rec *r) {
  fprintf(f, "run\t%s\t%s\t%d\t%d\t%d\t%d\t%.17g\t%d\t%.17g\t%d\t%.17g\t%d\t",
          r->id, r->mutant[0] ? r->mutant : "-", (int)r->v, r->failures, r->lacks_control,
          r->applied, r->secs, r->ntests, r->alpha_sum, r->miss_kind, r->miss, r->ncells);
  for (int q = 0; q < r->ncells; q++) {
    fprintf(f, "%s%d", q ? "," : "", (int)r->cells[q] + (r->cell_detail[q] ? 100 : 0));
    if (!isnan(r->cell_flip[q])) fprintf(f, ":%.17g", r->cell_flip[q]);
    if (!isnan(r->cell_flip[q]) && !isnan(r->cell_flip_holds[q]))
      fprintf(f, "/%.17g", r->cell_flip_holds[q]);
  }
  fprintf(f, "\t%d\t", r->nctl);
  for (int q = 0; q < r->nctl; q++) {
    fprintf(f, "%s%d", q ? "," : "", r->ctl_passed[q] ? 1 : 0);
    if (!isnan(r->ctl_flip[q])) fprintf(f, ":%.17g", r->ctl_flip[q]);
  }
  fputc('\t', f);
  put_escaped(f, r->notes);
  fputc('\n', f);
  return ferror(f) ? -1 : 0;
}

/* The next tab-separated field of *p (in place), or NULL when there is none. */
static char *field(char **p) {
  if (!*p) return NULL;
  char *s = *p, *t = strchr(s, '\t');
  if (t) *t = 0, *p = t + 1;
  else *p = NULL;
  return s;
}

int prop_rec_read(FILE *f, prop_run_rec *r) {
  static char line[3 * sizeof r->notes + 8192];
  if (!fgets(line, sizeof line, f)) return 0;
  size_t len = strlen(line);
  if (len == 0 || line[len - 1] != '\n') return -1;
  line[len - 1] = 0;
  memset(r, 0, sizeof *r);
  char *p = line, *fs[17];
  for (int i = 0; i < 17; i++)
    if (!(fs[i] = field(&p))) return -1;
  if (p || strcmp(fs[0], "run") != 0) return -1;
  if (strlen(fs[1]) >= sizeof r->id || strlen(fs[2]) >= sizeof r->mutant) return -1;
  strcpy(r->id, fs[1]);
  strcpy(r->mutant, strcmp(fs[2], "-") == 0 ? "" : fs[2]);
  char *end;
  long v = strtol(fs[3], &end, 10);
  if (*end || v < 0 || v > PROP_SKIPPED) return -1;
  r->v = (prop_verdict)v;
  r->failures = (int)strtol(fs[4], &end, 10);
  if (*end) return -1;
  r->lacks_control = (int)strtol(fs[5], &end, 10);
  if (*end) return -1;
  r->applied = (int)strtol(fs[6], &end, 10);
  if (*end) return -1;
  r->secs = strtod(fs[7], &end);
  if (*end) return -1;
  r->ntests = (int)strtol(fs[8], &end, 10);
  if (*end) return -1;
  r->alpha_sum = strtod(fs[9], &end);
  if (*end) return -1;
  r->miss_kind = (int)strtol(fs[10], &end, 10);
  if (*end) return -1;
  r->miss = strtod(fs[11], &end);
  if (*end) return -1;
  r->ncells = (int)strtol(fs[12], &end, 10);
  if (*end || r->ncells < 0 || r->ncells > PROP_MAX_CELLS) return -1;
  char *c = fs[13];
  for (int q = 0; q < r->ncells; q++) {
    long cv = strtol(c, &end, 10);
    r->cell_detail[q] = cv >= 100;
    if (cv >= 100) cv -= 100;
    if (end == c || cv < 0 || cv > PROP_SKIPPED) return -1;
    r->cell_flip[q] = NAN, r->cell_flip_holds[q] = NAN;
    if (*end == ':') {
      char *e2;
      r->cell_flip[q] = strtod(end + 1, &e2);
      if (e2 == end + 1 || !(r->cell_flip[q] >= 0 && r->cell_flip[q] <= 1)) return -1;
      end = e2;
      if (*end == '/') {
        r->cell_flip_holds[q] = strtod(end + 1, &e2);
        if (e2 == end + 1 || !(r->cell_flip_holds[q] >= 0 && r->cell_flip_holds[q] <= 1)) return -1;
        end = e2;
      }
    }
    if (*end != ',' && *end != 0) return -1;
    r->cells[q] = (prop_verdict)cv;
    c = *end ? end + 1 : end;
  }
  r->nctl = (int)strtol(fs[14], &end, 10);
  if (*end || r->nctl < 0 || r->nctl > PROP_MAX_CELLS) return -1;
  c = fs[15];
  for (int q = 0; q < r->nctl; q++) {
    long cv = strtol(c, &end, 10);
    if (end == c || (cv != 0 && cv != 1)) return -1;
    r->ctl_passed[q] = (unsigned char)cv;
    r->ctl_flip[q] = NAN;
    if (*end == ':') {
      char *e2;
      r->ctl_flip[q] = strtod(end + 1, &e2);
      if (e2 == end + 1 || !(r->ctl_flip[q] >= 0 && r->ctl_flip[q] <= 1)) return -1;
      end = e2;
    }
    if (*end != ',' && *end != 0) return -1;
    c = *end ? end + 1 : end;
  }
  size_t o = 0;
  for (const char *s = fs[16]; *s; s++) {
    char ch = *s;
    if (ch == '\\') {
      s++;
      ch = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == '\\' ? '\\' : 0;
      if (!ch) return -1;
    }
    if (o + 1 >= sizeof r->notes) return -1;
    r->notes[o++] = ch;
  }
  r->notes[o] = 0;
  return 1;
}

int prop_meta_write(const char *path, const prop_shard_meta *m) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "kvb-props shard\nshard %d/%d\nseed %llu\nfull %d\nno_mutants %d\nmutant %s\n"
             "only %s\nversion %s\n",
          m->k, m->n, m->seed, m->full, m->no_mut, m->only_mutant[0] ? m->only_mutant : "-",
          m->only[0] ? m->only : "-", m->version);
  /* the method under test and the plugins' identities, one line each (the path last: it may
   * hold spaces); a shard directory written before these lines had none and reads as "no
   * method, no plugin" */
  fprintf(f, "method %s\n", m->method[0] ? m->method : "-");
  if (m->method_plugin[0]) fprintf(f, "method-plugin %s\n", m->method_plugin);
  for (const char *p = m->plugins; *p;) {
    size_t l = strcspn(p, "\n");
    fprintf(f, "plugin-id %.*s\n", (int)l, p);
    p += l + (p[l] == '\n');
  }
  int bad = ferror(f);
  return (fclose(f) || bad) ? -1 : 0;
}

static int is_sha256(const char *h) {
  if (strlen(h) != 64) return 0;
  for (; *h; h++)
    if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'))) return 0;
  return 1;
}

void prop_meta_plugin_ids(const prop_shard_meta *m, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = 0;
  for (const char *p = m->plugins; *p;) {
    size_t l = strcspn(p, "\n");
    /* "SHA256 SIZE ABI PATH": the first three fields */
    const char *q = p;
    for (int sp = 0; q < p + l && sp < 3; q++) sp += *q == ' ';
    size_t idl = (size_t)(q - p) - (q < p + l || q[-1] == ' ');
    int k = snprintf(buf + o, cap - o, "%s%.*s", o ? "\n" : "", (int)idl, p);
    if (k < 0 || (size_t)k >= cap - o) break;
    o += (size_t)k;
    p += l + (p[l] == '\n');
  }
}

int prop_meta_read(const char *path, prop_shard_meta *m, char *why, size_t cap) {
  FILE *f = NULL; /* a regular file only: a FIFO would block the merge forever (read_file.h) */
  if (kvb_open_regular(path, 1 << 20, "shard meta", &f)) {
    snprintf(why, cap, "%s: cannot read (not a kvb-props shard directory?): %s", path,
             kvb_strerror_last());
    return -1;
  }
  memset(m, 0, sizeof *m);
  int ok = fscanf(f, "kvb-props shard shard %d/%d seed %llu full %d no_mutants %d mutant %159s "
                     "only %1023s version %31s",
                  &m->k, &m->n, &m->seed, &m->full, &m->no_mut, m->only_mutant, m->only,
                  m->version) == 8;
  char line[4200];
  while (ok && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, "method ", 7) == 0 && strcmp(line + 7, "-")) {
      size_t l = strlen(line + 7);
      if (l >= sizeof m->method) ok = 0; /* longer than any --method kvb-props takes */
      else memcpy(m->method, line + 7, l + 1);
    }
    else if (strncmp(line, "method-plugin ", 14) == 0) {
      if (!is_sha256(line + 14)) ok = 0;
      else memcpy(m->method_plugin, line + 14, 65);
    } else if (strncmp(line, "plugin-id ", 10) == 0) {
      /* SHA256 SIZE ABI PATH, each checked: the line is data, never a command */
      const char *v = line + 10;
      char *end;
      if (strlen(v) < 65 || v[64] != ' ') ok = 0;
      else {
        char h[65];
        memcpy(h, v, 64), h[64] = 0;
        if (!is_sha256(h)) ok = 0;
        strtoull(v + 65, &end, 10);
        if (end == v + 65 || *end != ' ') ok = 0;
        else {
          const char *a = end + 1;
          strtoul(a, &end, 10);
          if (end == a || *end != ' ' || !end[1]) ok = 0;
        }
      }
      size_t o = strlen(m->plugins);
      if (ok && o + strlen(v) + 2 > sizeof m->plugins) ok = 0; /* too many to record: malformed */
      else if (ok) snprintf(m->plugins + o, sizeof m->plugins - o, "%s%s", o ? "\n" : "", v);
    } else if (strncmp(line, "plugin ", 7) == 0) {
      m->path_only_plugin = 1; /* kept as a fact, never loaded (prop_main.c, load_shards) */
    }
  }
  fclose(f);
  if (!ok || m->n < 1 || m->k < 0 || m->k >= m->n) {
    snprintf(why, cap, "%s: malformed shard metadata", path);
    return -1;
  }
  if (strcmp(m->only_mutant, "-") == 0) m->only_mutant[0] = 0;
  if (strcmp(m->only, "-") == 0) m->only[0] = 0;
  return 0;
}
