# imports.awk — the import graph of C files (scripts/check-layers): file A imports file B when A
# names a function that B defines with external linkage (what A's includes of B's header stand
# for at link time). Prints "CYCLE FILES: f1 -> f2 (name) -> ... -> f1 (name)" for each set of
# files that import each other in a circle (a strongly connected component of more than one
# file; the path is one circle through it, each step with a function it imports), or
# "OK N files M imports" when the graph is a DAG. Input: the .c files as arguments; comments and
# string and character literals are ignored; a definition is a function whose type starts at
# column 0 and whose body's { comes before any ; (a prototype is not one); main is no import.
function strip(s,    out, i, j, c, q) {
  out = ""
  while (length(s)) {
    i = index(s, "/*"); q = match(s, /["']/)
    if (i && (!q || i < q)) {
      out = out substr(s, 1, i - 1); s = substr(s, i + 2)
      j = index(s, "*/"); c = j ? substr(s, 1, j - 1) : s
      gsub(/[^\n]/, "", c); out = out " " c               # keep the comment's newlines
      s = j ? substr(s, j + 2) : ""
    } else if (q) {
      c = substr(s, q, 1); out = out substr(s, 1, q)
      s = substr(s, q + 1)
      while (length(s)) {                                  # to the closing quote, past escapes
        j = match(s, c == "\"" ? "[\\\\\"]" : "[\\\\']")
        if (!j) { s = ""; break }
        if (substr(s, j, 1) == "\\") { s = substr(s, j + 2); continue }
        s = substr(s, j + 1); break
      }
      out = out c
    } else { out = out s; s = "" }
  }
  return out
}
function tarjan(v,    k, w) {
  idx[v] = low[v] = ++counter; stack[++sp] = v; onst[v] = 1
  for (k = 1; k <= nadj[v]; k++) {
    w = adj[v, k]
    if (!(w in idx)) { tarjan(w); if (low[w] < low[v]) low[v] = low[w] }
    else if (onst[w] && idx[w] < low[v]) low[v] = idx[w]
  }
  if (low[v] == idx[v]) {
    ncomp++; csize[ncomp] = 0
    do { w = stack[sp--]; onst[w] = 0; comp[w] = ncomp; csize[ncomp]++ } while (w != v)
  }
}
FNR == 1 { file[++nf] = FILENAME; text[FILENAME] = "" }
{ text[FILENAME] = text[FILENAME] $0 "\n" }
END {
  kw = "^(static|typedef|extern|return|else|if|while|for|switch|do|goto|case|sizeof|struct|enum|union)$"
  for (f = 1; f <= nf; f++) {
    F = file[f]; t = strip(text[F]); body[F] = t
    n = split(t, L, "\n")
    for (i = 1; i <= n; i++) {   # a definition: a type at column 0, NAME(, then { before any ;
      if (L[i] !~ /^[A-Za-z_][A-Za-z0-9_ \t*]*[ \t*(][A-Za-z_][A-Za-z0-9_]*[ \t]*\(/) continue
      first = L[i]; sub(/[ \t*(].*/, "", first)
      if (first == "typedef" || first == "extern" || first == "return" || first == "else") continue
      head = L[i]; sub(/[ \t]*\(.*/, "", head); name = head; sub(/.*[ \t*(]/, "", name)
      if (name ~ kw) continue
      rest = ""; for (j = i; j <= n && j < i + 40; j++) rest = rest L[j] "\n"
      p = index(rest, ";"); b = index(rest, "{")
      if (!b || (p && p < b)) continue
      own[F, name] = 1
      if (first != "static" && name != "main") defs[name] = defs[name] " " F
    }
  }
  for (f = 1; f <= nf; f++) {
    F = file[f]; t = body[F]; nadj[F] = 0
    while (match(t, /[A-Za-z_][A-Za-z0-9_]*/)) {
      name = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
      if (!(name in defs) || (F, name) in own || (F, name) in seen) continue
      seen[F, name] = 1
      m = split(defs[name], D, " ")
      for (k = 1; k <= m; k++) {
        if (D[k] == F || (F, D[k]) in edge) continue
        edge[F, D[k]] = name; adj[F, ++nadj[F]] = D[k]; nedges++
      }
    }
  }
  for (f = 1; f <= nf; f++) if (!(file[f] in idx)) tarjan(file[f])
  bad = 0
  for (c = 1; c <= ncomp; c++) {
    if (csize[c] < 2) continue
    bad++
    for (f = 1; f <= nf; f++) if (comp[file[f]] == c) { v = file[f]; break }
    # one circle through the component: follow edges inside it until a file repeats
    delete onpath; line = v; onpath[v] = 1; path[1] = v; np = 1
    while (1) {
      for (k = 1; k <= nadj[v]; k++) if (comp[adj[v, k]] == c) break
      w = adj[v, k]; line = line " -> " w " (" edge[v, w] ")"
      if (w in onpath) break
      onpath[w] = 1; v = w
    }
    members = ""
    for (f = 1; f <= nf; f++) if (comp[file[f]] == c) members = members " " file[f]
    print "CYCLE" members ": " line
  }
  if (!bad) print "OK " nf " files " (nedges + 0) " imports"
}
