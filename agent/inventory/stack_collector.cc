#include "agent/inventory/stack_collector.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/inventory/module_files.h"
#include "agent/inventory/unknowns.h"
#include "common/message_text.h"

namespace clustercert::agent::inventory {
namespace {

constexpr char kProcModules[] = "/proc/modules";
constexpr char kSysModule[] = "/sys/module/";
constexpr char kPeermemVersion[] = "/sys/module/nvidia_peermem/version";
constexpr char kLegacyNvMemVersion[] = "/sys/kernel/mm/memory_peers/nv_mem/version";
constexpr char kCapturedOfedInfo[] = "/clustercert-capture/ofed_info";
constexpr char kOfedInfoCommand[] = "ofed_info -s";
constexpr char kLibibverbsPrefix[] = "libibverbs.so.";
constexpr char kOsRelease[] = "/proc/sys/kernel/osrelease";
constexpr char kNvidiaModuleVersion[] = "/sys/module/nvidia/version";
constexpr char kNvidiaDriverBanner[] = "/proc/driver/nvidia/version";
constexpr char kNcclSoname[] = "libnccl.so.2";
constexpr char kNcclPrefix[] = "libnccl.so.";
constexpr size_t kMaxQuotedChars = 80;
constexpr size_t kMaxVersionChars = 64;
// /usr/lib/x86_64-linux-gnu holds a few thousand files on a full HGX image.
constexpr size_t kMaxLibraryDirEntries = 20000;
// NCCL's DMA-BUF rule: ibv_reg_dmabuf_mr needs Linux 5.12, the GPU side the
// open GPU kernel modules, which exist from driver 515 (CUDA 11.7).
constexpr int kDmaBufKernelMajor = 5;
constexpr int kDmaBufKernelMinor = 12;
constexpr int kDmaBufDriverMajor = 515;

std::string Quoted(absl::string_view text) { return QuotedText(text, kMaxQuotedChars); }

bool IsLoaded(const ProcModule& module) { return module.state.empty() || module.state == "Live"; }

const ProcModule* FindModule(const ProcModules& modules, absl::string_view name) {
  for (const auto& module : modules.modules) {
    if (module.name == name) return &module;
  }
  return nullptr;
}

// One word of printable characters, as a version file prints it.
bool IsVersionWord(absl::string_view text) {
  if (text.empty() || text.size() > kMaxVersionChars) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return absl::ascii_isgraph(static_cast<unsigned char>(c)); });
}

bool IsDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// "550.54.15": two or more runs of digits joined by dots.
bool IsDottedNumber(absl::string_view text) {
  if (text.size() > kMaxVersionChars) return false;
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  return parts.size() >= 2 && std::all_of(parts.begin(), parts.end(), IsDigits);
}

// The numbers of a dotted version, for ordering ("2.21.5" -> 2, 21, 5).
std::vector<int> VersionNumbers(absl::string_view version) {
  std::vector<int> numbers;
  for (absl::string_view part : absl::StrSplit(version, '.')) {
    int n = 0;
    numbers.push_back(absl::SimpleAtoi(part, &n) ? n : 0);
  }
  return numbers;
}

