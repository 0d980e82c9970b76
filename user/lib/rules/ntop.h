/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Addresses as text, the text glibc's inet_ntop writes, without its
 * sprintf per group: fb_flow_format formats a rule per path at each
 * `bgp` state write (500,000 and more), where inet_ntop's sprintf calls
 * were a third of the write's CPU.
 */
#ifndef FLOWBLOOM_RULES_NTOP_H
#define FLOWBLOOM_RULES_NTOP_H

#include <stddef.h>
#include <linux/types.h>

/* a as inet_ntop(AF_INET) / inet_ntop(AF_INET6) writes it, into out (at
 * least 16 / 46 bytes), NUL-terminated: its length. */
size_t fb_ntop4(const __u8 a[4], char *out);
size_t fb_ntop6(const __u8 a[16], char *out);

#endif
