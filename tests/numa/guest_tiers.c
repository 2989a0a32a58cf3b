/* `paddiser tiers` alone, static, for the QEMU guest (the full CLI links
 * libraries the initramfs does not carry). */
#include "cli/commands.h"

int main(int argc, char **argv) { return cmd_tiers(argc, argv); }
