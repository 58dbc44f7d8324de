/* plot.h — `kvbound plot`: PNG and SVG plots of a results directory through gnuplot. */
#ifndef KVB_CLI_PLOT_H
#define KVB_CLI_PLOT_H

#include <stddef.h>

/* Draws every plot listed in DIR/plots.tsv from DIR/quantiles.csv into DIR/NAME.{png,svg}
 * (keeping DIR/NAME.dat and DIR/NAME.gp so a user can restyle them). */
int kvb_plot_dir(const char *dir, int verbose, char *err, size_t cap);

/* Checks a bound expression against the whitelist of what may reach gnuplot: numbers, x, pi,
 * + - * / ** ( ) , and the functions sqrt exp log log10 abs sgn sin cos tan asin acos atan
 * atan2 sinh cosh tanh floor ceil int. Anything else (system(), backquotes, strings, ';',
 * other names) is refused with the reason in why. Returns 0 when acceptable, -1 otherwise.
 * Used when a spec is loaded and again by `kvbound plot`, which may read a directory someone
 * else wrote. */
int kvb_plot_expr_check(const char *expr, char *why, size_t cap);

#endif