std::string BaseName(absl::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

struct NcclFound {
  std::string version;
  std::string where;  // for nccl_source
};

// The NCCL in one library folder: the file libnccl.so.2 (the soname the
// workers' loader asks for) points at, else the newest versioned file listed.
// NotFound when the folder has none.
absl::StatusOr<NcclFound> FindNcclIn(const SysfsView& view, const std::string& dir) {
  const std::string soname = absl::StrCat(dir, "/", kNcclSoname);
  const bool has_soname = view.Exists(soname);
  if (has_soname) {
    auto resolved = view.Resolve(soname);
    if (resolved.ok()) {
      auto version = NcclVersionFromLibraryName(*resolved);
      if (version.ok())
        return NcclFound{*version, absl::StrCat(soname, " -> ", BaseName(*resolved))};
    }
  }
  auto names = view.ListDirBounded(dir, kMaxLibraryDirEntries);
  if (!names.ok()) return names.status();
  std::vector<std::string> versions;
  for (const std::string& name : *names) {
    auto version = NcclVersionFromLibraryName(name);
    if (version.ok()) versions.push_back(*version);
  }
  if (versions.empty()) {
    return absl::NotFoundError(absl::StrCat(dir, ": no libnccl.so.2.<minor>.<patch>"));
  }
  std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
    return VersionNumbers(a) < VersionNumbers(b);
  });
  NcclFound found{versions.back(), absl::StrCat(dir, "/", kNcclPrefix, versions.back(),
                                                has_soname ? " (libnccl.so.2 names no version)"
                                                           : " (no libnccl.so.2 link)")};
  if (versions.size() > 1) {
    versions.pop_back();
    absl::StrAppend(&found.where, ", the newest; the folder also has ",
                    absl::StrJoin(versions, ", "));
  }
  return found;
}

bool HasStackUnknown(const v1::Stack& stack, absl::string_view field) {
  return std::any_of(stack.unknowns().begin(), stack.unknowns().end(),
                     [&](const v1::Unknown& unknown) { return unknown.field() == field; });
}

// Whether the node can hand GPU memory to the NIC as DMA-BUF, and why.
struct DmaBufVerdict {
  enum State { kAvailable, kUnavailable, kUndecided } state;
  std::string why;
};

DmaBufVerdict JudgeDmaBuf(const v1::Stack& stack, bool no_nvidia_driver,
                          absl::string_view kernel_missing, absl::string_view flavour_missing) {
  if (no_nvidia_driver) {
    return {DmaBufVerdict::kUnavailable,
            absl::StrCat("no NVIDIA kernel driver is loaded (no ", kNvidiaModuleVersion, ", no ",
                         kNvidiaDriverBanner, ", /proc/modules has no nvidia)")};
  }
  std::vector<std::string> unavailable, undecided;
  const std::string& release = stack.kernel_release();
  if (release.empty()) {
    undecided.push_back(absl::StrCat("kernel release unknown (", kernel_missing, ")"));
  } else if (auto parsed = ParseKernelRelease(release); !parsed.ok()) {
    undecided.push_back(std::string(parsed.status().message()));
  } else if (parsed->major < kDmaBufKernelMajor ||
             (parsed->major == kDmaBufKernelMajor && parsed->minor < kDmaBufKernelMinor)) {
    unavailable.push_back(absl::StrCat("kernel ", release, " < 5.12"));
  }
  const std::string& version = stack.nvidia_driver_version();
  if (stack.nvidia_driver_flavour() == "proprietary") {
    unavailable.push_back(absl::StrCat("the proprietary NVIDIA kernel module ", version,
                                       " cannot export GPU memory as DMA-BUF (only the open GPU "
                                       "kernel modules can)"));
  } else if (stack.nvidia_driver_flavour().empty()) {
    undecided.push_back(absl::StrCat("NVIDIA driver flavour unknown (", flavour_missing, ")"));
  }
  if (!version.empty() && VersionNumbers(version)[0] < kDmaBufDriverMajor) {
    unavailable.push_back(absl::StrCat("NVIDIA driver ", version, " < 515"));
  }
  if (!unavailable.empty())
    return {DmaBufVerdict::kUnavailable, absl::StrJoin(unavailable, " and ")};
  if (!undecided.empty()) return {DmaBufVerdict::kUndecided, absl::StrJoin(undecided, "; ")};
  return {DmaBufVerdict::kAvailable,
          absl::StrCat("kernel ", release, " >= 5.12 and NVIDIA open kernel module ", version,
                       ": DMA-BUF")};
}

}  // namespace

