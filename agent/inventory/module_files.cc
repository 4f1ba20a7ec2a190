#include "agent/inventory/module_files.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/message_text.h"

namespace clustercert::agent::inventory {
namespace {

constexpr size_t kElfHeaderBytes = 64;
constexpr size_t kSectionHeaderBytes = 64;
constexpr size_t kMaxValueChars = 64;
constexpr size_t kMaxReleaseChars = 64;
constexpr size_t kMaxQuotedChars = 80;
constexpr const char* kUncompressedSuffix = ".ko";
constexpr const char* kCompressedSuffixes[] = {".ko.xz", ".ko.zst", ".ko.gz"};

uint64_t LittleEndian(absl::string_view bytes, size_t at, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return value;
}

// True when [offset, offset + size) lies inside an image of `total` bytes.
bool Inside(uint64_t offset, uint64_t size, size_t total) {
  return offset <= total && size <= total - offset;
}

struct Section {
  uint64_t name = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

Section SectionAt(absl::string_view elf, uint64_t at) {
  return {LittleEndian(elf, at, 4), LittleEndian(elf, at + 24, 8), LittleEndian(elf, at + 32, 8)};
}

// The name at `offset` of the section-name table, "" when it runs off it.
absl::string_view NameAt(absl::string_view names, uint64_t offset) {
  if (offset >= names.size()) return "";
  absl::string_view rest = names.substr(offset);
  const size_t end = rest.find('\0');
  return end == absl::string_view::npos ? "" : rest.substr(0, end);
}

// Printable ASCII, as a .modinfo value must be to be shown.
bool IsPrintable(absl::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return absl::ascii_isprint(static_cast<unsigned char>(c)); });
}

std::string ModuleNameOf(absl::string_view path) {
  absl::string_view base = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
  for (const char* suffix : kCompressedSuffixes) {
    if (absl::ConsumeSuffix(&base, suffix)) return absl::StrReplaceAll(base, {{"-", "_"}});
  }
  if (absl::ConsumeSuffix(&base, kUncompressedSuffix)) {
    return absl::StrReplaceAll(base, {{"-", "_"}});
  }
  return "";
}

bool IsCompressed(absl::string_view path) {
  return std::any_of(std::begin(kCompressedSuffixes), std::end(kCompressedSuffixes),
                     [&](const char* suffix) { return absl::EndsWith(path, suffix); });
}

// A release a path may be built from: "6.8.0-45-generic", "5.15.0-1050-nvidia+".
bool IsSafeRelease(absl::string_view release) {
  if (release.empty() || release.size() > kMaxReleaseChars || release == "." || release == "..") {
    return false;
  }
  return std::all_of(release.begin(), release.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || std::strchr("._+-~", c) != nullptr;
  });
}

std::string Quoted(absl::string_view text) { return QuotedText(text, kMaxQuotedChars); }

}  // namespace

absl::StatusOr<std::string> ModinfoField(absl::string_view elf, absl::string_view key) {
  if (elf.size() < kElfHeaderBytes || elf.substr(0, 4) != absl::string_view("\x7f"
                                                                            "ELF",
                                                                            4)) {
    return absl::InvalidArgumentError("not an ELF image");
  }
  if (elf[4] != 2 || elf[5] != 1) {
    return absl::InvalidArgumentError("not a 64-bit little-endian ELF image");
  }
  const uint64_t table = LittleEndian(elf, 0x28, 8);
  const uint64_t entry_size = LittleEndian(elf, 0x3a, 2);
  const uint64_t count = LittleEndian(elf, 0x3c, 2);
  const uint64_t names_index = LittleEndian(elf, 0x3e, 2);
  if (entry_size < kSectionHeaderBytes || names_index >= count ||
      !Inside(table, entry_size * count, elf.size())) {
    return absl::InvalidArgumentError("its section header table lies outside the image");
  }
  const Section names = SectionAt(elf, table + names_index * entry_size);
  if (!Inside(names.offset, names.size, elf.size())) {
    return absl::InvalidArgumentError("its section name table lies outside the image");
  }
  const absl::string_view name_table = elf.substr(names.offset, names.size);
  for (uint64_t i = 0; i < count; ++i) {
    const Section section = SectionAt(elf, table + i * entry_size);
    if (NameAt(name_table, section.name) != ".modinfo") continue;
    if (!Inside(section.offset, section.size, elf.size())) {
      return absl::InvalidArgumentError("its .modinfo section lies outside the image");
    }
    const std::string prefix = absl::StrCat(key, "=");
    for (absl::string_view entry :
         absl::StrSplit(elf.substr(section.offset, section.size), '\0', absl::SkipEmpty())) {
      if (!absl::ConsumePrefix(&entry, prefix)) continue;
      if (entry.size() > kMaxValueChars || !IsPrintable(entry)) {
        return absl::InvalidArgumentError(absl::StrCat(".modinfo ", key, " is not a short word"));
      }
      return std::string(entry);
    }
    return std::string();
  }
  return absl::InvalidArgumentError("it has no .modinfo section (not a kernel module)");
}

