// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "gofuncs.h"

/* The table's first word: its layout, by the Go that wrote it */
#define GO_PCLN_116 0xfffffffaU /* Go 1.16, 1.17 */
#define GO_PCLN_118 0xfffffff0U /* Go 1.18, 1.19 */
#define GO_PCLN_120 0xfffffff1U /* Go 1.20 and later */
/* magic, two zero bytes, the instruction quantum, the pointer size */
#define GO_PCLN_PREAMBLE 8

struct pcln {
	const unsigned char *tab;
	size_t len;
	unsigned int ptr; /* the pointer size: 4 or 8 */
	unsigned int field; /* a function table field: 4 (1.18+) or ptr */
	bool from_text; /* 1.18+: entries are offsets from the text */
	__u64 text, nfunc;
	__u64 names; /* the name table */
	__u64 funcs; /* the function table, and the base of its records */
};

/* The n-byte little-endian word at off, if the table holds it */
static bool pcln_word(const struct pcln *p, __u64 off, unsigned int n, __u64 *v)
{
	__u64 w = 0;

	if (off > p->len || n > p->len - off)
		return false;
	for (unsigned int i = n; i--;)
		w = w << 8 | p->tab[off + i];
	*v = w;
	return true;
}

/* The header's i-th pointer-sized word after the preamble */
static bool pcln_header(const struct pcln *p, unsigned int i, __u64 *v)
{
	return pcln_word(p, GO_PCLN_PREAMBLE + (__u64)i * p->ptr, p->ptr, v);
}

static int pcln_open(struct pcln *p, const unsigned char *tab, size_t len,
		     __u64 text)
{
	__u64 magic, start = 0;
	unsigned int names_at; /* the header word of funcnameOffset */

	memset(p, 0, sizeof(*p));
	p->tab = tab;
	p->len = len;
	if (len < GO_PCLN_PREAMBLE || tab[4] || tab[5] ||
	    (tab[7] != 4 && tab[7] != 8))
		return -EINVAL;
	p->ptr = tab[7];
	pcln_word(p, 0, 4, &magic);
	switch (magic) {
	case GO_PCLN_116:
		names_at = 2;
		p->field = p->ptr;
		break;
	case GO_PCLN_118:
	case GO_PCLN_120:
		names_at = 3;
		p->field = 4;
		p->from_text = true;
		break;
	default:
		return -EINVAL;
	}
	/* nfunc, nfiles, [textStart,] funcname, cu, filetab, pctab, pcln */
	if (!pcln_header(p, 0, &p->nfunc) ||
	    !pcln_header(p, names_at, &p->names) ||
	    !pcln_header(p, names_at + 4, &p->funcs) ||
	    (p->from_text && !pcln_header(p, 2, &start)))
		return -EINVAL;
	/* nfunc pairs (entry, record), and the text's end */
	if (p->names >= len || p->funcs >= len ||
	    p->nfunc >= (len - p->funcs) / (2 * p->field))
		return -EINVAL;
	/* a position-independent binary's is relocated at load: 0 in the file */
	p->text = start ? start : text;
	return 0;
}

/* Function i's name (within the table) and entry address, if they are */
static const char *pcln_func(const struct pcln *p, __u64 i, __u64 *entry)
{
	__u64 rec, name;
	const char *s;

	if (!pcln_word(p, p->funcs + (2 * i + 1) * p->field, p->field, &rec) ||
	    rec > p->len - p->funcs)
		return NULL;
	/* its record: the entry, then the name's offset (32 bits) */
	rec += p->funcs;
	if (!pcln_word(p, rec, p->field, entry) ||
	    !pcln_word(p, rec + p->field, 4, &name) ||
	    name >= p->len - p->names)
		return NULL;
	s = (const char *)p->tab + p->names + name;
	if (!memchr(s, '\0', p->len - p->names - name))
		return NULL;
	if (p->from_text)
		*entry += p->text;
	return s;
}

int tt_go_pclntab_find(const unsigned char *tab, size_t len, __u64 text,
		       const char *const *names, size_t n, __u64 *addrs)
{
	struct pcln p;
	int err, found = 0;

	memset(addrs, 0, n * sizeof(*addrs));
	err = pcln_open(&p, tab, len, text);
	if (err)
		return err;
	for (__u64 i = 0; i < p.nfunc && (size_t)found < n; i++) {
		__u64 entry;
		const char *s = pcln_func(&p, i, &entry);

		for (size_t k = 0; s && k < n; k++) {
			if (addrs[k] || strcmp(s, names[k]))
				continue;
			addrs[k] = entry;
			found++;
			break;
		}
	}
	return found;
}

/* The section called name, or NULL */
static Elf_Scn *elf_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;

		if (!gelf_getshdr(scn, sh))
			continue;
		s = elf_strptr(elf, shstrndx, sh->sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

/* The bytes of the section called name, or NULL */
static Elf_Data *section_data(Elf *elf, const char *name)
{
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;

	scn = elf_section(elf, name, &sh);
	data = scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
	return data && data->d_buf ? data : NULL;
}

bool tt_go_binary(Elf *elf)
{
	GElf_Shdr sh;

	return elf_section(elf, ".note.go.buildid", &sh);
}

/* addr's offset in the file, from the executable segment that maps it */
static size_t text_offset(Elf *elf, __u64 addr)
{
	size_t nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || addr < ph.p_vaddr ||
		    addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		return addr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* The function table in the file's data, and the text's address: its own
 * section, or (an external linker's position-independent binary) at an
 * aligned place in .data.rel.ro; 0 found, or -errno. */
static int pclntab_in(Elf *elf, const char *const *names, size_t n,
		      __u64 *addrs)
{
	GElf_Shdr text_sh;
	Elf_Data *data;
	int found = -EINVAL;
	__u64 text;

	text = elf_section(elf, ".text", &text_sh) ? text_sh.sh_addr : 0;
	/* a position-independent binary's is among its relocated data */
	data = section_data(elf, ".gopclntab");
	if (!data)
		data = section_data(elf, ".data.rel.ro.gopclntab");
	if (data)
		return tt_go_pclntab_find(data->d_buf, data->d_size, text,
					  names, n, addrs);
	data = section_data(elf, ".data.rel.ro");
	for (size_t off = 0;
	     data && off + GO_PCLN_PREAMBLE <= data->d_size && found <= 0;
	     off += GO_PCLN_PREAMBLE)
		found = tt_go_pclntab_find(
			(const unsigned char *)data->d_buf + off,
			data->d_size - off, text, names, n, addrs);
	return found ? found : -EINVAL;
}

int tt_go_func_offsets(Elf *elf, const char *const *names, size_t n,
		       size_t *offsets)
{
	__u64 *addrs;
	int found;

	memset(offsets, 0, n * sizeof(*offsets));
	addrs = calloc(n ? n : 1, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	found = pclntab_in(elf, names, n, addrs);
	for (size_t i = 0; i < n && found > 0; i++) {
		if (!addrs[i])
			continue;
		offsets[i] = text_offset(elf, addrs[i]);
		found -= !offsets[i];
	}
	free(addrs);
	return found;
}
