#include "models/guest_driver.h"

#include <algorithm>
#include <cmath>

namespace vqsim::models {

namespace {
// Defaults, per request, in ns. Sources: docs/sources.md §2 (virtio-scsi ~ virtio-blk plus a fixed SCSI
// cost on both sides, "fit its size from your data"); seed 000 (a single fio job at 94% guest
// CPU for virtio-scsi vs 83% for virtio-blk at 63k vs 74k IOPS: ~15 vs ~11 us of guest CPU per
// I/O in total, of which fio and the block layer take the same share in both); docs/sources.md §4
// (a 2022 IOThread saturates near 300k IOPS: ~3.3 us per request, submit plus completion).
// The LSI HBA figures are an inference: every command is several trapped register accesses.
struct Defaults {
  double submit_ns, complete_ns, emu_submit_ns, emu_complete_ns;
};
Defaults defaults_for(GuestDriver d) {
  switch (d) {
    case GuestDriver::virtio_blk:
      return {1500, 1000, 2000, 1300};
    case GuestDriver::virtio_scsi:
      return {3500, 3000, 3000, 2000};
    case GuestDriver::vhost_scsi:
      return {3500, 3000, 0, 0};  // QEMU is off the data path
    case GuestDriver::vhost_user_blk:
      return {1500, 1000, 0, 0};
    case GuestDriver::scsi_hba:
      return {6000, 5000, 12000, 8000};
    case GuestDriver::none:
      return {500, 500, 0, 0};  // host NVMe/AHCI driver
  }
  return {0, 0, 0, 0};
}
}  // namespace

DriverCosts driver_costs(const IoScenario& s) {
  const Defaults d = defaults_for(s.guest.driver);
  DriverCosts c;
  // Explicit values are scaled at load (scenario.cc apply_cpu_scales); defaults here.
  c.submit_ns = s.guest.driver_submit_ns >= 0 ? s.guest.driver_submit_ns : d.submit_ns * s.guest_cpu_factor();
  c.complete_ns = s.guest.driver_complete_ns >= 0 ? s.guest.driver_complete_ns : d.complete_ns * s.guest_cpu_factor();
  c.emu_submit_ns = s.host.emu_submit_ns >= 0 ? s.host.emu_submit_ns : d.emu_submit_ns * s.host.cpu_scale;
  c.emu_complete_ns = s.host.emu_complete_ns >= 0 ? s.host.emu_complete_ns : d.emu_complete_ns * s.host.cpu_scale;
  c.has_virtqueue = s.guest.driver != GuestDriver::none && s.guest.driver != GuestDriver::scsi_hba;
  c.uses_qemu_thread = s.guest.driver == GuestDriver::virtio_blk || s.guest.driver == GuestDriver::virtio_scsi ||
                       s.guest.driver == GuestDriver::scsi_hba;
  switch (s.guest.driver) {
    case GuestDriver::virtio_scsi:
      c.inflight_limit = s.guest.cmd_per_lun;
      break;  // QEMU cmd_per_lun
    case GuestDriver::vhost_scsi:
      c.inflight_limit = std::min(s.guest.cmd_per_lun, 1024);
      break;  // vhost-scsi: 1024 per device
    case GuestDriver::scsi_hba:
      c.inflight_limit = s.guest.hba_queue_depth;
      break;
    default:
      c.inflight_limit = 0;
  }
  return c;
}

GuestDriverLimit::GuestDriverLimit(sim::Simulator& sim, std::string vm, int limit)
    : Stage(sim, std::move(vm), "guest.driver"), limit_(&sim.make<sim::TokenPool>(local("guest.lun_limit"), limit)) {
  sim::connect(limit_->acquired, *this, kGranted);
  sim::connect(limit_->released, *this, kReleased);
}

std::uint64_t hba_bounce_bytes(const IoScenario& s) {
  return s.guest.driver == GuestDriver::scsi_hba ? s.guest.hba_bounce_bytes : 0;
}

int hba_chunks(std::uint64_t bounce_bytes, double bytes) {
  if (bounce_bytes == 0) return 1;
  return std::max(1, static_cast<int>(std::ceil(bytes / static_cast<double>(bounce_bytes))));
}

void GuestDriverLimit::connected(const sim::Port& port) {
  if (&port == &granted) sim::connect(limit_->acquired, *port.to, port.in_port);
  if (&port == &released) sim::connect(limit_->released, *port.to, port.in_port);
}

void GuestDriverLimit::accept(sim::JobId job, int in_port) {
  switch (static_cast<In>(in_port)) {
    case kSubmit:
      limit_->accept(job, sim::TokenPool::kAcquire);
      break;
    case kGranted:
      granted.send(job);
      break;
    case kRelease:
      limit_->accept(job, sim::TokenPool::kRelease);
      break;
    case kReleased:
      released.send(job);
      break;
  }
}

void GuestDriverLimit::validate() const {
  sim::require_connected(*this, granted, "granted");
  sim::require_connected(*this, released, "released");
}

void GuestDriverLimit::stations(std::vector<StageInfo>& out) const { out.push_back({limit_->name(), "guest", limit_->tokens()}); }

void GuestDriverLimit::draw(StageGraph& g) const { g.nodes.push_back({limit_->name(), "guest", "pool", limit_->tokens()}); }

std::vector<PortEnd> GuestDriverLimit::entry(int) const { return {{limit_->name(), ""}}; }

std::vector<PortEnd> GuestDriverLimit::exits(const sim::Port& port) const {
  return {{limit_->name(), &port == &granted ? "submit" : "release"}};
}

// The scenario keys of the guest driver (models/param.h: how a key is declared).
void guest_driver_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  add({"guest.driver",
       Kind::choice,
       "",
       "virtio-blk",
       "docs/sources.md §2",
       "guest disk driver; none = bare metal (no virtualization stages)",
       {"virtio-blk", "virtio-scsi", "vhost-scsi", "vhost-user-blk", "scsi-hba", "none"},
       0,
       0,
       [](IoScenario& s, const Value& v) {
         s.guest.driver = pick<GuestDriver>({"virtio-blk", "virtio-scsi", "vhost-scsi", "vhost-user-blk", "scsi-hba", "none"},
                                            {GuestDriver::virtio_blk, GuestDriver::virtio_scsi, GuestDriver::vhost_scsi,
                                             GuestDriver::vhost_user_blk, GuestDriver::scsi_hba, GuestDriver::none},
                                            v.word);
       }});
  add({"guest.driver_submit_us",
       Kind::time_us,
       "us",
       "by driver",
       "[I] docs/sources.md §2; seed 000 guest CPU",
       "driver vCPU time per submit (virtio-blk 1.5, virtio-scsi 3.5, scsi-hba 6, bare metal nvme 0.5)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.driver_submit_ns = v.number; },
       [](const IoScenario& s) { return models::driver_costs(s).submit_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.driver_complete_us",
       Kind::time_us,
       "us",
       "by driver",
       "[I] docs/sources.md §2",
       "driver vCPU time per completion (virtio-blk 1.0, virtio-scsi 3.0, scsi-hba 5, bare metal 0.5)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.driver_complete_ns = v.number; },
       [](const IoScenario& s) { return models::driver_costs(s).complete_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.cmd_per_lun",
       Kind::integer,
       "",
       "128",
       "QEMU hw/scsi/virtio-scsi.c cmd_per_lun",
       "virtio-scsi commands in flight per LUN",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.guest.cmd_per_lun = static_cast<int>(v.number); }});
  add({"guest.hba_queue_depth",
       Kind::integer,
       "",
       "16",
       "[I]",
       "commands in flight on an emulated SCSI HBA (LSI)",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.guest.hba_queue_depth = static_cast<int>(v.number); }});
  add({"guest.hba_bounce",
       Kind::size,
       "bytes",
       "128k",
       "QEMU hw/scsi/scsi-disk.c SCSI_DMA_BUF_SIZE; hw/scsi/lsi53c895a.c lsi_scsi_info (no get_sg_list)",
       "an emulated SCSI HBA without scatter-gather (LSI): QEMU's scsi-disk moves a request through a bounce buffer "
       "of this size, one device command per chunk, each issued when the HBA has copied the one before; 0 = the "
       "HBA passes scatter-gather lists (one command per request)",
       {},
       0,
       1 << 30,
       [](IoScenario& s, const Value& v) { s.guest.hba_bounce_bytes = static_cast<std::uint64_t>(v.number); }});
}

}  // namespace vqsim::models
