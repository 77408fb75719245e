// The I/O-path scenario: every knob of the modelled path, declared once in a parameter table
// (key, unit, default, source, one-line doc) that drives TOML validation, `--set`, the error
// messages and docs/scenario.md. Values become ns, bytes and plain counts here, at load; the
// stage models only ever see the typed IoScenario.
//
// The dotted keys (workload.rw, guest.driver, host.iothreads, …) are stable: manifests, sweeps
// and calibrated scenarios name them. Where each default comes from: docs/sources.md.
// A scenario may name `base = "other.toml"` (loaded first, then overlaid) and
// `workload.fio_job = "x.fio"` (a fio job file whose options fill the workload keys that the
// scenario does not set itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/time.h"

namespace vqsim::models {

enum class Direction : std::uint8_t { read = 0, write = 1 };
const char* direction_name(Direction d);

enum class GuestDriver { virtio_blk, virtio_scsi, vhost_scsi, vhost_user_blk, scsi_hba, none };
enum class Aio { threads, native, io_uring };
// How QEMU's virtio-blk handler submits the requests it pops in one notification.
enum class VirtioBlkBatching { none, writes, all };
enum class CacheMode { none, writeback, writethrough, directsync, unsafe };
// How QEMU runs the guest's vCPUs: hardware virtualization, or TCG's binary translation.
enum class Accel { kvm, tcg };
// Whether an interrupt also takes the completions that arrive while its handler drains the ring
// (virtqueue.handler_window): by the accelerator (on under TCG, where the lab measured it), or set.
enum class HandlerWindow { by_accel, on, off };
enum class BackendKind { nvme, sata_ssd, hdd, md_raid1, ceph_rbd, krbd, pagecache, null };
enum class FioEngine { psync, libaio, io_uring };
enum class BlockPath { mq, request, bio };

const char* driver_name(GuestDriver d);
const char* aio_name(Aio a);
const char* cache_name(CacheMode c);
const char* accel_name(Accel a);
const char* backend_name(BackendKind b);

// One fio job description (all numjobs clones share it).
struct WorkloadParams {
  bool random = true;
  double read_fraction = 1.0;   // from rw and rwmixread
  std::string rw = "randread";  // as fio spells it
  std::uint64_t bs_read_bytes = 4096, bs_write_bytes = 4096;
  int iodepth = 1;  // requested; psync/sync run at depth 1 whatever it says (as fio does)
  int numjobs = 1;
  int rwmixread = 50;
  FioEngine ioengine = FioEngine::libaio;
  std::string ioengine_name = "libaio";
  int iodepth_batch_submit = 1;  // at most the depth in flight, as fio caps it
  // fio reaps with io_getevents(min, max): it waits for `min` completions, takes at most `max`
  // (never fewer than min), then refills the queue (backend.c wait_for_completions).
  int iodepth_batch_complete_min = 1, iodepth_batch_complete_max = 1;
  bool direct = true;  // O_DIRECT in the guest; the model simulates direct I/O only
  double thinktime_ns = 0;
  double rate_iops = 0;         // per job; 0 = closed loop
  sim::time_ns runtime_ns = 0;  // measured time; 0 = use ios
  sim::time_ns ramp_time_ns = 0;
  std::uint64_t ios = 0;  // measured I/Os per replication (when runtime is 0)
  std::string fio_job;    // the job file it came from, if any
  // fio's filename= as the job file writes it ("/dev/vdb"; a colon-separated list in fio) and
  // where ("file:line"; the job's section when it is inherited): in a VM of several disks it
  // names the disk the job drives, which the loader resolves to `disk`.
  std::string filename, filename_where;
  int disk = 0;  // the VM's disk (IoScenario::disks) this job's I/Os go to
  int effective_depth() const { return ioengine == FioEngine::psync ? 1 : iodepth; }
  // The mean bytes of an I/O over the read/write mix.
  double mean_bytes() const {
    return read_fraction * static_cast<double>(bs_read_bytes) + (1 - read_fraction) * static_cast<double>(bs_write_bytes);
  }
};

// Guest: vCPUs, block layer, driver. CPU costs are per request, on the submitting vCPU.
struct GuestParams {
  int vcpus = 2;
  GuestDriver driver = GuestDriver::virtio_blk;
  int num_queues = 0;    // 0 = vcpus (QEMU >= 5.2 default)
  int queue_size = 256;  // virtqueue size = blk-mq tags per hw queue
  std::string scheduler = "none";
  BlockPath block_path = BlockPath::mq;
  double fio_submit_ns = 3000, fio_complete_ns = 2500;  // fio + syscalls + block layer
  double fio_outside_ns = 1500;   // of those, fio's work outside its latency (accounting, the next I/O's preparation)
  double scheduler_ns = 1000;     // extra per request with an I/O scheduler
  double per_page_ns = 95;        // per 4 KiB page of an I/O beyond its first: pinning, releasing, dirtying
  double request_path_ns = 1000;  // extra per request on the legacy request-based path
  double wake_ns = 0;             // a completion that finds its fio thread asleep: the vCPU's wake-up and the switch back to fio
  double halt_after_ns = 0;       // from fio's blocking wait to the vCPU's halt: a completion sooner costs no wake-up
  bool fio_submit_first = true;   // fio's thread submits a freed slot's I/O before the completions waiting on it
  double driver_submit_ns = -1, driver_complete_ns = -1;  // -1 = the driver's default
  int cmd_per_lun = 128;                                  // virtio-scsi
  int hba_queue_depth = 16;                               // emulated SCSI HBA
  std::uint64_t hba_bounce_bytes = 128 * 1024;    // emulated SCSI HBA without scatter-gather: QEMU's bounce buffer (0: none)
  std::uint64_t max_request_bytes = 1280 * 1024;  // largest request after merging (max_sectors_kb)
  double cpu_cv = 0.5;                            // coefficient of variation of CPU costs
  double cpu_scale = 1;                           // multiplies every guest vCPU cost (a slower or faster guest CPU)
};

// Virtqueue notification mechanics.
struct VirtqueueParams {
  double kick_exit_ns = 1500;    // vCPU time of the notify VM exit
  double wakeup_ns = 8000;       // eventfd wake-up of a sleeping host thread
  double irq_ns = 2000;          // irqfd -> MSI injection -> guest handler entry
  double irq_handler_ns = 1000;  // guest vCPU time per interrupt (shared by the completions it delivers)
  bool event_idx = true;         // kicks suppressed while the host thread is busy
  HandlerWindow handler_window = HandlerWindow::by_accel;
  bool handler_preempts = false;  // with the handler's window: the handler stops the vCPU's work while it runs
};

struct HostParams {
  int iothreads = 0;  // 0 = the QEMU main loop
  Aio aio = Aio::threads;
  CacheMode cache = CacheMode::none;
  int cores = 0;                                    // 0 = every thread has its own core
  double poll_max_ns = 32768;                       // IOThread adaptive polling window (0 = off)
  bool poll_adaptive = true;                        // the window follows QEMU's adjustment (aio_poll), not fixed at its max
  double emu_submit_ns = -1, emu_complete_ns = -1;  // -1 = the driver's default
  double main_loop_ns = 1500;                       // extra per request in the main loop (BQL, other handlers)
  double loop_wake_ns = 0;                          // an emulation thread's CPU per wake from its poll (a sleeping thread)
  double tcg_irq_relay_ns = 10.7e3;                 // TCG + IOThread: the main loop's CPU per interrupt it relays (no irqfd)
  bool tcg_bql = true;  // TCG: the vCPU takes the big QEMU lock to kick and to take an interrupt; the main loop's pass holds it
  bool drain_ring = true;           // the device's handler pops its whole ring before other work (EmulationThread::drain_ring)
  bool tcg_irq_stall = true;        // TCG: an interrupt raised in the lock holder's pass stops the vCPU when it comes
  bool tcg_relay_in_pass = true;    // TCG + IOThread: the relay raises the interrupt first, then ends its pass with the lock
  double sched_slice_ns = 0;        // host scheduler's slice: a relay woken while every core is held waits up to it (0 = off)
  double main_loop_timer_ns = 1e6;  // the main loop's timers run at whole multiples of this (glib's ms timeout)
  double emu_per_page_ns = 100;     // emulation thread, per 4 KiB page of a request beyond the first (descriptor mapping)
  int thread_pool_max = 64;
  double threads_handoff_ns = 5000;  // worker wake-up and completion bottom half, each way (one way on a page-cache hit)
  double native_submit_ns = 1000;    // io_submit per request (batched)
  double io_uring_submit_ns = 700;
  double vhost_worker_ns = 2000;   // kernel vhost worker per request
  double vhost_user_ns = 1000;     // user-space vhost-user-blk backend per request (polling)
  double pagecache_hit_ratio = 0;  // reads served from the host page cache (non-O_DIRECT modes)
  double pagecache_ns = 1500;      // memcpy of a 4 KiB page plus syscall
  double cpu_cv = 0.5;
  double cpu_scale = 1;  // multiplies every host CPU cost of QEMU, vhost and librbd
  Accel accel = Accel::kvm;
  double tcg_cpu_scale = 3.5;      // under TCG, multiplies every guest vCPU cost (on top of guest.cpu_scale)
  double tcg_irq_ns = 15e3;        // under TCG, the vCPU thread's CPU per interrupt (virtqueue.interrupt_cost_ns)
  double tcg_wake_ns = 54e3;       // under TCG, the vCPU thread's CPU per wake-up from a halt
  double tcg_lock_wake_ns = 18e3;  // under TCG, the vCPU thread's CPU per wake-up from a wait for the BQL
  double tcg_vcpu_busy = 0.17;     // under TCG, share of each vCPU thread's wall time spent on work no request causes
  VirtioBlkBatching virtio_blk_batching = VirtioBlkBatching::none;
  std::string qemu_version;  // as stated; it drives the version-dependent defaults (docs/scenario.md)
};

struct BackendParams {
  BackendKind kind = BackendKind::nvme;
  double latency_ns = 10000;  // null device
  bool null_co = false;       // the null device is QEMU's null-co: its latency is a timer of the disk's event loop
  int channels = -1;          // parallel service units; -1 = the kind's default
  double read_ns = -1, write_ns = -1, flush_ns = -1;  // per-request device time at 4 KiB
  double bandwidth_bytes_per_s = -1;                  // whole device, sequential
  double write_bandwidth_bytes_per_s = -1;            // writes, when they differ (-1 = bandwidth)
  double service_cv = 0.3;
  // HDD
  double seek_ns = 8500000, rpm = 7200;
  double seq_overhead_ns = 20000;  // per sequential request: command overhead, track switches
  int ncq_depth = 32;
  // nvme, sata-ssd: the device serves its queue in batches, one request after another at batch_ns
  // after the first, completing the batch together (false: `channels` in parallel).
  bool batched = false;
  double batch_ns = 6000;
  // md RAID1
  BackendKind leg = BackendKind::sata_ssd;
  // Ceph RBD / krbd
  double rtt_ns = 200000;
  int osd_slots = 32;
  double osd_read_ns = 1000000, osd_write_ns = 2000000;
  double osd_stall_ratio = 1e-4;  // share of ops that stall after the OSD (sync, slow ops)
  double osd_stall_ns = 100e6;    // mean of such a stall (exponential)
  int msgr_threads = 1;           // librbd messenger threads inside QEMU
  double msgr_ns = 15000;         // per op on a messenger thread
  int replicas = 3;
};

struct RunParams {
  std::uint64_t seed = 1;
  int replications = 5;
  bool hash_events = false;  // not a key: `vqsim run --event-hash` (golden runs) asks for it
};

// A calibrated scenario's parameter uncertainty (`vqsim calibrate` writes it as [calibration]):
// the fitted keys, whose values are the scenario's own, are log-normal with these standard
// deviations of ln(value) and this correlation. `vqsim run` samples it for prediction intervals.
struct CalibrationUncertainty {
  std::vector<std::string> keys;
  std::vector<double> values;  // in each key's unit, as written in the file
  std::vector<double> log_sd;
  std::vector<std::vector<double>> log_corr;  // keys.size() square, symmetric, unit diagonal
  std::vector<bool> fixed_by_set;             // the key was given by --set: not sampled
  int draws = 24;                             // parameter draws per prediction
  std::string source;                         // what it was fitted on, for the report
  // The model's own error: the sd of ln(model / measured) per figure kind ("throughput", "mean
  // latency", "p50", "p99", "p99.9"; models/io_metrics.h figure_kind), for setups the calibration
  // did not measure (model_error: another configuration), for another workload of a configuration
  // it measured at a depth it measured it at (model_error_workload), for a configuration it
  // measured at other depths or jobs (model_error_depth), for a new combination of the
  // configuration values it measured (model_error_combination) and for the setups it measured
  // (model_error_fitted).
  // Empty in a file written before vqsim estimated them: predictions then use the documented
  // prior (calibration/predict/prediction.h); a new combination without its own term takes
  // another configuration's.
  std::map<std::string, double> model_error_log_sd, model_error_workload_log_sd, model_error_fitted_log_sd,
      model_error_combination_log_sd, model_error_depth_log_sd;
  std::string model_error_source;
  std::vector<std::string> fitted_setups;  // setup_signature() of each fitted run
  // Mixture components, each the values of `keys` there, in each key's unit (`mode_weights`
  // their shares; the fitted values have the rest): written by this version, calibrate's
  // parameter draws themselves (log_sd 0: each a point); in older files, other explanations the
  // data fit about as well (calibrate's multi-start). Parameter draws take their centres in turn from `values` and each mode
  // (calibration/predict/prediction.h; docs/calibration.md, FIT.toml's [calibration] table).
  std::vector<std::vector<double>> modes;
  std::vector<double> mode_weights;  // each mode's share of the draws (the estimate has the rest); empty: equal shares
  bool present() const { return !keys.empty(); }
  // The component draw d (of `draws`) is centred on: 0 the fitted values, i > 0 mode i - 1.
  // Stratified: draw d stands at (d + 0.5) / draws of the cumulative shares, the fitted values
  // first.
  std::size_t component_of_draw(int d, int draws) const;
  const std::vector<double>& centre(std::size_t component) const { return component == 0 ? values : modes[component - 1]; }
};

struct VmProfile;

// One [[vm.disk]] of a VM: its own virtio-blk device in the guest (its own blk-mq tags, its own
// virtqueues and interrupts) and in QEMU (its own AIO state), on the backend it
// names; the VM's vCPUs and its QEMU threads (main loop or IOThreads) serve every disk of it.
inline constexpr std::size_t kMaxDisks = 16;  // [[vm.disk]] tables per VM (IoRequest::disk is a byte)
struct DiskSpec {
  std::string name;      // the guest's name for it, by position as Linux's virtio_blk names disks: vda, vdb, ...
  std::string filename;  // what a fio job writes to drive it (filename=): "/dev/<name>" unless the table says otherwise
  std::string backend;   // the [[backend]] it names; "" = the file's one [backend] table
  BackendParams params;  // that device's parameters (one device: the same for every disk naming it)
  int iothread = -1;     // the IOThread its queues are on (QEMU -device virtio-blk-pci,iothread=); -1 = the VM's mapping
  std::string where;     // "file:line" of its [[vm.disk]] table ("" for the implicit one disk)
};

// One job (section) of a fio job file with several jobs, as the VM runs it: its numjobs threads
// share the VM's vCPUs, queues and QEMU process with the other jobs' threads.
struct FioJob {
  std::string name;   // the section's name (or name=): its figures are <job>.read.iops, ...
  std::string where;  // "file:line" of its section
  int phase = 0;      // stonewall group: phase 0 runs first, each phase after the previous one ended
  int group = 0;      // fio's reporting group (groupid: stonewall or new_group opens one)
  WorkloadParams workload;
};

struct IoScenario {
  std::string path;
  std::string description;
  RunParams run;
  WorkloadParams workload;
  GuestParams guest;
  VirtqueueParams vq;
  HostParams host;
  BackendParams backend;
  // vm.count: identical VMs of this profile on one host: each its own QEMU process, guest and
  // disk; they share host.cores and the backend device.
  int vms = 1;
  // A file of [[vm]] tables: each VM profile, in file order, with its own scenario (its workload,
  // guest, QEMU process and the parameters of the backend its disk names); the fields above are
  // then those of the first profile, and `run`, host.cores and the host page cache are shared.
  // Empty for a single-VM file.
  std::vector<VmProfile> profiles;
  // The [[backend]] tables' names, in file order (empty: the file's one [backend] table).
  std::vector<std::string> backend_names;
  // A fio job file with several jobs (workload.fio_job): every job, in file order, each with its
  // own workload (the scenario's own workload.* keys apply to every job); `workload` above is
  // then the first job's. Empty for one job, whether from a job file or the workload keys.
  // The scenario a simulation runs holds the jobs of one phase (phase_scenario).
  std::vector<FioJob> jobs;
  // A [[vm]] profile's disks ([[vm.disk]] tables; the first is the one a single-VM file has,
  // its `params` are `backend` above); empty for a single-VM file and a VM without [[vm.disk]]
  // tables. Every job's workload.disk indexes it.
  std::vector<DiskSpec> disks;
  std::vector<std::string> notes;  // e.g. fio job options that are not modelled
  // Setups the loader accepts the way fio or QEMU would, but that probably say something other
  // than what was meant (psync at iodepth 32, rwmixread on a pure direction): the commands print
  // each as "vqsim: warning: ..." and list them in JSON "warnings".
  std::vector<std::string> warnings;
  CalibrationUncertainty calibration;
  bool bare_metal() const { return guest.driver == GuestDriver::none; }
  // What every guest vCPU cost is multiplied by: the guest CPU's own scale, times TCG's
  // emulation when the vCPUs are translated rather than run by KVM.
  double guest_cpu_factor() const { return guest.cpu_scale * (host.accel == Accel::tcg ? host.tcg_cpu_scale : 1.0); }
  int queues() const { return guest.num_queues > 0 ? guest.num_queues : guest.vcpus; }
  bool multi_vm() const { return !profiles.empty(); }
  bool multi_job() const { return !jobs.empty(); }
  bool multi_disk() const { return disks.size() > 1; }
  // The fio threads the VM runs: every job's numjobs together (workload.numjobs for one job).
  int fio_threads() const;
};

// One [[vm]] table: `count` identical VMs of one profile, whose disk names a backend.
struct VmProfile {
  std::string name;
  int count = 1;        // 0 when an edit (--set vm.<name>.count=0) switches the profile off
  std::string backend;  // the [[backend]] its (first) disk names; "" = the file's one [backend] table
  IoScenario scenario;  // one VM of the profile alone (scenario.vms = count)
};

// One VM on the host: replica `replica` of profile `profile`, the `index`-th VM built.
struct VmInstance {
  int profile = 0, replica = 0, index = 0;
  std::string prefix;  // of its component and figure names: "" for the first VM, then "vm<i>." (vm.count)
                       // or "<name>." and "<name>.<i>." ([[vm]] tables)
};
// Every VM a scenario puts on the host, profile by profile.
std::vector<VmInstance> vm_instances(const IoScenario& s);
// The scenario of instance i's profile (the scenario itself for a single-VM file).
const IoScenario& profile_scenario(const IoScenario& s, const VmInstance& i);
// The prefix of the figures of profile p of a [[vm]] file (those of its first VM).
std::string vm_profile_prefix(const IoScenario& s, std::size_t p);
// The prefix, after its VM's prefix, of one disk's figures in a VM of several disks
// ("disk:vdb.read.iops") and of the components of every disk but the first (which keep a
// one-disk VM's names and random streams). The colon keeps them apart from any VM's and
// backend's prefix (those names have none).
std::string disk_prefix(const DiskSpec& d);

// Stonewall groups ("phases"): a job file's jobs before its first `stonewall` job are phase 0,
// and so on; fio starts a phase's jobs once every job of the previous one has finished. The
// number of phases of a scenario (every VM profile's job file; 1 without stonewall), and the
// scenario that phase `k` runs: only that phase's jobs (`workload` the first of them, the
// ramp the longest of theirs); a [[vm]] profile whose job file has fewer phases is switched off
// in it (its fio has finished). A scenario of one phase is returned as it is; the one returned
// is of one phase (its jobs' `phase` is 0).
int scenario_phases(const IoScenario& s);
IoScenario phase_scenario(const IoScenario& s, int k);
// The prefix of a job's figures ("fio:<job>."), after its VM's prefix: "fio:reader.read.iops",
// "db.fio:reader.read.iops". The colon keeps them apart from any VM's prefix (VM names have none).
std::string job_metric_prefix(const std::string& job);

// The declared key a scenario key stands for: vm.<name>.<section>.<key> is <section>.<key> of
// one [[vm]], vm.<name>.count is vm.count, backend.<name>.<key> is backend.<key> of one
// [[backend]]; any other key is itself. Whether that VM or backend exists is the scenario's to say.
std::string declared_key(const std::string& key);

// Reads a scenario file (with its `base` chain and `workload.fio_job`), applies `--set` style
// overrides ("key=value"), validates. Throws ConfigError ("file:line: key: message"), with every
// error the file has (unknown keys, wrong types, bad values, contradictions), one per line.
IoScenario load_io_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

// A scenario file read once (its `base` chain parsed and kept in memory) that takes edits:
// what calibrate, predict, plan and sweep use instead of reading the file again for every
// parameter value. `set` is checked against the key's declaration (an unknown key, or a number
// for a text key, throws ConfigError at once; values out of range when the scenario is made) and
// `scenario()` derives exactly as load_io_scenario does with the same edits as --set overrides:
// the CPU scales, rwmixread before rw, the defaults by driver and by kind, the version rules
// and the cross-key checks all run again on the edited entries. Copies share the parsed files.
class ScenarioSource {
 public:
  explicit ScenarioSource(const std::string& path);
  // "key=value", the --set form (a text key takes the rest of the line as it is).
  ScenarioSource& set(const std::string& key_equals_value);
  // A number, as a file would write it (an integer key gets a TOML integer).
  ScenarioSource& set(const std::string& key, double value);
  IoScenario scenario() const;
  const std::string& path() const noexcept { return path_; }

