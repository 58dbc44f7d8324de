/* kvb_props.c — build/kvb-props, a thin main over the battery's library
 * (build/libkvbound-props.so, kvb_props_main in props/prop_main.c; plugin.h, "The battery
 * in-process"): a Python session calls the same entry point after registering its method. */
int kvb_props_main(int argc, char **argv);

int main(int argc, char **argv) { return kvb_props_main(argc, argv); }
