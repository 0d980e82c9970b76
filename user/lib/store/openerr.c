// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Why a filter's pins could not be opened, said as every verb says it
 * (store.h): not opened now (memory, descriptors), or a link refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "report.h"
#include "store/pintree.h"
#include "store/store.h"

bool fb_store_err_now(int e)
{
	return fb_pin_err_unknown(e);
}

int fb_store_open_err(const struct fb_store *f)
{
	fb_report_err(FB_STORE_OPEN_ERR "%s': %s", f->name, strerror(errno));
	fb_pin_why = FB_PIN_UNKNOWN;
	return -1;
}

int fb_store_pin_refused(const struct fb_store *f, const char *pin)
{
	char path[sizeof(f->dir) + FB_NAME_MAX];

	if (errno != ELOOP || fb_pin_why != FB_PIN_UNTRUSTED)
		return fb_store_err_now(errno) ? fb_store_open_err(f) : 0;
	snprintf(path, sizeof(path), "%s/%s", f->dir, pin);
	fb_pin_report_link(path);
	return -1;
}
