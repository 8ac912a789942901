/* Big buffers kept between requests. A 5,000-name prioritize needs ~100 KB
 * of JSON tokens, ~150 KB of nodes, ~300 KB of scores and a ~150 KB reply;
 * a request with 500 full Node objects, megabytes of each. Fresh from
 * malloc(), every such buffer above the scorer's mmap threshold (main.c) is
 * a new mapping whose pages fault in on first touch and go back to the
 * kernel on free: a third of those requests' CPU went to page faults
 * (perf). A block handed back here is kept and given to the next request
 * that needs one as large, its pages still resident.
 *
 * Bounded: at most SCRATCH_BLOCKS blocks of at most SCRATCH_BLOCK_MAX bytes,
 * SCRATCH_KEPT_MAX bytes in all; a block nobody took for SCRATCH_IDLE_NS is
 * freed (at the next take, give or scratch_trim()), so memory a burst
 * needed goes back to the kernel once the burst is over. Requests' own memory is still charged
 * to their budget (membudget.h) as before; this only decides which pages
 * hold it.
 *
 * Blocks are plain malloc() memory: whoever holds one may realloc() or
 * free() it instead of giving it back (nothing is lost but the reuse).
 * Thread-safe: one mutex, held for a scan of at most SCRATCH_BLOCKS
 * entries. */
#ifndef NETSCHED_SCRATCH_H
#define NETSCHED_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCRATCH_BLOCKS 16u
/* Smaller needs come from malloc()'s own free lists, which already reuse
 * memory without faults. */
#define SCRATCH_BLOCK_MIN (64u * 1024u)
/* A 500-node request's body, tokens and reply each fit (1.6-2 MB). */
#define SCRATCH_BLOCK_MAX (4u * 1024u * 1024u)
#define SCRATCH_KEPT_MAX (24u * 1024u * 1024u)
#define SCRATCH_IDLE_NS (10ULL * 1000000000ULL)

/* A block of at least need bytes (uninitialised): the smallest kept one
 * that is large enough, else a fresh malloc(). *cap (cap may be NULL) gets
 * its usable size.
 * NULL when memory ran out. */
void *scratch_take(size_t need, size_t *cap);

/* calloc()'s twin: n elements of size bytes, zeroed (n == 0: one). NULL
 * when n x size overflows or memory ran out. */
void *scratch_take_zeroed(size_t n, size_t size);

/* Hands block p back (p from scratch_take() or malloc(); NULL is fine): kept
 * if it is within the bounds and there is room, freed otherwise. The
 * signature of libmicrohttpd's free callback, so a reply's body comes back
 * here once sent. */
void scratch_give(void *p);

/* scratch_give(p) when taken says p came from scratch_take(), free(p)
 * otherwise: only blocks taken from here are kept, so the pool never
 * fills with buffers that grew on their own and that no request takes. */
void scratch_drop(void *p, bool taken);

/* Frees the blocks given back more than SCRATCH_IDLE_NS before now_ns
 * (monotonic; UINT64_MAX: all): the scorer calls it every second, so a
 * quiet scorer gives the memory back too. */
void scratch_trim(uint64_t now_ns);

/* Blocks and bytes kept now. */
void scratch_stats(size_t *blocks, size_t *bytes);

#endif
