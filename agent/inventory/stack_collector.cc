#include "agent/inventory/stack_collector.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::inventory {
namespace {

constexpr char kProcModules[] = "/proc/modules";
constexpr char kPeermemVersion[] = "/sys/module/nvidia_peermem/version";
constexpr char kLegacyNvMemVersion[] = "/sys/kernel/mm/memory_peers/nv_mem/version";
constexpr char kCapturedOfedInfo[] = "/clustercert-capture/ofed_info";
constexpr char kOfedInfoCommand[] = "ofed_info -s";
constexpr char kLibibverbsPrefix[] = "libibverbs.so.";
constexpr size_t kMaxQuotedChars = 80;

std::string Quoted(absl::string_view text) {
  if (text.size() > kMaxQuotedChars)
    return absl::StrCat("'", text.substr(0, kMaxQuotedChars), "…'");
  return absl::StrCat("'", text, "'");
}

bool IsLoaded(const ProcModule& module) { return module.state.empty() || module.state == "Live"; }

const ProcModule* FindModule(const ProcModules& modules, absl::string_view name) {
  for (const auto& module : modules.modules) {
    if (module.name == name) return &module;
  }
  return nullptr;
}

std::string FirstLine(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) return std::string(line);
  }
  return "";
}

}  // namespace

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

StackCollector::StackCollector(const SysfsView& view, CommandRunner& runner)
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

}  // namespace clustercert::inventory
