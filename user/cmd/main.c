// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ttftrace: time-to-first-token tracer. One command per file (cmd_*.c),
 * found here in a table.
 */
#include <argp.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "version.h"

const char *argp_program_version = "ttftrace " TT_VERSION;

static const struct {
	const char *name;
	const char *argv0; /* argp names the program after it in messages */
	const char *what;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "record", "ttftrace record", "trace processes into a .ttft recording",
	  tt_cmd_record },
	{ "report", "ttftrace report", "analyse a recording", tt_cmd_report },
	{ "top", "ttftrace top", "show a server's requests live, or replay a recording",
	  tt_cmd_top },
	{ "diff", "ttftrace diff", "compare two recordings: what changed",
	  tt_cmd_diff },
	{ "check", "ttftrace check", "tell what this kernel supports",
	  tt_cmd_check },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ttftrace COMMAND [OPTION...]\n"
		"Trace an LLM inference server's requests and explain their time to first token.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].what);
	fprintf(out, "\n'ttftrace COMMAND --help' describes each.\n");
}

int main(int argc, char **argv)
{
	argp_err_exit_status = 2;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		argv[1] = (char *)commands[i].argv0;
		return commands[i].run(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", argp_program_version);
		return 0;
	}
	fprintf(stderr,
		"ttftrace: unknown command '%s' (record, report, top, diff, check)\n",
		argv[1]);
	return 2;
}