 private:
  struct Parsed;
  Parsed& writable();
  std::string path_;
  std::shared_ptr<Parsed> parsed_;
};

// The configuration keys setup_signature holds (besides the workload's): a --set or manifest
// `set` of any other key outside workload.* and run.* changes the setup in a way the signature
// does not show (calibrate's and run's distances look at those separately).
const std::vector<std::string>& setup_signature_keys();
// The same keys with the field name each has in the signature ("driver" -> guest.driver, "qemu"
// -> host.qemu_version, ...), in the signature's order.
const std::vector<std::pair<std::string, std::string>>& setup_signature_fields();

// The knobs that make one measured setup another (driver, vCPUs, queues, IOThreads, aio, cache,
// device, rw and its mix, block sizes, engine, iodepth, jobs, rate, QEMU version) as one line
// "key=value;...": two scenarios with the same signature are the same setup for the model-error
// terms, whatever else (fitted costs, run length) differs. `with_depth` false leaves out iodepth
// and numjobs (the same setup at another depth).
std::string setup_signature(const IoScenario& s, bool with_depth = true);

// Whether `key` is a scenario key that takes a plain number (what calibration can fit).
bool is_numeric_io_key(const std::string& key);
// `value` (in the key's unit, as written in a file) clamped to the range the loader accepts for
// `key` (unchanged for keys without a numeric range).
double clamp_to_key_range(const std::string& key, double value);

// The keys calibration can fit (each declares how its value is read back), sorted.
const std::vector<std::string>& io_fittable_keys();
// A fittable key's value in its unit as the model uses it: costs without the CPU scale they
// are stored multiplied by, device figures resolved by kind. std::invalid_argument otherwise.
double io_parameter_value(const IoScenario& s, const std::string& key);

// The scenario keys a TOML `--set` may name (for did-you-mean in other tools).
std::vector<std::string> io_scenario_keys();
// What is wrong with a value for `key` (written as TOML: 4, "4k", true), as a scenario file
// would be told ("unknown key (did you mean ...)", "expected a whole number, got \"deep\"",
// "value 0 is out of range [1, 65536]"), or "" when it is fine. One key alone: the combinations
// a whole scenario is checked for are not.
std::string io_scenario_value_error(const std::string& key, const std::string& value_toml);

// True when the TOML file is an I/O-path scenario (it is not a generic [[station]] network).
bool is_io_scenario_file(const std::string& path);

// The parameter table, for docs and --help: key, unit, default, source, doc.
struct ParamDoc {
  std::string key, unit, default_text, source, doc;
  std::vector<std::string> choices;  // the values an enumerated or boolean key takes; empty for the rest
};
std::vector<ParamDoc> io_scenario_parameters();

// Markdown table of every key (docs/scenario.md is generated from it by `vqsim keys --markdown`).
std::string io_scenario_markdown();

}  // namespace vqsim::models