absl::StatusOr<NvidiaDriverBanner> ParseNvidiaDriverBanner(absl::string_view text) {
  constexpr absl::string_view kPrefix = "NVRM version:";
  const std::string line = FirstLine(text);
  if (!absl::StartsWith(line, kPrefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unparsable: ", Quoted(line), " (expected 'NVRM version: ...')"));
  }
  absl::string_view rest = absl::string_view(line).substr(kPrefix.size());
  NvidiaDriverBanner banner;
  size_t module_at = rest.find("Open Kernel Module");
  if (module_at != absl::string_view::npos) {
    banner.flavour = "open";
  } else if ((module_at = rest.find("Kernel Module")) != absl::string_view::npos) {
    banner.flavour = "proprietary";
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unparsable: ", Quoted(line), " names no NVIDIA kernel module"));
  }
  // The open banner puts "for x86_64" between the words and the version.
  for (absl::string_view word :
       absl::StrSplit(rest.substr(module_at), absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    if (IsDottedNumber(word)) {
      banner.version = std::string(word);
      return banner;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unparsable: ", Quoted(line), " carries no driver version"));
}

absl::StatusOr<KernelRelease> ParseKernelRelease(absl::string_view release) {
  std::vector<absl::string_view> parts = absl::StrSplit(release, absl::MaxSplits('.', 2));
  KernelRelease parsed;
  if (parts.size() >= 2 && parts[0].size() <= 4 && IsDigits(parts[0]) &&
      absl::SimpleAtoi(parts[0], &parsed.major)) {
    // The minor's digits end at the next '.', '-' or '+' ("12-rc1" in "5.12-rc1").
    absl::string_view minor = parts[1];
    size_t digits = 0;
    while (digits < minor.size() && digits < 4 &&
           absl::ascii_isdigit(static_cast<unsigned char>(minor[digits]))) {
      ++digits;
    }
    if (digits > 0 && absl::SimpleAtoi(minor.substr(0, digits), &parsed.minor)) return parsed;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("kernel release ", Quoted(release), " has no <major>.<minor>"));
}

absl::StatusOr<std::string> NcclVersionFromLibraryName(absl::string_view file_name) {
  auto slash = file_name.rfind('/');
  if (slash != absl::string_view::npos) file_name.remove_prefix(slash + 1);
  if (absl::StartsWith(file_name, kNcclPrefix)) {
    absl::string_view version = file_name.substr(sizeof(kNcclPrefix) - 1);
    std::vector<absl::string_view> parts = absl::StrSplit(version, '.');
    if (parts.size() == 3 && parts[0] == "2" && IsDigits(parts[1]) && IsDigits(parts[2]) &&
        version.size() <= kMaxVersionChars) {
      return std::string(version);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Quoted(file_name), " is not libnccl.so.2.<minor>.<patch>"));
}

ProcModules ParseProcModules(absl::string_view text) {
  ProcModules parsed;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    ProcModule module;
    // name, size, refcount, dependencies, state, address; very old kernels stop after the size.
    if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &module.size_bytes)) {
      parsed.bad_lines.push_back(absl::StrCat("line ", line_number, ": ", Quoted(line)));
      continue;
    }
    module.name = std::string(fields[0]);
    if (fields.size() >= 5) module.state = std::string(fields[4]);
    parsed.modules.push_back(std::move(module));
  }
  return parsed;
}

absl::StatusOr<std::string> ParseOfedInfo(absl::string_view text) {
  std::string line = FirstLine(text);
  if (line.empty()) return absl::InvalidArgumentError("ofed_info printed nothing");
  if (line.find_first_of(" \t") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("unparsable: ", Quoted(line)));
  }
  if (line.back() == ':') line.pop_back();
  if (line.empty()) return absl::InvalidArgumentError("unparsable: ':'");
  return line;
}

