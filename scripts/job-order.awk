# job-order.awk — scripts/run-checks' jobs ("props K", "unit PATH", "script NAME", "layers .",
# "gpu opencl", "cuda compile", "slurm .", "claims FILE"), longest recorded cost first; stable
# among equals, jobs without a record last in their listed order. Variables: tier, costs (file
# of "tier id seconds" and "job-TIER NAME SECONDS", scripts/record-check-costs), jobs (the
# number of props shards); ENVIRON["DEFER"]: the checks this tier defers (not counted).
function deferred(id,   i, nd, d) {
  nd = split(ENVIRON["DEFER"], d, " ")
  for (i = 2; i <= nd; i += 2) if (index(id, d[i]) == 1) return 1
  return 0
}
BEGIN {
  while ((getline row < costs) > 0) {
    split(row, f, /[ \t]+/)
    if (f[1] == tier && !deferred(f[2])) props += f[3]
    else if (f[1] == "job-" tier) job[f[2]] = f[3]
  }
  if (jobs < 1) jobs = 1
}
{
  name = $2
  if ($1 == "props") c = props / jobs
  else {
    if ($1 == "unit") { n = split($2, p, "/"); name = p[n] }
    else if ($1 == "layers") name = "layers"
    else if ($1 == "gpu") name = "gpucheck"
    else if ($1 == "cuda") name = "cuda-compile"
    else if ($1 == "slurm") name = "check-slurm"
    else if ($1 == "claims") name = "claims-list"
    c = (name in job) ? job[name] : -1
  }
  # key: cost descending, then the listed order
  printf "%012.2f %06d %s\n", c + 1, 999999 - NR, $0
}
