/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A Go program's functions by name from its function table (.gopclntab),
 * which every Go binary keeps, stripped ones too (-ldflags=-s, Debian's
 * packages, most release builds): the runtime's tracebacks need it. The
 * goroutine probes (docs/design.md §4.10) find the scheduler's functions
 * there when the symbol table is gone.
 */
#ifndef TT_GOFUNCS_H
#define TT_GOFUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <gelf.h>
#include <linux/types.h>

/* The entry addresses of names in the function table tab (len bytes, as
 * the file holds it: little-endian), Go 1.16 to 1.2x's layouts; text is
 * the address of the text its entries count from (Go 1.18+), 0 for the
 * table's own. Fills addrs[i] (0 where names[i] is not there). Returns how
 * many were found, or -EINVAL when tab is no table of a layout known here
 * or its header points outside it. */
int tt_go_pclntab_find(const unsigned char *tab, size_t len, __u64 text,
		       const char *const *names, size_t n, __u64 *addrs);

/* The file is a Go program: it has Go's build ID note (every Go linker
 * writes it, stripped or not, linked by Go or by the system's linker). */
bool tt_go_binary(Elf *elf);

/* The same for a Go ELF file, into file offsets (a uprobe's): 0 where a
 * name is not there or its entry lies in no executable segment. Returns
 * how many were found, or -EINVAL (no .gopclntab of a known layout). */
int tt_go_func_offsets(Elf *elf, const char *const *names, size_t n,
		       size_t *offsets);

#endif /* TT_GOFUNCS_H */
