/*
 * A power-loss simulator for the tests (test/support/power-loss/power-loss.ts), loaded with
 * LD_PRELOAD into the process under test. It records what a disk would still hold after the
 * power is cut: the content of a file as it was at its last fsync()/fdatasync(), and the entries
 * of a directory as they were at its last fsync(). Nothing else survives: a write that was never
 * synced, a new file whose directory was never synced, a rename or an unlink whose directory was
 * never synced. The test then builds that disk (materialise in power-loss.ts) and starts the
 * system on it.
 *
 * Written for the tests because nothing installable does it here: Jepsen's LazyFS (the FUSE file
 * system made for this) is not packaged by Debian and the machine has no network to build it.
 * This models the same thing at the boundary the system crosses (libc's sync calls), stricter
 * than LazyFS on directories (POSIX: an entry is durable once its directory is synced).
 *
 * State lives under SYNC_SHADOW_DIR, shared by every process that loads the library (the store's
 * one-off initdb child too):
 *   inodes/<key>      a file's content at its last sync
 *   dirs/<key>        a directory's entries at its last sync, one per line: <d|f>\t<key>\t<name>
 *   root.key          the key of SYNC_SHADOW_ROOT (the simulated disk's top directory)
 * A key names one file for its whole life: inode number and birth time (inode numbers are reused).
 * Only paths under SYNC_SHADOW_ROOT are recorded; a write of the state is atomic (rename).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *root;
static const char *shadow;
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void key_of(const struct statx *st, char *out, size_t n) {
  unsigned long long sec = (st->stx_mask & STATX_BTIME) ? (unsigned long long)st->stx_btime.tv_sec : 0;
  unsigned nsec = (st->stx_mask & STATX_BTIME) ? st->stx_btime.tv_nsec : 0;
  snprintf(out, n, "%llu-%llu.%09u", (unsigned long long)st->stx_ino, sec, nsec);
}

static int stat_fd(int dirfd, const char *name, int flags, struct statx *st) {
  return statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_BTIME | STATX_SIZE, st);
}

/* Writes the content of the file `link` (/proc/self/fd/N) names to <shadow>/<sub>/<key>, atomically. */
static void save_file(const char *link, const char *sub, const char *key) {
  char tmp[PATH_MAX], dst[PATH_MAX];
  /* Opened again to read: the synced descriptor may be write-only. */
  int src = open(link, O_RDONLY | O_CLOEXEC);
  if (src < 0) return;
  snprintf(tmp, sizeof tmp, "%s/%s/.%s.%d", shadow, sub, key, getpid());
  snprintf(dst, sizeof dst, "%s/%s/%s", shadow, sub, key);
  int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) {
    close(src);
    return;
  }
  char buf[1 << 16];
  off_t off = 0;
  for (;;) {
    ssize_t r = pread(src, buf, sizeof buf, off);
    if (r <= 0) break;
    if (write(out, buf, (size_t)r) != r) break;
    off += r;
  }
  close(out);
  close(src);
  rename(tmp, dst);
}

static void save_dir(int fd, const char *key) {
  char tmp[PATH_MAX], dst[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/dirs/.%s.%d", shadow, key, getpid());
  snprintf(dst, sizeof dst, "%s/dirs/%s", shadow, key);
  int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return;
  }
  FILE *out = fopen(tmp, "we");
  if (!out) {
    closedir(d);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct statx st;
    if (stat_fd(dirfd(d), e->d_name, 0, &st) != 0) continue;
    if (!S_ISREG(st.stx_mode) && !S_ISDIR(st.stx_mode)) continue;
    char k[96];
    key_of(&st, k, sizeof k);
    fprintf(out, "%c\t%s\t%s\n", S_ISDIR(st.stx_mode) ? 'd' : 'f', k, e->d_name);
  }
  fclose(out);
  closedir(d);
  rename(tmp, dst);
}

/* After a successful sync of fd: record what it made durable, when fd is under the root. */
static void record(int fd) {
  if (!root || !shadow) return;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = 0;
  size_t rl = strlen(root);
  if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != 0)) return;
  struct statx st;
  if (stat_fd(fd, "", AT_EMPTY_PATH, &st) != 0) return;
  char key[96];
  key_of(&st, key, sizeof key);
  if (S_ISREG(st.stx_mode)) save_file(link, "inodes", key);
  else if (S_ISDIR(st.stx_mode)) save_dir(fd, key);
}

__attribute__((constructor)) static void init(void) {
  real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  root = getenv("SYNC_SHADOW_ROOT");
  shadow = getenv("SYNC_SHADOW_DIR");
  if (!root || !shadow) return;
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/inodes", shadow);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/dirs", shadow);
  mkdir(p, 0700);
  struct statx st;
  if (stat_fd(AT_FDCWD, root, 0, &st) != 0) return;
  char key[96];
  key_of(&st, key, sizeof key);
  snprintf(p, sizeof p, "%s/root.key", shadow);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) {
    if (write(fd, key, strlen(key)) < 0) { /* the test reads it: an empty file fails there */ }
    close(fd);
  }
}

int fsync(int fd) {
  int r = real_fsync(fd);
  if (r == 0) record(fd);
  return r;
}

int fdatasync(int fd) {
  int r = real_fdatasync(fd);
  if (r == 0) record(fd);
  return r;
}