absl::StatusOr<std::string> RdmaCoreVersionFromLibraryName(absl::string_view file_name) {
  auto slash = file_name.rfind('/');
  if (slash != absl::string_view::npos) file_name.remove_prefix(slash + 1);
  if (!absl::StartsWith(file_name, kLibibverbsPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        Quoted(file_name), " is not a libibverbs.so.* file (libibverbs linked statically?)"));
  }
  std::vector<absl::string_view> parts =
      absl::StrSplit(file_name.substr(sizeof(kLibibverbsPrefix) - 1), '.');
  // ABI major and minor (1.14) then the rdma-core package version.
  if (parts.size() < 3 || parts[0].empty() || parts[1].empty() || parts[2].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(file_name),
                     " carries no rdma-core version after the ABI numbers (expected "
                     "libibverbs.so.1.14.<version>)"));
  }
  return absl::StrJoin(parts.begin() + 2, parts.end(), ".");
}

absl::StatusOr<std::string> LoadedLibibverbsPath() {
  void* symbol = ::dlsym(RTLD_DEFAULT, "ibv_get_device_list");
  if (symbol == nullptr) symbol = reinterpret_cast<void*>(&ibv_get_device_list);
  Dl_info info{};
  if (::dladdr(symbol, &info) == 0 || info.dli_fname == nullptr || *info.dli_fname == '\0') {
    return absl::NotFoundError("dladdr(ibv_get_device_list) found no shared object");
  }
  std::unique_ptr<char, decltype(&::free)> real(::realpath(info.dli_fname, nullptr), &::free);
  if (real == nullptr) {
    return absl::NotFoundError(absl::StrCat(info.dli_fname, ": ", std::strerror(errno)));
  }
  return std::string(real.get());
}

StackCollector::StackCollector(const SysfsView& view, process::CommandRunner& runner)
    : view_(view), runner_(runner) {}

v1::Stack StackCollector::Collect() const {
  v1::Stack stack;
  const absl::StatusOr<std::string> text = view_.ReadText(kProcModules);
  const absl::StatusOr<ProcModules> proc_modules =
      text.ok() ? absl::StatusOr<ProcModules>(ParseProcModules(*text)) : text.status();
  CollectModules(stack, proc_modules);
  CollectPeermem(stack, proc_modules);
  CollectOfed(stack);
  CollectRdmaCore(stack);
  const std::string kernel_missing = CollectKernelRelease(stack);
  CollectModuleFiles(stack);
  const std::string flavour_missing = CollectNvidiaDriver(stack);
  CollectGpudirect(stack, proc_modules, kernel_missing, flavour_missing);
  CollectNccl(stack);
  return stack;
}

void StackCollector::CollectModules(v1::Stack& stack,
                                    const absl::StatusOr<ProcModules>& proc_modules) const {
  if (!proc_modules.ok()) {
    // "Not loaded" would be a claim; with no module list there is none to make.
    AddUnknown(stack, "modules", kProcModules, proc_modules.status());
    return;
  }
  for (const auto& bad : proc_modules->bad_lines) {
    AddUnknown(stack, "modules", kProcModules, absl::StrCat("skipped unparsable ", bad));
  }
  for (const char* name : kStackModules) {
    auto* module = stack.add_modules();
    module->set_name(name);
    const ProcModule* found = FindModule(*proc_modules, name);
    module->set_loaded(found != nullptr && IsLoaded(*found));
    if (found != nullptr) {
      module->set_load_rank(static_cast<uint32_t>(found - proc_modules->modules.data()));
    }
    CollectSysModule(*module, found != nullptr);
  }
}

// /sys/module/<name>: a loaded module's srcversion, and whether it is built
// in (a directory without initstate, which /proc/modules does not list).
void StackCollector::CollectSysModule(v1::KernelModule& module, bool listed) const {
  const std::string dir = absl::StrCat(kSysModule, module.name());
  if (!view_.Exists(dir)) return;
  if (!listed && !view_.Exists(absl::StrCat(dir, "/initstate"))) {
    module.set_builtin(true);
    module.set_loaded(true);
  }
  auto srcversion = view_.ReadText(absl::StrCat(dir, "/srcversion"));
  if (srcversion.ok() && IsVersionWord(*srcversion)) module.set_srcversion(*srcversion);
}

