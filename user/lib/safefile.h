/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every file the CLI writes (export, metrics --textfile, the BGP state)
 * goes through here:
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
 * umask neither widens nor narrows it). A file system that does not keep
 * that mode (or gives the file to another user) is refused before anything
 * is written. rename() replaces whatever is at the final name, a symlink
 * included, without following it.
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
/* The same for name inside an open directory (dir_fd is duplicated);
 * label names the file in messages. */
int fb_safefile_openat(struct fb_safefile *sf, int dir_fd, const char *name, const char *label,
		       mode_t mode);

/*
 * Files flowbloom reads back as its own (the BGP state file and its lock)
 * live in a trusted directory: reached from / one component at a time
 * without following a symbolic link unless root (or the caller) owns it,
 * every directory on the way owned by root (or the caller) and writable by
 * no one else, except a root-owned sticky directory like /tmp on the way
 * (others cannot rename or remove what is in it, and the next component is
 * checked itself). The last directory must be writable by no one else:
 * nobody can plant a file or a link in it. Returns its fd, or -1 (printed).
 */
int fb_safe_opendir(const char *path);
/* Open name in such a directory, never through a symbolic link, and only
 * if it is a regular file owned by root (or the caller) and writable by no
 * one else. flags as open(2) (O_NOFOLLOW and O_CLOEXEC added); mode for
 * O_CREAT. The fd; -1 printed; -2 (nothing printed) if it does not exist. */
int fb_safe_openat(int dir_fd, const char *name, const char *label, int flags, mode_t mode);
/* Flush, fsync, set the mode, rename over the target, fsync the directory.
 * -1 (error printed "PATH: ..."): the temporary file is removed and the
 * target left as it was. Either way sf is closed. */
int fb_safefile_commit(struct fb_safefile *sf);
/* Give up: close and remove the temporary file. */
void fb_safefile_abort(struct fb_safefile *sf);

#endif
