// Guest driver stage: what the disk's driver adds to each request on the guest vCPU, and the
// limits it puts on requests in flight. virtio-blk is the baseline; virtio-scsi adds the SCSI
// midlayer on both sides (guest sd/scsi_mod, QEMU scsi-disk); an emulated SCSI HBA (LSI) adds
// register-level emulation; bare metal has the host's own NVMe/AHCI driver and no virtqueue.
#pragma once

#include "models/scenario.h"

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

}  // namespace vqsim::models
