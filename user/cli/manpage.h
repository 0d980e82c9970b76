/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * flowbloom(8), printed from the verb table itself (`flowbloom help --man`,
 * what `make` writes to build/flowbloom.8), so the page can never say
 * something other than `flowbloom help`.
 */
#ifndef FLOWBLOOM_USER_MANPAGE_H
#define FLOWBLOOM_USER_MANPAGE_H

#include <stddef.h>
#include <stdio.h>
#include "cmd.h"

/* The page in man(7) roff: the global usage and --version lines, every verb's synopsis and
 * help from cmds, the FLOW syntax as `help` prints it. */
void fb_print_man(FILE *out, const char *usage, const char *version, const struct fb_cmd *cmds,
		  size_t n, const char *flow_syntax);

#endif
