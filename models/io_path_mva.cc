#include "models/io_path_mva.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/aio_engine.h"
#include "models/backend.h"
#include "models/guest_block.h"
#include "models/guest_driver.h"
#include "sim/mva.h"

namespace vqsim::models {

namespace {

// Plug merging (guest_block.h): fio I/Os per request, averaged over the groups a job's depth
// splits into (depth 10 in groups of 4: 4 + 4 + 2, so 10 / 3), and the requests per job.
int requests_per_job(const IoScenario& s) {
  const int m = plug_merge_ios(s);
  const int d = s.workload.effective_depth();
  return (d + m - 1) / m;
}
double ios_per_request(const IoScenario& s) { return static_cast<double>(s.workload.effective_depth()) / requests_per_job(s); }

struct Stage {
  std::string name;
  sim::MvaStationKind kind;
  int servers;
  double demand_ns;  // per I/O, all visits
  bool submit_side;  // counts towards slat
};

// Mean device time of one request of the workload's mix on `spec`.
double device_mean_ns(const DeviceSpec& d, const IoScenario& s) {
  const auto& w = s.workload;
  auto one = [&](Direction dir) {
    const double bytes = static_cast<double>(dir == Direction::read ? w.bs_read_bytes : w.bs_write_bytes);
    if (d.kind == BackendKind::hdd) {
      // NCQ shortens positioning with the queue (backend.cc); the MVA assumes the drive sees
      // every outstanding request queued, which is right when it is the bottleneck.
      const double queued = std::min<double>(w.numjobs * w.effective_depth() - 1, d.ncq_depth - 1);
      return hdd_service_ns(d, bytes, dir, w.random, queued, queued >= 1, d.seek_ns + d.rotation_ns / 2);
    }
    // Transfer at bandwidth / (requests in service), taking the device as busy with as many as
    // are outstanding (up to its channels): exact when it is the bottleneck, and when alone.
    const double outstanding = static_cast<double>(w.numjobs * requests_per_job(s));
    const double sharing = std::clamp(outstanding, 1.0, static_cast<double>(d.channels));
    const double base = dir == Direction::read ? d.read_ns : d.write_ns;
    return base + std::max(0.0, bytes - 4096) / (d.bandwidth_of(dir) / sharing) * 1e9;
  };
  return w.read_fraction * one(Direction::read) + (1 - w.read_fraction) * one(Direction::write);
}

std::vector<Stage> build_stages(const IoScenario& plain, double p_kick, double p_wake, double irq_share) {
  // Demands are per request; a merged request carries `m` I/Os' worth of fio work and bytes.
  const double m = plain.workload.rate_iops > 0 ? 1.0 : ios_per_request(plain);
  IoScenario s = plain;
  s.workload.bs_read_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(plain.workload.bs_read_bytes) * m));
  s.workload.bs_write_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(plain.workload.bs_write_bytes) * m));
  const auto& w = s.workload;
  const DriverCosts drv = driver_costs(s);
  const BlockLayer blk = block_layer(s);
  const AioEngine aio = aio_engine(s);
  const CacheSemantics cache = cache_semantics(s);
  const double wf = 1 - w.read_fraction;
  std::vector<Stage> st;
  const bool bare = s.bare_metal();

  // fio threads on vCPUs.
  const double kick = bare ? 0.0 : s.vq.kick_exit_ns / std::max(1, w.iodepth_batch_submit) * p_kick;
  const double guest_submit = s.guest.fio_submit_ns * m + blk.submit_extra_ns + drv.submit_ns + kick;
  // An interrupt delivers its first completion and those that reach the ring within irq_us, so
  // each I/O pays the per-interrupt cost divided by the mean batch, 1 + (rate per queue) x irq_us.
  const double guest_complete = s.guest.fio_complete_ns * m + drv.complete_ns + (bare ? 0.0 : s.vq.irq_handler_ns * irq_share);
  if (w.numjobs > s.guest.vcpus || s.host.cores > 0) {
    const int c = s.host.cores > 0 ? s.host.cores : s.guest.vcpus;
    st.push_back({"guest.vcpus (submit)", sim::MvaStationKind::MultiServer, c, guest_submit, true});
    st.push_back({"guest.vcpus (complete)", sim::MvaStationKind::MultiServer, c, guest_complete, false});
  } else {
    for (int j = 0; j < w.numjobs; ++j)
      st.push_back({"guest.fio_job" + std::to_string(j), sim::MvaStationKind::Queue, 1,
                    (guest_submit + guest_complete) / w.numjobs, true});
  }
  // Host thread(s).
  if (!bare) {
    st.push_back({"virtqueue.wakeup", sim::MvaStationKind::Delay, 1, s.vq.wakeup_ns * p_wake, true});
    double submit = 0, complete = 0;
    int n = 1;
    std::string base = "host.main_loop";
    if (drv.uses_qemu_thread) {
      n = std::max(1, s.host.iothreads);
      const double extra = s.host.iothreads == 0 ? s.host.main_loop_ns : 0.0;
      const double bytes = w.read_fraction * static_cast<double>(w.bs_read_bytes) + wf * static_cast<double>(w.bs_write_bytes);
      submit = drv.emu_submit_ns + aio.submit_ns + extra + s.host.emu_per_page_ns * std::max(0.0, std::ceil(bytes / 4096.0) - 1);
      complete = drv.emu_complete_ns + extra;
      if (s.host.iothreads > 0) base = "host.iothread";
    } else if (s.guest.driver == GuestDriver::vhost_scsi) {
      submit = s.host.vhost_worker_ns;
      base = "host.vhost_worker";
    } else {
      submit = s.host.vhost_user_ns;
      base = "host.vhost_user";
    }
    // Queues are spread round robin over the threads; with fewer queues than threads some idle.
    const int used = std::min(n, s.queues());
    for (int t = 0; t < used; ++t)
      st.push_back({n == 1 ? base : base + std::to_string(t), sim::MvaStationKind::Queue, 1, (submit + complete) / used, false});
    st.push_back({"virtqueue.irq", sim::MvaStationKind::Delay, 1, s.vq.irq_ns, false});
    if (drv.uses_qemu_thread && aio.handoff)
      st.push_back({"aio.handoff", sim::MvaStationKind::Delay, 1, 2 * s.host.threads_handoff_ns, false});
  }
  // Page cache and the device.
  double to_cache = 0;  // share of I/Os served by the host page cache
  if (!cache.direct) {
    to_cache = w.read_fraction * s.host.pagecache_hit_ratio + (cache.writes_to_pagecache ? wf : 0.0);
  }
  if (to_cache > 0 || s.backend.kind == BackendKind::pagecache) {
    const double share = s.backend.kind == BackendKind::pagecache ? 1.0 : to_cache;
    const double pages = std::max(1.0, static_cast<double>(w.read_fraction * w.bs_read_bytes + wf * w.bs_write_bytes) / 4096);
    st.push_back({"host.pagecache", sim::MvaStationKind::Delay, 1, share * s.host.pagecache_ns * pages, false});
  }
  const double dev_share = s.backend.kind == BackendKind::pagecache ? 0.0 : 1 - to_cache;
  const BackendParams& p = s.backend;
  double flush_ns = 0;
  switch (p.kind) {
    case BackendKind::nvme:
    case BackendKind::sata_ssd:
    case BackendKind::hdd: {
      const DeviceSpec d = device_spec(p, p.kind);
      st.push_back({"device", d.channels > 1 ? sim::MvaStationKind::MultiServer : sim::MvaStationKind::Queue, d.channels,
                    dev_share * device_mean_ns(d, s), false});
      flush_ns = d.flush_ns;
      break;
    }
    case BackendKind::md_raid1: {
      const DeviceSpec d = device_spec(p, p.leg);
      IoScenario reads = s, writes = s;
      reads.workload.read_fraction = 1;
      writes.workload.read_fraction = 0;
      const double per_leg = dev_share * (w.read_fraction * device_mean_ns(d, reads) / 2 + wf * device_mean_ns(d, writes));
      for (int leg = 0; leg < 2; ++leg)
        st.push_back({"raid1.leg" + std::to_string(leg),
                      d.channels > 1 ? sim::MvaStationKind::MultiServer : sim::MvaStationKind::Queue, d.channels, per_leg,
                      false});
      flush_ns = d.flush_ns;
      break;
    }
    case BackendKind::ceph_rbd:
    case BackendKind::krbd: {
      const int threads = p.kind == BackendKind::ceph_rbd ? p.msgr_threads : std::max(1, s.host.cores > 0 ? s.host.cores : 8);
      st.push_back({p.kind == BackendKind::ceph_rbd ? "rbd.msgr" : "krbd.client",
                    threads > 1 ? sim::MvaStationKind::MultiServer : sim::MvaStationKind::Queue, threads, dev_share * p.msgr_ns,
                    false});
      st.push_back({"ceph.net", sim::MvaStationKind::Delay, 1, dev_share * p.rtt_ns, false});
      const double bytes = w.read_fraction * w.bs_read_bytes + wf * w.bs_write_bytes;
      const double osd =
          w.read_fraction * p.osd_read_ns + wf * p.osd_write_ns + std::max(0.0, bytes - 4096) / (3.2e9 / p.osd_slots) * 1e9;
      st.push_back({"ceph.osd", sim::MvaStationKind::MultiServer, p.osd_slots, dev_share * osd, false});
      const double stall_ns = p.osd_stall_ratio * p.osd_stall_ns;
      st.push_back({"ceph.stall", sim::MvaStationKind::Delay, 1, dev_share * stall_ns, false});
      flush_ns = p.osd_write_ns + p.rtt_ns + stall_ns;  // a barrier waits about one write's time
      break;
    }
    case BackendKind::pagecache:
      break;
    case BackendKind::null:
      st.push_back({"null", sim::MvaStationKind::Delay, 1, p.latency_ns, false});
      break;
  }
  if (cache.flush_after_write && wf > 0 && flush_ns > 0)
    st.push_back({"flush", sim::MvaStationKind::Delay, 1, wf * flush_ns, false});
  if (w.thinktime_ns > 0) st.push_back({"fio.thinktime", sim::MvaStationKind::Delay, 1, w.thinktime_ns, false});
  return st;
}

}  // namespace

