// Counts malloc calls and prints the total to stderr at exit ("MALLOCS N"). Loaded with LD_PRELOAD by
// scripts/alloc-count: a count of allocations is the same from run to run, whatever else the machine is doing,
// unlike a time on this shared host.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_long count;
static void *(*real_malloc)(size_t);

void *malloc(size_t size) {
    if (!real_malloc) real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    return real_malloc(size);
}

__attribute__((destructor)) static void report(void) {
    char line[64];
    int length = snprintf(line, sizeof line, "MALLOCS %ld\n", atomic_load(&count));
    if (length > 0) write(2, line, (size_t)length);
}
