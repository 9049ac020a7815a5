/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* ELF symbol lookup shared by the recorder's modules that read a traced
 * program's files: runtime lock ranges and application markers. */
#ifndef TT_ELFSYM_H
#define TT_ELFSYM_H

#include <stdbool.h>
#include <gelf.h>

/* name's value and size from the dynamic or the full symbol table (the
 * first with a size), into *found: true when there is one. */
bool tt_elf_symbol(Elf *elf, const char *name, GElf_Sym *found);

#endif /* TT_ELFSYM_H */