IoMvaResult solve_io_mva(const IoScenario& s) {
  const auto& w = s.workload;
  IoMvaResult out;
  double p_kick = 1, p_wake = 1, irq_share = 1;
  std::vector<Stage> st;
  std::vector<double> residence, util, number;
  double x_ns = 0;  // I/Os per ns
  // Fixed point on the host threads' utilization: kicks and wake-ups happen only when a
  // thread is asleep. Five rounds settle it to well under a percent.
  for (int round = 0; round < 6; ++round) {
    st = build_stages(s, p_kick, p_wake, irq_share);
    residence.assign(st.size(), 0);
    util.assign(st.size(), 0);
    number.assign(st.size(), 0);
    if (w.rate_iops > 0) {
      out.open_loop = true;
      x_ns = w.rate_iops * w.numjobs / 1e9;
      for (std::size_t k = 0; k < st.size(); ++k) {
        const double d = st[k].demand_ns;
        if (st[k].kind == sim::MvaStationKind::Delay) {
          residence[k] = d;
          util[k] = x_ns * d;
        } else {
          const double u = x_ns * d / st[k].servers;
          util[k] = u;
          if (u >= 1) out.saturated = true;
          // M/M/c waiting by Erlang C would be exact for c > 1; D/(1-U) is its c = 1 form.
          residence[k] = u < 1 ? (st[k].servers == 1 ? d / (1 - u) : d + d / st[k].servers * std::pow(u, st[k].servers) / (1 - u))
                               : INFINITY;
        }
        number[k] = x_ns * residence[k];
      }
    } else {
      std::vector<sim::MvaStation> ms;
      for (const auto& x : st) ms.push_back({x.name, x.kind, x.servers, {std::max(0.0, x.demand_ns)}});
      const int population = w.numjobs * requests_per_job(s);
      // Exact MVA costs 2^(multi-server stations) x population; past its work limit (thousands of
      // jobs x a deep iodepth) Schweitzer-Bard's approximation answers instead of failing.
      sim::MvaResult r;
      try {
        r = sim::mva_exact(ms, population);
      } catch (const std::invalid_argument&) {
        r = sim::mva_schweitzer(ms, {population});
      }
      x_ns = r.throughput[0];
      for (std::size_t k = 0; k < st.size(); ++k) {
        residence[k] = r.residence[k][0];
        util[k] = r.utilization[k][0];
        number[k] = r.queue_length[k][0];
      }
    }
    // Probability a host thread is asleep when a request arrives: idle, and (IOThreads) the idle
    // gap has outlasted the polling window (Poisson arrivals at the thread's rate).
    double u_host = 0, x_thread = x_ns;
    int threads = 0;
    for (std::size_t k = 0; k < st.size(); ++k)
      if (st[k].name.rfind("host.", 0) == 0 && st[k].name != "host.pagecache") {
        u_host += util[k];
        ++threads;
      }
    if (threads > 0) {
      u_host /= threads;
      x_thread = x_ns / threads;
    }
    double asleep = std::clamp(1 - u_host, 0.0, 1.0);
    if (s.host.iothreads > 0 && s.host.poll_max_ns > 0) asleep *= std::exp(-x_thread * s.host.poll_max_ns);
    if (s.guest.driver == GuestDriver::vhost_user_blk) asleep = 0;
    p_wake = asleep;
    irq_share = 1.0 / (1.0 + x_ns / std::max(1, s.queues()) * s.vq.irq_ns);
    p_kick = s.vq.event_idx ? asleep : 1.0;
    if (s.guest.driver == GuestDriver::scsi_hba) p_kick = 1.0;
  }
  out.iops = x_ns * 1e9 * (w.rate_iops > 0 ? 1.0 : ios_per_request(s));
  out.read_iops = out.iops * w.read_fraction;
  out.write_iops = out.iops - out.read_iops;
  double total = 0, submit = 0;
  double worst = -1;
  for (std::size_t k = 0; k < st.size(); ++k) {
    if (st[k].name == "fio.thinktime") continue;
    total += residence[k];
    // The guest submit station's share of slat: its demand share of the fio thread's work.
    if (st[k].submit_side) {
      if (st[k].name.rfind("guest.fio_job", 0) == 0) {
        const DriverCosts drv = driver_costs(s);
        const double m = ios_per_request(s);
        const double sub = s.guest.fio_submit_ns * m + block_layer(s).submit_extra_ns + drv.submit_ns;
        submit += residence[k] * sub / (sub + s.guest.fio_complete_ns * m + drv.complete_ns);
      } else if (st[k].name != "virtqueue.wakeup") {
        submit += residence[k];
      }
    }
    // Per I/O: a merged request's residence is shared by the I/Os it carries.
    out.stages.push_back({st[k].name, residence[k] / (w.rate_iops > 0 ? 1.0 : ios_per_request(s)), util[k], number[k]});
    if (st[k].kind != sim::MvaStationKind::Delay && util[k] > worst) {
      worst = util[k];
      out.bottleneck = st[k].name;
    }
  }
  out.lat_mean_ns = total;
  out.slat_mean_ns = submit;
  out.clat_mean_ns = total - submit;
  return out;
}

}  // namespace vqsim::models
