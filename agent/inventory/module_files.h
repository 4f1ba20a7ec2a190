#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/process/command_runner.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// The value of `key` in the .modinfo section of a kernel module's ELF image
// (the NUL-separated "key=value" strings modinfo prints), "" when the
// section has no such key. InvalidArgument, naming what is wrong, for
// anything but a well-formed 64-bit little-endian ELF with a .modinfo
// section inside the image. Every offset and size is checked against the
// image, so a truncated or hostile file is refused, never read past.
absl::StatusOr<std::string> ModinfoField(absl::string_view elf, absl::string_view key);

// modules.dep as the kernel's depmod writes it, "kernel/drivers/.../ib_core.ko:
// deps...", as module name -> the path before the colon. The module name is
// the file's name without .ko/.ko.xz/.ko.zst/.ko.gz, with '-' as '_' (what
// /sys/module and lsmod show). Lines whose path is absolute, holds "..",
// or does not end in a module suffix are skipped.
std::map<std::string, std::string> ParseModulesDep(absl::string_view text);

// What the agent knows of one installed module file.
struct ModuleFile {
  std::string path;        // "/lib/modules/<release>/updates/dkms/mlx5_core.ko"
  std::string srcversion;  // from its .modinfo; "" when it has none (in-tree)
  bool read = false;       // srcversion was read
  std::string source;      // how it was read, or why it could not be
  bool unknown = false;    // it should have been readable and was not (an Unknown)
};

// Reads the srcversion of the module files the running kernel would load,
// as `modinfo -F srcversion <name>` does: modules.dep of
// /lib/modules/<release>/ names the file, and the srcversion comes from the
// file's .modinfo section. A compressed file (.ko.xz, .ko.zst, .ko.gz) is
// not decompressed here (no decompressor is linked): on a live host
// `modinfo -F srcversion <name>` runs through `runner` instead, for module
// names on AllowedModules() only; in a captured tree it stays unread, with
// the reason. A tree without /lib/modules/<release> (a capture that did not
// copy it) leaves every file unread without an Unknown; on a live host an
// unreadable modules.dep is an Unknown.
class ModuleFileReader {
 public:
  static constexpr absl::Duration kModinfoTimeout = absl::Seconds(10);
  // The largest module image read: unstripped OFED builds of mlx5_core run
  // to tens of MB.
  static constexpr size_t kMaxModuleBytes = 128u << 20;
  static constexpr size_t kMaxModulesDepBytes = 16u << 20;

  // The modules modinfo may be asked about (its argv is fixed otherwise).
  static const std::vector<std::string>& AllowedModules();

  // `runner` is used only when `may_run_modinfo` (the collector passes
  // view.is_live(): modinfo reads the running host, never a capture); both
  // must outlive the reader.
  ModuleFileReader(const SysfsView& view, process::CommandRunner& runner, bool may_run_modinfo);

  // The files of `names` for kernel `release`, one entry per name.
  std::map<std::string, ModuleFile> Read(const std::string& release,
                                         const std::vector<std::string>& names) const;

 private:
  ModuleFile ReadOne(const std::string& dir, const std::string& name,
                     const std::string& relative) const;
  ModuleFile RunModinfo(const std::string& name, ModuleFile file) const;

  const SysfsView& view_;
  process::CommandRunner& runner_;
  bool may_run_modinfo_;
};

}  // namespace clustercert::agent::inventory
