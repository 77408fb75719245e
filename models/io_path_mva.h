// The I/O path by mean-value analysis: the same stages as the simulation (io_path.h), each
// reduced to its mean demand per I/O, solved as a closed network of numjobs x iodepth
// customers (exact MVA with load-dependent multi-server stations), or, for open-loop rate_iops,
// as an open network (R = D / (1 - U)). Means only, in milliseconds; for sweeps and searches.
//
// With vm.count = K identical VMs the per-VM stations are copied K times and visited with
// probability 1/K each (one class); iops and latencies are one VM's, total_iops the host's.
//
// What it approximates (and the DES does not): state-dependent kicks and wake-ups are weighted
// by the probability that the host thread is asleep, found by a fixed point on its utilization;
// token limits (tags, AIO workers) are ignored unless they are the only servers; a fork-join
// mirror is two stations each visited by every write; flushes are pure delays; NCQ
// reordering is ignored. What it leaves out: virtio-blk's notification batching
// (host.virtio_blk_batching), whose hold depends on the ring's state; calibration's DES anchor
// corrects for it.
#pragma once

#include <string>
#include <vector>

#include "models/scenario.h"

namespace vqsim::models {

struct IoMvaStage {
  std::string name;
  double residence_ns = 0;  // per I/O
  double utilization = 0;   // per server
  double number_mean = 0;
  double demand_ns = 0;  // per I/O, all visits
  double wait_ns = 0;    // of demand_ns, per I/O: waiting for a lock, off CPU
  double wakes = 0;      // per I/O: the times the station's thread is woken (MvaDemand::wakes)
};

struct IoMvaResult {
  double iops = 0;        // all directions, one VM's
  double total_iops = 0;  // the host's: every VM of vm.count
  double read_iops = 0, write_iops = 0;
  double lat_mean_ns = 0;  // fio's lat
  double slat_mean_ns = 0;
  double clat_mean_ns = 0;
  std::vector<IoMvaStage> stages;
  // Per I/O, one VM's vCPUs' way into their halts (guest.halt_after_us): their CPU, on no
  // station (no request waits on it); cpu.vcpus_us_per_io holds it.
  double vcpu_halt_path_ns = 0;
  double interrupts_per_io = 0;  // the guest's interrupts (count.interrupts_per_io)
  std::string bottleneck;
  bool open_loop = false;
  bool saturated = false;  // open loop beyond capacity
};

// A VM of several disks ([[vm.disk]] tables) throws std::invalid_argument, here and in
// solve_io_mva_classes: the stations are one disk's path per VM. A job file of several jobs is
// solved here as its first job (what a run-size estimate needs); every answer that users see
// goes through solve_io_mva_classes, one class per job.
IoMvaResult solve_io_mva(const IoScenario& s);

// Several VM profiles on one host ([[vm]] tables), or VMs of several fio jobs: multi-class MVA
// (sim/mva_classes.h), one class per profile and fio job, its population one VM's numjobs x
// iodepth requests of that job (as above), its demands the job's own (block size, read/write
// mix, depth), and the
// profile's `count` VMs its replicas: each VM has its own copy of the stations that are not
// shared (its fio jobs or vCPUs, virtqueue, QEMU main loop / IOThreads, AIO hand-off) and only
// its own requests visit them -- K identical classes, not one class spread over K copies as
// solve_io_mva does for vm.count (there a VM's requests could queue at another VM's thread).
// Shared by every class: each backend's stations (those of the profiles whose disk names it)
// and, with host.cores, one station "host.cpu" of host.cores servers that holds every VM's
// vCPU work and the work of its QEMU threads (the simulation's host.cpu runs both). A QEMU
// thread there also stays a one-server queue of its own: the thread is held while it runs on a
// core, so its work is counted at both (its service time twice in the latency: the price of
// keeping both its own bound and the cores' in a product-form network).
// The jobs of one VM are classes of one VM (sim::MvaClass::vm): replica r of each job runs in VM
// r and visits VM r's stations -- its vCPUs, virtqueue, QEMU main loop or IOThreads, AIO --
// shared by the VM's jobs; each job's fio threads are stations of their own (guest.fio_job<t>,
// numbered over the VM's threads as the simulation numbers them). Stonewall groups run one after
// the other, as simulate_io runs them: each group is a network of its own.
// Exact MVA over the population lattice when it is small, Schweitzer-Bard otherwise (`method`).
// Open loop (every profile with rate_iops): the open network's formulas per class; a mix of
// open and closed profiles throws std::invalid_argument. A single-VM file is one profile.
// One fio job of a VM of several (one VM's figures; total_iops: the profile's VMs together).
struct IoMvaJob {
  std::string name;    // the job's section name
  int phase = 0;       // its stonewall group
  int population = 0;  // its requests in flight in one VM
  // stages: those its requests visit, per-VM ones with its part of one VM's utilization, shared
  // ones with its part over the profile's VMs.
  IoMvaResult figures;
};

struct IoMvaProfile {
  std::string name;    // the [[vm]] name ("" in a single-VM file)
  int count = 1;       // VMs of the profile
  int population = 0;  // requests in flight in one VM (closed loop; every job of the first group)
  // One VM's figures (total_iops: the profile's VMs together), over every job of the first
  // stonewall group (as the simulation's VM figures are); stages: those this profile's requests
  // visit, per-VM ones under the first VM's name with one VM's utilization, shared ones with
  // this profile's share of it (all its VMs); a stage's residence is the mean over its I/Os.
  IoMvaResult figures;
  std::vector<IoMvaJob> jobs;  // a VM of several fio jobs: each job, group by group; else empty
};

struct IoMvaSharedStation {
  std::string name;
  int servers = 1;
  bool delay = false;
  double utilization = 0;          // per server, every class
  std::vector<double> by_profile;  // each profile's share (all its VMs), per server
};

struct IoMvaClassesResult {
  std::vector<IoMvaProfile> profiles;      // the running ones, in file order
  std::vector<IoMvaSharedStation> shared;  // host.cpu and the backends' stations
  double total_iops = 0;                   // the host's: every VM
  double lat_mean_ns = 0;                  // over every VM's I/Os
  std::string method;                      // "exact MVA", "Schweitzer-Bard approximate MVA", "open network"
  bool exact = false;
  double lattice_points = 0;  // population vectors of the exact MVA's lattice
  int iterations = 0;
  bool converged = true;
  bool open_loop = false, saturated = false;
  std::string bottleneck;  // the busiest queueing station, shared or any VM's
  int phases = 1;          // stonewall groups; all but `jobs` above are the first group's
};

IoMvaClassesResult solve_io_mva_classes(const IoScenario& s);

}  // namespace vqsim::models
