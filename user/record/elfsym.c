// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <string.h>
#include "elfsym.h"

bool tt_elf_symbol(Elf *elf, const char *name, GElf_Sym *found)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			const char *s;

			if (!gelf_getsym(data, i, &sym) || !sym.st_size)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*found = sym;
				return true;
			}
		}
	}
	return false;
}
