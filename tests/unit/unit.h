/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of test_unit share: a check that prints hashes in hex (the
 * fixed-seed generator is packet.h's test_rand64).
 */
#ifndef FLOWBLOOM_TEST_UNIT_H
#define FLOWBLOOM_TEST_UNIT_H

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "flowbloom/geometry.h"
#include "flowbloom/head.h"
#include "flowbloom/hash.h"
#include "flowbloom/key.h"
#include "flowbloom/prefix.h"
#include "types/sizing.h"
#include "rules/flow.h"
#include "packet.h"
#include "testlib.h"

/* test_unit.c */
bool check_u64(__u64 got, __u64 want, const char *label);

/* unit_hash.c */
void test_siphash_vectors(void);
void test_hash_key(void);
void test_nh_keyed(void);
void test_nh_structured(void);

/* unit_geometry.c */
void test_geometry(void);

/* unit_flow.c */
void test_flow_parse(void);
void test_ntop(void);
void test_flow_format_prefix(void);

/* unit_listline.c */
void test_list_line(void);

/* unit_keysort.c */
void test_keysort(void);

/* unit_rule.c */
void test_rule_parse(void);

/* unit_frame.c */
void test_frame(void);

/* unit_create.c */
void test_create_opts(void);

/* unit_shared.c */
void test_shared_logic(void);

/* unit_text.c */
void test_text_input(void);
void test_quote(void);
void test_real_input(void);

#endif
