#include "models/aio_engine.h"

namespace vqsim::models {

AioEngine aio_engine(const IoScenario& s) {
  AioEngine a;
  switch (s.host.aio) {
    case Aio::threads:
      a.slots = s.host.thread_pool_max;
      a.handoff = true;
      a.submit_ns = 0;  // a condition-variable signal; the worker's syscall is off the thread
      break;
    case Aio::native:
      a.slots = 1024;  // block/linux-aio.c MAX_EVENTS
      a.submit_ns = s.host.native_submit_ns;
      break;
    case Aio::io_uring:
      a.slots = 128;  // block/io_uring.c MAX_ENTRIES
      a.submit_ns = s.host.io_uring_submit_ns;
      break;
  }
  return a;
}

CacheSemantics cache_semantics(const IoScenario& s) {
  CacheSemantics c{};
  const CacheMode m = s.host.cache;
  c.direct = m == CacheMode::none || m == CacheMode::directsync;
  c.flush_after_write = m == CacheMode::writethrough || m == CacheMode::directsync;
  c.writes_to_pagecache = m == CacheMode::writeback || m == CacheMode::unsafe;
  // Bare metal: the guest's O_DIRECT fio talks to the device; there is no QEMU cache layer.
  // Ceph through librbd never touches the host page cache (librbd has its own cache, which
  // writes through to the OSDs at the cluster's pace in steady state).
  if (s.bare_metal() || s.backend.kind == BackendKind::ceph_rbd) {
    c.direct = true;
    c.writes_to_pagecache = false;
  }
  if (s.bare_metal()) c.flush_after_write = false;
  return c;
}

}  // namespace vqsim::models
