// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "elfsym.h"

Elf *tt_elf_open(const char *path, int *fd, char *err, size_t errlen)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		*fd = -EINVAL;
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0) {
		*fd = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-*fd));
		return NULL;
	}
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf) {
		close(*fd);
		*fd = -ENOEXEC;
		snprintf(err, errlen, "%s: %s", path, elf_errmsg(-1));
	}
	return elf;
}

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

bool tt_elf_read(Elf *elf, GElf_Addr addr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    addr < sh.sh_addr || addr + len > sh.sh_addr + sh.sh_size)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf ||
		    addr - sh.sh_addr + len > data->d_size)
			return false;
		memcpy(buf, (const char *)data->d_buf + (addr - sh.sh_addr),
		       len);
		return true;
	}
	return false;
}

/* A stapsdt note's descriptor: three addresses (the probe, the base of
 * .stapsdt.base, the semaphore), then provider, name and arguments. */
#define STAPSDT_ADDRS (3 * sizeof(Elf64_Addr))
#define NT_STAPSDT 3

bool tt_elf_usdt(Elf *elf, const char *provider, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off,
						   &desc_off))) {
			const char *desc = (const char *)data->d_buf + desc_off;
			size_t plen;

			if (nh.n_type != NT_STAPSDT ||
			    nh.n_namesz != sizeof("stapsdt") ||
			    memcmp((const char *)data->d_buf + name_off,
				   "stapsdt", nh.n_namesz) ||
			    nh.n_descsz <= STAPSDT_ADDRS)
				continue;
			desc += STAPSDT_ADDRS;
			plen = strnlen(desc, nh.n_descsz - STAPSDT_ADDRS);
			if (plen + 1 >= nh.n_descsz - STAPSDT_ADDRS)
				continue;
			if (!strcmp(desc, provider) &&
			    !strncmp(desc + plen + 1, name,
				     nh.n_descsz - STAPSDT_ADDRS - plen - 1) &&
			    strlen(name) <
				    nh.n_descsz - STAPSDT_ADDRS - plen - 1)
				return true;
		}
	}
	return false;
}