void StackCollector::CollectModuleFiles(v1::Stack& stack) const {
  std::vector<std::string> names;
  for (const auto& module : stack.modules()) {
    if (module.loaded() && !module.builtin()) names.push_back(module.name());
  }
  if (names.empty()) return;
  const auto files =
      ModuleFileReader(view_, runner_, view_.is_live()).Read(stack.kernel_release(), names);
  for (auto& module : *stack.mutable_modules()) {
    auto found = files.find(module.name());
    if (found == files.end()) continue;
    const ModuleFile& file = found->second;
    module.set_file_path(file.path);
    module.set_file_srcversion(file.srcversion);
    module.set_file_read(file.read);
    module.set_file_source(file.source);
    if (file.unknown) {
      AddUnknown(
          stack, "modules.file_srcversion",
          file.path.empty() ? absl::StrCat("/lib/modules/", stack.kernel_release()) : file.path,
          file.source);
    }
  }
}

void StackCollector::CollectPeermem(v1::Stack& stack,
                                    const absl::StatusOr<ProcModules>& proc_modules) const {
  std::vector<std::string> unreadable;
  for (const char* path : {kPeermemVersion, kLegacyNvMemVersion}) {
    auto version = view_.ReadText(path);
    if (version.ok()) {
      stack.set_peermem_loaded(true);
      stack.set_peermem_source(version->empty() ? std::string(path)
                                                : absl::StrCat(path, " (version ", *version, ")"));
      return;
    }
    if (!absl::IsNotFound(version.status())) {
      unreadable.push_back(absl::StrCat(path, ": ", ReasonOf(version.status())));
    }
  }
  if (proc_modules.ok()) {
    const ProcModule* found = FindModule(*proc_modules, "nvidia_peermem");
    if (found != nullptr && IsLoaded(*found)) {
      stack.set_peermem_loaded(true);
      stack.set_peermem_source("/proc/modules lists nvidia_peermem");
      return;
    }
  } else {
    unreadable.push_back(absl::StrCat(kProcModules, ": ", ReasonOf(proc_modules.status())));
  }
  stack.set_peermem_loaded(false);
  if (!unreadable.empty()) {
    std::string reason = absl::StrCat("no peer-memory module found, but could not read ",
                                      absl::StrJoin(unreadable, "; "));
    stack.set_peermem_source(reason);
    AddUnknown(stack, "peermem_loaded", kPeermemVersion, reason);
    return;
  }
  stack.set_peermem_source(absl::StrCat("none of ", kPeermemVersion, ", ", kLegacyNvMemVersion,
                                        " exists and /proc/modules has no nvidia_peermem"));
}

void StackCollector::CollectOfed(v1::Stack& stack) const {
  absl::StatusOr<std::string> text;
  std::string origin;
  if (view_.is_live()) {
    origin = kOfedInfoCommand;
    auto result = runner_.Run({"ofed_info", "-s"}, kOfedInfoTimeout);
    if (absl::IsNotFound(result.status())) {
      stack.set_ofed_source(absl::StrCat("ofed_info not found: upstream rdma-core (",
                                         ReasonOf(result.status()), ")"));
      return;
    }
    if (!result.ok()) {
      text = result.status();
    } else if (result->exit_code != 0) {
      text = absl::UnavailableError(absl::StrCat("exited with status ", result->exit_code, ": ",
                                                 Quoted(FirstLine(result->stderr_text))));
    } else {
      text = result->stdout_text;
    }
  } else {
    origin = kCapturedOfedInfo;
    text = view_.ReadText(kCapturedOfedInfo);
    if (absl::IsNotFound(text.status())) {
      // The capture tool writes the file only when ofed_info exists on the host.
      stack.set_ofed_source(absl::StrCat(
          "ofed_info not found: upstream rdma-core (the capture has no ", kCapturedOfedInfo, ")"));
      return;
    }
  }
  if (text.ok()) {
    auto version = ParseOfedInfo(*text);
    if (version.ok()) {
      stack.set_ofed_version(*version);
      stack.set_ofed_source(origin);
      return;
    }
    text = version.status();
  }
  std::string reason(text.status().message());
  stack.set_ofed_source(absl::StrCat(origin, " failed: ", reason));
  AddUnknown(stack, "ofed_version", origin, reason);
}

