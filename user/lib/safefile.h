/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every file the CLI writes (export, metrics --textfile) goes through here:
 * a new file is written aside in the target's directory and renamed over
 * the target only once it is complete and on disk, so a reader sees the old
 * file or the new one, never half of one, and a full disk leaves the old
 * file as it was.
 *
 * The CLI runs as root, often in directories other users can write to, so
 * the temporary file is created with O_CREAT | O_EXCL | O_NOFOLLOW under an
 * unpredictable name (a symlink or file planted at any name is never
 * followed or reused: creation fails and another name is drawn), mode
 * 0600 until it is complete, then fchmod()ed to the mode asked for (the
 * umask neither widens nor narrows it). rename() replaces whatever is at
 * the final name, a symlink included, without following it.
 */
#ifndef FLOWBLOOM_USER_SAFEFILE_H
#define FLOWBLOOM_USER_SAFEFILE_H

#include <stdio.h>
#include <sys/types.h>

struct fb_safefile {
	FILE *out;	  /* write here */
	int fd;		  /* out's descriptor */
	int dir_fd;	  /* the target's directory */
	mode_t mode;	  /* of the final file */
	char tmp[256];	  /* temporary name, relative to dir_fd */
	char base[256];	  /* final name, relative to dir_fd */
	const char *path; /* as given, for messages */
};

/* Parse an --mode value: octal digits only, at most 0777. -1 if bad. */
int fb_safefile_parse_mode(const char *s, mode_t *mode);
/* Start writing path (its directory must exist). -1: error printed. */
int fb_safefile_open(struct fb_safefile *sf, const char *path, mode_t mode);
/* Flush, fsync, set the mode, rename over the target, fsync the directory.
 * -1 (error printed "PATH: ..."): the temporary file is removed and the
 * target left as it was. Either way sf is closed. */
int fb_safefile_commit(struct fb_safefile *sf);
/* Give up: close and remove the temporary file. */
void fb_safefile_abort(struct fb_safefile *sf);

#endif