std::map<std::string, std::string> ParseModulesDep(absl::string_view text) {
  std::map<std::string, std::string> files;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    absl::string_view path = line.substr(0, colon);
    if (path.empty() || path.front() == '/' || absl::StrContains(path, "..")) continue;
    std::string name = ModuleNameOf(path);
    if (!name.empty()) files.emplace(std::move(name), std::string(path));
  }
  return files;
}

const std::vector<std::string>& ModuleFileReader::AllowedModules() {
  static const auto* const kAllowed = new std::vector<std::string>{
      "mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "rdma_rxe", "nvidia", "nvidia_peermem"};
  return *kAllowed;
}

ModuleFileReader::ModuleFileReader(const SysfsView& view, process::CommandRunner& runner,
                                   bool may_run_modinfo)
    : view_(view), runner_(runner), may_run_modinfo_(may_run_modinfo) {}

std::map<std::string, ModuleFile> ModuleFileReader::Read(
    const std::string& release, const std::vector<std::string>& names) const {
  std::map<std::string, ModuleFile> files;
  auto all = [&](const std::string& why, bool unknown) {
    for (const std::string& name : names) files[name] = ModuleFile{"", "", false, why, unknown};
    return files;
  };
  if (release.empty()) {
    return all("the kernel release is unknown, so no /lib/modules/<release> folder is named",
               view_.is_live());
  }
  if (!IsSafeRelease(release)) {
    return all(
        absl::StrCat("the kernel release ", Quoted(release), " cannot name a /lib/modules folder"),
        true);
  }
  const std::string dir = absl::StrCat("/lib/modules/", release);
  const std::string dep_path = absl::StrCat(dir, "/modules.dep");
  auto dep = view_.ReadBytes(dep_path, kMaxModulesDepBytes);
  if (!dep.ok()) {
    // A capture that did not copy /lib/modules has nothing to compare with;
    // a live host always has it, so there its absence is a fact unread.
    const bool absent = absl::IsNotFound(dep.status()) && !view_.is_live();
    return all(absent ? absl::StrCat("the captured tree has no ", dep_path)
                      : absl::StrCat(dep_path, ": ", ReasonOf(dep.status())),
               !absent);
  }
  const std::map<std::string, std::string> paths = ParseModulesDep(*dep);
  for (const std::string& name : names) {
    auto found = paths.find(name);
    if (found == paths.end()) {
      // Built in, or not installed for this kernel: modinfo would fail alike.
      // Loaded but not installed for this kernel: removed since it loaded,
      // or insmod'ed from elsewhere. On a live host that is a fact unread.
      files[name] =
          ModuleFile{"", "", false, absl::StrCat(dep_path, " lists no ", name), view_.is_live()};
      continue;
    }
    files[name] = ReadOne(dir, name, found->second);
  }
  return files;
}

ModuleFile ModuleFileReader::ReadOne(const std::string& dir, const std::string& name,
                                     const std::string& relative) const {
  ModuleFile file;
  file.path = absl::StrCat(dir, "/", relative);
  if (IsCompressed(relative)) return RunModinfo(name, std::move(file));
  auto image = view_.ReadBytes(file.path, kMaxModuleBytes);
  if (!image.ok()) {
    if (absl::IsResourceExhausted(image.status())) return RunModinfo(name, std::move(file));
    file.source = absl::StrCat(file.path, ": ", ReasonOf(image.status()));
    file.unknown = true;
    return file;
  }
  auto srcversion = ModinfoField(*image, "srcversion");
  if (!srcversion.ok()) {
    file.source = absl::StrCat(file.path, ": ", srcversion.status().message());
    file.unknown = true;
    return file;
  }
  file.srcversion = *srcversion;
  file.read = true;
  file.source = absl::StrCat(file.path, " .modinfo");
  return file;
}

ModuleFile ModuleFileReader::RunModinfo(const std::string& name, ModuleFile file) const {
  const auto& allowed = AllowedModules();
  if (!may_run_modinfo_ || std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
    file.source = absl::StrCat(file.path, " is compressed or too large to read here, and ",
                               may_run_modinfo_ ? "modinfo is not run for this module"
                                                : "a captured tree's modules are not run through "
                                                  "modinfo");
    file.unknown = may_run_modinfo_;
    return file;
  }
  auto result = runner_.Run({"modinfo", "-F", "srcversion", name}, kModinfoTimeout);
  if (!result.ok() || result->exit_code != 0) {
    file.source =
        absl::StrCat("modinfo -F srcversion ", name, ": ",
                     !result.ok() ? ReasonOf(result.status())
                                  : absl::StrCat("exited with status ", result->exit_code, ": ",
                                                 Quoted(FirstLine(result->stderr_text))));
    file.unknown = true;
    return file;
  }
  const std::string value = FirstLine(result->stdout_text);
  if (value.size() > kMaxValueChars || !IsPrintable(value)) {
    file.source = absl::StrCat("modinfo -F srcversion ", name, " printed ", Quoted(value));
    file.unknown = true;
    return file;
  }
  file.srcversion = value;
  file.read = true;
  file.source = absl::StrCat("modinfo -F srcversion ", name);
  return file;
}

}  // namespace clustercert::agent::inventory
