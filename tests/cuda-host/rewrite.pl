#!/usr/bin/perl -0777 -p
# rewrite.pl FILE.cu: nvcc's launch syntax (of a function or a template's
# instance) and dynamic shared memory as calls of emu.h (what a host
# compiler can build)
s/\b([A-Za-z_]\w*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\(/emu_launch($1, emu_config($2), /gs;
s/extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([A-Za-z_][\w ]*?)\s+(\w+)\[\];/$1 *$2 = ($1 *)emu_dynamic;/g;
