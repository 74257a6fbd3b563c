// jemalloc's settings, compiled into every program that links it (cmake/Dependencies.cmake).
//
// jemalloc returns the pages of freed runs to the kernel in two steps: pages unused for
// dirty_decay_ms (10 s) become "muzzy", and muzzy pages are purged after muzzy_decay_ms. Its
// default of 0 purges them at once with MADV_DONTNEED, so the next allocation there takes a page
// fault and a zeroed page, and a block's execution and commit fault in again the memory the
// previous block freed. With -1 the decayed pages stay advised MADV_FREE: the kernel takes them
// back when it needs memory, and until then a reuse costs nothing (docs/architecture.md, "Memory
// allocator"). The environment's MALLOC_CONF is read after this and overrides it.
extern "C" {
const char* malloc_conf = "muzzy_decay_ms:-1";
}
