/* elfcheck.c - what an untrusted object file defines, checked before linking */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/elfcheck.h"
#include "core/util.h"

static const char *const banned_sections[] = {".init_array", ".fini_array", ".preinit_array",
                                              ".ctors", ".dtors", ".init", ".fini", NULL};

/* within the file of `size` bytes */
#define IN_FILE(off, n) ((off) <= size && (n) <= size - (off))

static int banned_section(const char *name)
{
    for (int i = 0; banned_sections[i]; i++) {
        size_t n = strlen(banned_sections[i]);
        if (strncmp(name, banned_sections[i], n) == 0 && (name[n] == '\0' || name[n] == '.'))
            return 1;
    }
    return 0;
}

static int listed(const char *name, const char *const *list, int prefix)
{
    for (int i = 0; list && list[i]; i++)
        if (prefix ? strncmp(name, list[i], strlen(list[i])) == 0 : strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

/* The one allowed constructor: .init_array holds one pointer, and its
 * relocation names the function r->init_fn (directly, or as its section
 * plus the function's offset). */
static int init_array_ok(const unsigned char *buf, size_t size, const Elf64_Ehdr *eh,
                         const Elf64_Shdr *sh, int idx, const char *init_fn)
{
    for (int i = 0; i < eh->e_shnum; i++) {
        const Elf64_Rela *rel;
        const Elf64_Sym *sym;
        const char *str;
        size_t nsym;
        unsigned si;
        if (sh[i].sh_type != SHT_RELA || (int)sh[i].sh_info != idx)
            continue;
        if (sh[idx].sh_size != 8 || sh[i].sh_size != sizeof(Elf64_Rela) ||
            !IN_FILE(sh[i].sh_offset, sh[i].sh_size) || sh[i].sh_link >= eh->e_shnum)
            return 0;
        rel = (const Elf64_Rela *)(buf + sh[i].sh_offset);
        {
            const Elf64_Shdr *symtab = &sh[sh[i].sh_link];
            if (symtab->sh_link >= eh->e_shnum || !IN_FILE(symtab->sh_offset, symtab->sh_size) ||
                !IN_FILE(sh[symtab->sh_link].sh_offset, sh[symtab->sh_link].sh_size))
                return 0;
            sym = (const Elf64_Sym *)(buf + symtab->sh_offset);
            nsym = symtab->sh_size / sizeof(Elf64_Sym);
            str = (const char *)buf + sh[symtab->sh_link].sh_offset;
            si = (unsigned)ELF64_R_SYM(rel->r_info);
            if (si == 0 || si >= nsym)
                return 0;
            for (size_t k = 1; k < nsym; k++) {
                int direct = k == si && ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC;
                int in_section = ELF64_ST_TYPE(sym[si].st_info) == STT_SECTION &&
                                 ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
                                 sym[k].st_shndx == sym[si].st_shndx &&
                                 (Elf64_Sxword)sym[k].st_value == rel->r_addend;
                if ((direct || in_section) && sym[k].st_name < sh[symtab->sh_link].sh_size &&
                    strcmp(str + sym[k].st_name, init_fn) == 0 &&
                    ELF64_ST_BIND(sym[k].st_info) == STB_LOCAL)
                    return 1;
            }
        }
        return 0;
    }
    return 0;
}

/* The bytes of a raw system call instruction anywhere in executable code
 * (syscall 0f 05, sysenter 0f 34, int 0x80 cd 80), at any offset: a jump
 * into the middle of another instruction reaches them too.  The offset of
 * the first, or -1. */
static long raw_syscall_at(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if ((p[i] == 0x0f && (p[i + 1] == 0x05 || p[i + 1] == 0x34)) ||
            (p[i] == 0xcd && p[i + 1] == 0x80))
            return (long)i;
    return -1;
}

/* Does the constructor init_fn reach `want`?  A relocation inside its
 * code that names want, or want's section at an offset inside want: nvcc's
 * registration calls only the runtime and its own helpers, and a
 * `#pragma redefine_extname atexit kernel` would make it call the kernel
 * before main.  1 with reason, 0, or -1 on a malformed object. */
static int init_reaches(const unsigned char *buf, size_t size, const Elf64_Ehdr *eh,
                        const Elf64_Shdr *sh, const char *init_fn, const char *want,
                        char *reason, size_t len)
{
    for (int i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *symtab, *strtab;
        const Elf64_Sym *sym, *fn = NULL, *target = NULL;
        const char *str;
        size_t nsym;
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        symtab = &sh[i];
        if (symtab->sh_link >= eh->e_shnum)
            return -1;
        strtab = &sh[symtab->sh_link];
        if (!IN_FILE(symtab->sh_offset, symtab->sh_size) || !IN_FILE(strtab->sh_offset, strtab->sh_size))
            return -1;
        sym = (const Elf64_Sym *)(buf + symtab->sh_offset);
        nsym = symtab->sh_size / sizeof(Elf64_Sym);
        str = (const char *)buf + strtab->sh_offset;
        for (size_t k = 1; k < nsym; k++) {
            if (sym[k].st_name >= strtab->sh_size)
                return -1;
            if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && !strcmp(str + sym[k].st_name, init_fn))
                fn = &sym[k];
            if (!strcmp(str + sym[k].st_name, want) && sym[k].st_shndx != SHN_UNDEF)
                target = &sym[k];
        }
        if (!fn)
            return 0;
        for (int r = 0; r < eh->e_shnum; r++) {
            const Elf64_Rela *rel;
            if (sh[r].sh_type != SHT_RELA || sh[r].sh_info != fn->st_shndx ||
                sh[r].sh_link != (Elf64_Word)i)
                continue;
            if (!IN_FILE(sh[r].sh_offset, sh[r].sh_size))
                return -1;
            rel = (const Elf64_Rela *)(buf + sh[r].sh_offset);
            for (size_t q = 0; q < sh[r].sh_size / sizeof(Elf64_Rela); q++) {
                unsigned si = (unsigned)ELF64_R_SYM(rel[q].r_info);
                const Elf64_Sym *s;
                if (rel[q].r_offset < fn->st_value || rel[q].r_offset >= fn->st_value + fn->st_size)
                    continue;
                if (si == 0 || si >= nsym)
                    return -1;
                s = &sym[si];
                if (!strcmp(str + s->st_name, want) ||
                    (target && ELF64_ST_TYPE(s->st_info) == STT_SECTION &&
                     s->st_shndx == target->st_shndx &&
                     (Elf64_Addr)(rel[q].r_addend + 4) >= target->st_value &&
                     (Elf64_Addr)(rel[q].r_addend + 4) < target->st_value + target->st_size)) {
                    snprintf(reason, len, "the registration constructor calls '%s': a renamed "
                             "symbol (#pragma redefine_extname, an asm label) would run the "
                             "kernel before the runner's sandbox is complete", want);
                    return 1;
                }
            }
        }
        return 0;
    }
    return 0;
}

int ao_elf_check(const char *path, const char *want, char *reason, size_t len)
{
    struct ao_elf_rules r = {want, NULL, NULL, NULL, NULL, 0};
    return ao_elf_check_rules(path, &r, reason, len);
}

/* Every section: none that runs code before or after the harness (but
 * the one .init_array the rules allow), and with no_raw_syscalls no raw
 * system call instruction in code.  0 clean, 1 refused, -1 corrupt; the
 * reason in both. */
static int sections_ok(const unsigned char *buf, size_t size, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                       const struct ao_elf_rules *r, char *reason, size_t len)
{
    const char *shstr = (const char *)buf + sh[eh->e_shstrndx].sh_offset;

    for (int i = 0; i < eh->e_shnum; i++) {
        const char *name;
        if (sh[i].sh_name >= sh[eh->e_shstrndx].sh_size) {
            snprintf(reason, len, "corrupt section name");
            return -1;
        }
        name = shstr + sh[i].sh_name;
        if (r->init_fn && sh[i].sh_type == SHT_INIT_ARRAY && strcmp(name, ".init_array") == 0 &&
            init_array_ok(buf, size, eh, sh, i, r->init_fn))
            continue;
        if (banned_section(name) || sh[i].sh_type == SHT_INIT_ARRAY ||
            sh[i].sh_type == SHT_FINI_ARRAY || sh[i].sh_type == SHT_PREINIT_ARRAY) {
            snprintf(reason, len, "defines section '%s': code that runs before or after "
                     "the harness (constructors, destructors) is not allowed", name);
            return 1;
        }
        if (r->no_raw_syscalls && (sh[i].sh_flags & SHF_EXECINSTR) && sh[i].sh_type == SHT_PROGBITS) {
            long at;
            if (!IN_FILE(sh[i].sh_offset, sh[i].sh_size)) {
                snprintf(reason, len, "corrupt section '%s'", name);
                return -1;
            }
            if ((at = raw_syscall_at(buf + sh[i].sh_offset, sh[i].sh_size)) >= 0) {
                snprintf(reason, len, "its code in '%.40s' holds the bytes of a raw system call "
                         "instruction (at offset %ld): a kernel reaches the system only through "
                         "the runtime calls listed", name, at);
                return 1;
            }
        }
    }
    return 0;
}

/* Every symbol: no IFUNC, nothing of the harness's, only the calls the
 * rules list, and one external definition, the function wanted.  0 clean,
 * 1 refused, -1 corrupt; the reason in both. */
static int symbols_ok(const unsigned char *buf, size_t size, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                      const struct ao_elf_rules *r, char *reason, size_t len)
{
    const char *want = r->want;
    int found = 0;

    for (int i = 0; i < eh->e_shnum; i++) {
        const Elf64_Sym *sym;
        const char *str;
        size_t nsym, strsize;
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        if (sh[i].sh_link >= eh->e_shnum || !IN_FILE(sh[i].sh_offset, sh[i].sh_size) ||
            !IN_FILE(sh[sh[i].sh_link].sh_offset, sh[sh[i].sh_link].sh_size)) {
            snprintf(reason, len, "corrupt symbol table");
            return -1;
        }
        sym = (const Elf64_Sym *)(buf + sh[i].sh_offset);
        nsym = sh[i].sh_size / sizeof(Elf64_Sym);
        str = (const char *)buf + sh[sh[i].sh_link].sh_offset;
        strsize = sh[sh[i].sh_link].sh_size;
        for (size_t k = 1; k < nsym; k++) {
            int bind = ELF64_ST_BIND(sym[k].st_info), type = ELF64_ST_TYPE(sym[k].st_info);
            const char *name;
            if (sym[k].st_name >= strsize) {
                snprintf(reason, len, "corrupt symbol name");
                return -1;
            }
            name = str + sym[k].st_name;
            if (type == STT_GNU_IFUNC) {
                snprintf(reason, len, "'%s' is an IFUNC: its resolver would run before the "
                         "harness", name);
                return 1;
            }
            if (bind == STB_LOCAL)
                continue;
            if (sym[k].st_shndx == SHN_UNDEF) {
                if (strncmp(name, "ao_", 3) == 0 || strcmp(name, "main") == 0) {
                    snprintf(reason, len, "refers to '%s', which belongs to the harness", name);
                    return 1;
                }
                if (r->undefined && !listed(name, r->undefined, 0) &&
                    !listed(name, r->undefined_prefixes, 1)) {
                    snprintf(reason, len, "calls '%.100s', which kernels may not use (only the "
                             "device runtime's kernel launch, memory and attribute calls, and "
                             "the C math library)", name);
                    return 1;
                }
                continue;
            }
            if (listed(name, r->also_defined, 0))
                continue;
            if (strcmp(name, want) != 0) {
                snprintf(reason, len, "defines the external symbol '%s': only '%s' may be "
                         "external; make everything else static", name, want);
                return 1;
            }
            if (type != STT_FUNC || sym[k].st_shndx == SHN_COMMON) {
                snprintf(reason, len, "'%s' must be a function", want);
                return 1;
            }
            found = 1;
        }
    }
    if (!found) {
        snprintf(reason, len, "does not define the function '%s'", want);
        return 1;
    }
    return 0;
}

int ao_elf_check_rules(const char *path, const struct ao_elf_rules *r, char *reason, size_t len)
{
    char e[AO_ERRLEN];
    size_t size = 0;
    unsigned char *buf = (unsigned char *)ao_read_file(path, &size, e, sizeof e);
    const Elf64_Ehdr *eh;
    const Elf64_Shdr *sh;
    int rc = -1;

    if (!buf) {
        snprintf(reason, len, "%s", e);
        return -1;
    }
    eh = (const Elf64_Ehdr *)buf;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_REL ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum || eh->e_shstrndx >= eh->e_shnum) {
        snprintf(reason, len, "not a 64-bit relocatable ELF object");
        goto out;
    }
    sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
    if (!IN_FILE(sh[eh->e_shstrndx].sh_offset, sh[eh->e_shstrndx].sh_size)) {
        snprintf(reason, len, "corrupt section names");
        goto out;
    }
    if ((rc = sections_ok(buf, size, eh, sh, r, reason, len)) != 0)
        goto out;
    if (r->init_fn) {
        int reach = init_reaches(buf, size, eh, sh, r->init_fn, r->want, reason, len);
        if (reach != 0) {
            if (reach < 0)
                snprintf(reason, len, "corrupt symbols or relocations");
            rc = reach;
            goto out;
        }
    }
    rc = symbols_ok(buf, size, eh, sh, r, reason, len);
out:
    free(buf);
    return rc;
}
