/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* ELF symbol and USDT note lookup shared by the recorder's modules that
 * read a traced program's files: runtime lock ranges and application
 * markers. */
#ifndef TT_ELFSYM_H
#define TT_ELFSYM_H

#include <stdbool.h>
#include <gelf.h>

/* PATH for libelf: the Elf with its fd in *fd (the caller ends and closes
 * both), or NULL with one line in err (and -errno in *fd). */
Elf *tt_elf_open(const char *path, int *fd, char *err, size_t errlen);

/* name's value and size from the dynamic or the full symbol table (the
 * first with a size), into *found: true when there is one. */
bool tt_elf_symbol(Elf *elf, const char *name, GElf_Sym *found);

/* len bytes at virtual address addr, from the file's section that holds
 * them: true if they are there. */
bool tt_elf_read(Elf *elf, GElf_Addr addr, void *buf, size_t len);
/* The file has the USDT probe provider:name (a .note.stapsdt entry). */
bool tt_elf_usdt(Elf *elf, const char *provider, const char *name);

#endif /* TT_ELFSYM_H */
