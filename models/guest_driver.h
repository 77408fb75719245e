// Guest driver stage: what the disk's driver adds to each request on the guest vCPU, and the
// limits it puts on requests in flight. virtio-blk is the baseline; virtio-scsi adds the SCSI
// midlayer on both sides (guest sd/scsi_mod, QEMU scsi-disk); an emulated SCSI HBA (LSI) adds
// register-level emulation; bare metal has the host's own NVMe/AHCI driver and no virtqueue.
#pragma once

#include <vector>

#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/token_pool.h"

namespace vqsim::models {

struct DriverCosts {
  double submit_ns;        // guest vCPU per request, driver part of the submit path
  double complete_ns;      // guest vCPU per request, interrupt handler + driver completion
  double emu_submit_ns;    // host emulation thread per request (pop, parse, submit)
  double emu_complete_ns;  // host emulation thread per request (complete, push, notify)
  int inflight_limit;      // requests the driver/device accepts at once (0 = no extra limit)
  bool has_virtqueue;      // kicks and interrupts go through a virtqueue
  bool uses_qemu_thread;   // served by QEMU's main loop / IOThread (not a vhost worker)
};

// The driver's costs: scenario overrides where given, else the driver's defaults.
DriverCosts driver_costs(const IoScenario& s);

// QEMU's scsi-disk moves data through a bounce buffer of guest.hba_bounce bytes (SCSI_DMA_BUF_SIZE,
// 128 KiB) when the HBA gives it no scatter-gather list, as the emulated LSI (scsi-hba) does not:
// each chunk is a read or write of its own, issued when the HBA has copied the one before
// (scsi_read_data, scsi_write_complete). The buffer's size for such an HBA; 0 for every other
// driver, which hands the device the whole request.
std::uint64_t hba_bounce_bytes(const IoScenario& s);
// The device commands a request of `bytes` takes through a bounce buffer of `bounce_bytes` (0: one).
int hba_chunks(std::uint64_t bounce_bytes, double bytes);

// The stage, where the driver limits requests in flight (virtio-scsi's cmd_per_lun, vhost-scsi,
// an emulated HBA's queue depth): a request holding its tag waits for one of
// "guest.lun_limit"'s tokens before its submit work, and returns it after its completion work.
// Drivers without such a limit have no stage of their own on the path: their costs are paid by
// the guest threads (guest_cpu.h) and the host threads (emulation_thread.h).
class GuestDriverLimit final : public Stage {
 public:
  enum In : int { kSubmit, kRelease, kGranted, kReleased };
  GuestDriverLimit(sim::Simulator& sim, std::string vm, int limit);

  sim::Port granted;   // on to the guest threads' submit work
  sim::Port released;  // back to the block layer, to return the tag

  void accept(sim::JobId job, int in_port) override;
  void validate() const override;
  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;
  void connected(const sim::Port& port) override;

 private:
  sim::TokenPool* limit_;
};

// The scenario keys of the guest driver.
void guest_driver_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
