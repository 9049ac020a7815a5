/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The commands, one file each (cmd_record.c, cmd_report.c, cmd_top.c, cmd_diff.c,
 * cmd_check.c); main.c runs them from its table. */
#ifndef TT_CMDS_H
#define TT_CMDS_H

int tt_cmd_record(int argc, char **argv);
int tt_cmd_report(int argc, char **argv);
int tt_cmd_top(int argc, char **argv);
int tt_cmd_diff(int argc, char **argv);
int tt_cmd_check(int argc, char **argv);

#endif /* TT_CMDS_H */
