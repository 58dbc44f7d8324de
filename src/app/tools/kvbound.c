/* kvbound.c — build/kvbound, a thin main over the command line's library
 * (build/libkvbound-cli.so, kvb_cli_main in src/app/kvbound_main.c): a Python session calls the
 * same entry point after registering its method (python3 -m kvbound run --register FILE.py). */
int kvb_cli_main(int argc, char **argv);

int main(int argc, char **argv) { return kvb_cli_main(argc, argv); }