void StackCollector::CollectRdmaCore(v1::Stack& stack) const {
  if (!view_.is_live()) {
    std::string reason =
        "not probed: the tree is a capture and the libibverbs loaded here is not the captured "
        "host's";
    stack.set_rdma_core_source(reason);
    AddUnknown(stack, "rdma_core_version", "libibverbs", reason);
    return;
  }
  auto path = LoadedLibibverbsPath();
  absl::StatusOr<std::string> version =
      path.ok() ? RdmaCoreVersionFromLibraryName(*path) : path.status();
  if (!version.ok()) {
    std::string reason(version.status().message());
    stack.set_rdma_core_source(absl::StrCat("libibverbs file name unreadable: ", reason));
    AddUnknown(stack, "rdma_core_version", path.ok() ? *path : "dladdr(ibv_get_device_list)",
               reason);
    return;
  }
  stack.set_rdma_core_version(*version);
  stack.set_rdma_core_source(absl::StrCat("file name of the loaded libibverbs: ", *path));
}

std::string StackCollector::CollectKernelRelease(v1::Stack& stack) const {
  auto text = view_.ReadText(kOsRelease);
  if (absl::IsNotFound(text.status())) return absl::StrCat(kOsRelease, " is absent");
  std::string reason;
  if (!text.ok()) {
    reason = ReasonOf(text.status());
  } else if (std::string release = FirstLine(*text); IsVersionWord(release)) {
    stack.set_kernel_release(release);
    return "";
  } else {
    reason = absl::StrCat("unparsable: ", Quoted(*text));
  }
  AddUnknown(stack, "kernel_release", kOsRelease, reason);
  return absl::StrCat(kOsRelease, ": ", reason);
}

std::string StackCollector::CollectNvidiaDriver(v1::Stack& stack) const {
  auto module_version = view_.ReadText(kNvidiaModuleVersion);
  if (module_version.ok()) {
    const std::string version = FirstLine(*module_version);
    if (IsDottedNumber(version)) {
      stack.set_nvidia_driver_version(version);
    } else {
      AddUnknown(stack, "nvidia_driver_version", kNvidiaModuleVersion,
                 absl::StrCat("unparsable: ", Quoted(*module_version)));
    }
  } else if (!absl::IsNotFound(module_version.status())) {
    AddUnknown(stack, "nvidia_driver_version", kNvidiaModuleVersion, module_version.status());
  }
  auto text = view_.ReadText(kNvidiaDriverBanner);
  if (absl::IsNotFound(text.status())) return absl::StrCat(kNvidiaDriverBanner, " is absent");
  absl::StatusOr<NvidiaDriverBanner> banner =
      text.ok() ? ParseNvidiaDriverBanner(*text)
                : absl::StatusOr<NvidiaDriverBanner>(text.status());
  if (!banner.ok()) {
    std::string reason =
        text.ok() ? std::string(banner.status().message()) : ReasonOf(banner.status());
    AddUnknown(stack, "nvidia_driver_flavour", kNvidiaDriverBanner, reason);
    return absl::StrCat(kNvidiaDriverBanner, ": ", reason);
  }
  stack.set_nvidia_driver_flavour(banner->flavour);
  // The banner names the same loaded module; use it where the module has no version file.
  if (absl::IsNotFound(module_version.status())) stack.set_nvidia_driver_version(banner->version);
  return "";
}

