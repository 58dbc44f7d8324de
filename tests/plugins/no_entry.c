/* no_entry.c — a shared library that is not a kvbound plugin (no kvb_plugin_entry symbol):
 * loading it must be refused with a message naming the missing symbol. */
int not_a_plugin(void);
int not_a_plugin(void) { return 42; }
