/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Subcommands other than record (which lives in main.c with the BPF). */
#ifndef TT_CMDS_H
#define TT_CMDS_H

int tt_cmd_report(int argc, char **argv);
int tt_cmd_check(int argc, char **argv);

#endif /* TT_CMDS_H */