void StackCollector::CollectGpudirect(v1::Stack& stack,
                                      const absl::StatusOr<ProcModules>& proc_modules,
                                      absl::string_view kernel_missing,
                                      absl::string_view flavour_missing) const {
  if (stack.peermem_loaded()) {
    stack.set_gpudirect_mechanism("nvidia_peermem");
    stack.set_gpudirect_source(
        absl::StrCat("nvidia_peermem loaded (", stack.peermem_source(), ")"));
    return;
  }
  const ProcModule* nvidia = proc_modules.ok() ? FindModule(*proc_modules, "nvidia") : nullptr;
  const bool no_nvidia_driver = proc_modules.ok() && (nvidia == nullptr || !IsLoaded(*nvidia)) &&
                                stack.nvidia_driver_version().empty() &&
                                stack.nvidia_driver_flavour().empty() &&
                                !HasStackUnknown(stack, "nvidia_driver_version") &&
                                !HasStackUnknown(stack, "nvidia_driver_flavour");
  DmaBufVerdict dma_buf = JudgeDmaBuf(stack, no_nvidia_driver, kernel_missing, flavour_missing);
  if (dma_buf.state == DmaBufVerdict::kAvailable) {
    stack.set_gpudirect_mechanism("dma-buf");
    stack.set_gpudirect_source(dma_buf.why);
    return;
  }
  stack.set_gpudirect_mechanism("none");
  const bool peermem_unknown = HasStackUnknown(stack, "peermem_loaded");
  if (dma_buf.state == DmaBufVerdict::kUnavailable && !peermem_unknown) {
    stack.set_gpudirect_source(
        absl::StrCat("nvidia_peermem not loaded and no DMA-BUF: ", dma_buf.why));
    return;
  }
  // "none" is then a guess; the Unknown makes gpudirect.peermem say so.
  std::string reason =
      peermem_unknown
          ? absl::StrCat("nvidia_peermem state unknown (", stack.peermem_source(), ") and ",
                         dma_buf.state == DmaBufVerdict::kUnavailable ? "no DMA-BUF: "
                                                                      : "DMA-BUF undecided: ",
                         dma_buf.why)
          : absl::StrCat("nvidia_peermem not loaded and DMA-BUF undecided: ", dma_buf.why);
  stack.set_gpudirect_source(reason);
  const char* path = peermem_unknown                  ? kPeermemVersion
                     : stack.kernel_release().empty() ? kOsRelease
                                                      : kNvidiaDriverBanner;
  AddUnknown(stack, "gpudirect_mechanism", path, reason);
}

void StackCollector::CollectNccl(v1::Stack& stack) const {
  std::optional<NcclFound> first;
  std::vector<std::string> others, unreadable;
  for (const char* dir : kNcclLibraryDirs) {
    auto found = FindNcclIn(view_, dir);
    if (!found.ok()) {
      if (!absl::IsNotFound(found.status())) {
        unreadable.push_back(absl::StrCat(dir, ": ", ReasonOf(found.status())));
      }
      continue;
    }
    if (!first) {
      first = *found;
    } else if (found->version != first->version) {
      others.push_back(absl::StrCat(found->version, " in ", dir));
    }
  }
  if (first) {
    stack.set_nccl_version(first->version);
    std::string source = first->where;
    if (!others.empty()) absl::StrAppend(&source, "; also ", absl::StrJoin(others, ", "));
    stack.set_nccl_source(source);
    return;
  }
  if (!unreadable.empty()) {
    std::string reason =
        absl::StrCat("no libnccl.so.2 found, but could not read ", absl::StrJoin(unreadable, "; "));
    stack.set_nccl_source(reason);
    AddUnknown(stack, "nccl_version", kNcclLibraryDirs[0], reason);
    return;
  }
  stack.set_nccl_source(absl::StrCat(
      "no libnccl.so.2.<minor>.<patch> in ", absl::StrJoin(kNcclLibraryDirs, ", "),
      " (NCCL that the workers bring in a container or Python wheel is not seen here)"));
}

}  // namespace clustercert::agent::inventory
