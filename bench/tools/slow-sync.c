/*
 * A disk whose syncs take longer: LD_PRELOAD'ed into a process, each fsync/fdatasync does the
 * real sync and then sleeps SLOW_SYNC_US microseconds (2000 by default), as on a network volume.
 * For bench/tools/group-commit-ab.ts; built by it (gcc -shared -fPIC -o slow-sync.so slow-sync.c -ldl).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>
#include <stdlib.h>
static int delay_us(void) { const char *v = getenv("SLOW_SYNC_US"); return v ? atoi(v) : 2000; }
int fdatasync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fdatasync"); int r = real(fd); usleep(delay_us()); return r; }
int fsync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fsync"); int r = real(fd); usleep(delay_us()); return r; }
