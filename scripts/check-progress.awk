# check-progress.awk — scripts/run-checks' progress over the interleaved output of its jobs.
# Input: the jobs' lines ("[props-0] PASS id: VERDICT [1.2s]", "[test_x] PASS …") and run-one's
# "[done] NAME SECONDS" at each job's end. Every line but "[done]" goes to the summary file (and
# to stdout with its time in the full tier). A unit of progress is a property check's faithful
# line or a job that is not a props shard; the estimate scales the recorded costs of the units
# still to come by this run's speed (elapsed / recorded cost of the units done).
# Variables: tier, costs (file of "tier id seconds"; "job-TIER NAME SECONDS" for jobs), n (units),
# start (epoch seconds), quiet (1: print nothing but the full tier's lines), summary (file);
# ENVIRON: JOBS, DEFER (kvb-props' "--defer PREFIX ..." of this tier).
function deferred(id,   i, nd, d) {
  nd = split(ENVIRON["DEFER"], d, " ")
  for (i = 2; i <= nd; i += 2) if (index(id, d[i]) == 1) return 1
  return 0
}
function now(   t) { "date +%s" | getline t; close("date +%s"); return t }
function fmt(s) { return s < 90 ? sprintf("%d s", s) : sprintf("%d min %02d s", int(s / 60), s % 60) }
BEGIN {
  total = 0
  while ((getline row < costs) > 0) {
    split(row, f, /[ \t]+/)
    # a props shard's job is not a unit (its checks are): its wall time would count twice
    if (f[1] == "job-" tier && f[2] ~ /^props-/) continue
    # a check this tier defers (props/tiers.tsv) is not run: its recorded cost is not to come
    if (f[1] == tier && deferred(f[2])) continue
    if (f[1] == tier || f[1] == "job-" tier) { cost[f[1] == tier ? f[2] : "job:" f[2]] = f[3]; total += f[3] }
  }
  done_cost = 0; k = 0; last = start
}
/^\[done\] / {
  name = $2
  if (name ~ /^props-/) next
  unit("job:" name)
  next
}
{
  print >> summary
  if (tier == "full") printf("[%4ds] %s\n", now() - start, $0)
  if ($1 ~ /^\[props-/ && ($2 == "PASS" || $2 == "FAIL" || $2 == "SKIP") && $3 ~ /:$/) {
    id = $3; sub(/:$/, "", id); unit(id)
  }
}
function unit(id,   t, el, left, frac) {
  k++
  if (id in cost) done_cost += cost[id]
  if (quiet == 1) return
  t = now(); el = t - start
  if (t - last < 10 && k < n) return
  last = t
  if (total > 0) {
    # the recorded seconds still to come, run JOBS at a time; once a twentieth of them is done,
    # scaled by how this run's speed compares with the record's (a loaded or faster machine)
    jobs = ENVIRON["JOBS"] + 0; if (jobs < 1) jobs = 1
    speed = done_cost >= 0.05 * total ? el * jobs / done_cost : 1
    left = (total - done_cost) / jobs * speed; if (left < 0) left = 0
  } else left = k ? el / k * (n - k) : 0
  if (k >= n) left = 0
  printf("[%d/%d] %s elapsed, ~%s left\n", k, n, fmt(el), fmt(left))
  fflush()
}
