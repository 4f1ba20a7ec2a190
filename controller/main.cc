// controller: reads a plan, drives the node-agents through the phases and
// writes the certificate.
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/command_line.h"
#include "common/version.h"
#include "controller/commands/command_support.h"
#include "controller/commands/diagnostics.h"
#include "controller/commands/diff_command.h"
#include "controller/commands/health_command.h"
#include "controller/commands/inventory_command.h"
#include "controller/commands/plan_check_command.h"
#include "controller/commands/report_command.h"
#include "controller/commands/run_command.h"
#include "controller/commands/schema_command.h"
#include "controller/commands/verify_command.h"

namespace {

constexpr char kUsage[] =
    "usage: controller COMMAND [flags]\n"
    "  run PLAN [--out DIR]   every phase, then the certificate (exit 0 certified, 1 not,\n"
    "                         2 plan/usage error, 3 could not run, 130/143 interrupted by\n"
    "                         SIGINT/SIGTERM: partial certificate written, never certified);\n"
    "                         prints the checks that did not pass per node and counts the\n"
    "                         rest (--verbose lists every check)\n"
    "  inventory PLAN         connect and inventory only, tables per node (--json for machines)\n"
    "  run PLAN --slurm-nodes PARTITION|NODELIST [--slurm-drain]\n"
    "                         the nodes Slurm lists (agents from the plan's slurm section); with\n"
    "                         --slurm-drain, drain the nodes the certificate fails (reason\n"
    "                         'clustercert: <first finding>') and resume the ones clustercert\n"
    "                         drained that pass now (exit 4: Slurm refused; docs/slurm.md)\n"
    "  health PLAN --local | --node NAME [--slurm-drain]\n"
    "                         one node's inventory checks, for Slurm's HealthCheckProgram\n"
    "                         (exit 0 ok, 1 fail; prints the first finding)\n"
    "  run PLAN --baseline OLD.json --only node3[,node4]\n"
    "                         re-run only the tests touching those nodes, carry the rest over\n"
    "  run PLAN --resume DIR  continue a killed or interrupted run (DIR: the \"output:\" line it\n"
    "                         printed): what its journal holds is taken over, the rest measured\n"
    "  verify CERT [--pubkey FILE.pub | --trust-dir DIR]\n"
    "                         check the signature, that its key is trusted, and recompute every\n"
    "                         verdict (exit 0 valid; 1 edited, unsigned or signed by an untrusted\n"
    "                         key; 2 usage or unreadable file). Without either flag the keys in\n"
    "                         /etc/clustercert/trusted-keys/ are trusted, when it exists\n"
    "  keygen --out PREFIX    new Ed25519 signing key: PREFIX (0600) and PREFIX.pub\n"
    "  plan check PLAN        validate a plan; nothing runs\n"
    "  diff OLD NEW           what changed between two certificates (exit 0 nothing regressed,\n"
    "                         1 regressed); --noise FRACTION is the band (default 0.10)\n"
    "  report CERT [--out DIR]\n"
    "                         re-render report.html, report.md, junit.xml from a certificate\n"
    "  schema                 print the certificate's JSON Schema (docs/certificate.schema.json)\n"
    "  version                print the version\n";

using namespace clustercert::controller;

bool UseColor(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
}

clustercert::CommandLine ControllerCommandLine() {
  return clustercert::CommandLine({
      {"out", true, "DIR",
       "run/report: output directory (overrides the plan's certificate.out); keygen: key prefix",
       ""},
      {"json", false, "", "machine-readable output on stdout", ""},
      {"color", true, "WHEN", "auto | always | never", "auto"},
      {"quiet", false, "", "no progress lines on stderr", ""},
      {"verbose", false, "",
       "run: list every check per node, passing and skipped too (by default only those that "
       "did not pass, with a count of the rest)",
       ""},
      {"pubkey", true, "FILE", "verify: the signer's public key (PEM, from keygen)", ""},
      {"trust-dir", true, "DIR",
       "verify: trust the *.pub keys in DIR (default /etc/clustercert/trusted-keys when it exists)",
       ""},
      {"baseline", true, "CERT", "run: the certificate a partial re-certification starts from", ""},
      {"only", true, "NODES", "run: with --baseline, the nodes to measure again (comma-separated)",
       ""},
      {"resume", true, "DIR",
       "run: continue the run whose output directory is DIR (same plan, unedited)", ""},
      {"noise", true, "FRACTION", "diff: relative change band treated as noise", "0.10"},
      {"slurm-nodes", true, "PARTITION|NODELIST",
       "run: take the nodes from Slurm (a partition, or a hostlist such as node[1-4])", ""},
      {"slurm-drain", false, "",
       "run/health: drain failing nodes in Slurm, resume the ones clustercert drained that pass",
       ""},
      {"local", false, "", "health: check the node this host is (its short hostname)", ""},
      {"node", true, "NAME", "health: check this node", ""},
      {"help", false, "", "print this help", ""},
  });
}

// The flags as the commands take them; nullopt, once the diagnostic is
// printed, when --noise or --color has a value no command can use.
std::optional<CommandOptions> ReadOptions(const clustercert::CommandLine& command_line) {
  CommandOptions options;
  options.out = command_line.Get("out");
  options.json = command_line.GetBool("json");
  options.quiet = command_line.GetBool("quiet");
  options.verbose = command_line.GetBool("verbose");
  options.pubkey = command_line.Get("pubkey");
  options.trust_dir = command_line.Get("trust-dir");
  options.baseline = command_line.Get("baseline");
  options.only = command_line.Get("only");
  options.resume = command_line.Get("resume");
  options.slurm_nodes = command_line.Get("slurm-nodes");
  options.slurm_drain = command_line.GetBool("slurm-drain");
  options.local = command_line.GetBool("local");
  options.node = command_line.Get("node");
  const std::string noise = command_line.Get("noise");
  char* end = nullptr;
  options.noise = std::strtod(noise.c_str(), &end);
  if (noise.empty() || end == nullptr || *end != '\0') {
    Diagnostics().error("--noise is '{}'; give a fraction such as 0.10 (10 %)", noise);
    return std::nullopt;
  }
  const std::string color = command_line.Get("color");
  if (color != "auto" && color != "always" && color != "never") {
    Diagnostics().error("--color is '{}'; use auto, always or never", color);
    return std::nullopt;
  }
  options.color = UseColor(color);
  return options;
}

// Runs the command `args` names with the rest of `args` as its arguments.
int RunCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  const std::string& command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "run") return RunRunCommand(rest, options);
  if (command == "inventory") return RunInventoryCommand(rest, options);
  if (command == "health") return RunHealthCommand(rest, options);
  if (command == "verify") return RunVerifyCommand(rest, options);
  if (command == "keygen") return RunKeygenCommand(rest, options);
  if (command == "schema") return RunSchemaCommand(rest, options);
  if (command == "diff") return RunDiffCommand(rest, options);
  if (command == "report") return RunReportCommand(rest, options);
  if (command == "plan") {
    if (!rest.empty() && rest[0] == "check") {
      return RunPlanCheckCommand(std::vector<std::string>(rest.begin() + 1, rest.end()), options);
    }
    std::fprintf(stderr, "usage: controller plan check PLAN.yaml\n");
    return kExitUsage;
  }
  if (command == "version") {
    std::printf("clustercert controller %s (NodeAgent API v%u)\n", clustercert::kToolVersion,
                clustercert::kApiVersion);
    return 0;
  }
  Diagnostics().error("unknown command '{}'", command);
  std::fprintf(stderr, "%s", kUsage);
  return kExitUsage;
}

}  // namespace

static int RunController(int argc, char** argv) {
  clustercert::CommandLine command_line = ControllerCommandLine();
  if (auto parsed = command_line.Parse(argc, argv); !parsed.ok()) {
    DiagnoseError(parsed);
    std::fprintf(stderr, "%s", kUsage);
    return kExitUsage;
  }
  if (command_line.GetBool("help")) {
    std::printf("%sflags:\n%s", kUsage, command_line.Help().c_str());
    return 0;
  }
  const std::optional<CommandOptions> options = ReadOptions(command_line);
  if (!options) return kExitUsage;
  if (command_line.positional().empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return kExitUsage;
  }
  return RunCommand(command_line.positional(), *options);
}

int main(int argc, char** argv) {
  // gRPC 1.51 (Debian 12) can free its callback completion queue twice, or
  // hang, when the last channel is destroyed while a failed connection attempt
  // is still unwinding (an agent that is down, or refuses the handshake: a
  // case this tool meets on purpose). The agent channels therefore live until
  // the process ends (see GrpcAgentClientFactory), and the process leaves
  // with _Exit after flushing, without tearing gRPC down under its threads.
  //
  // Debian's absl is built without NDEBUG, so every absl::Mutex lock (gRPC's
  // and ours) feeds its deadlock detector's lock graph: 4 % of the
  // controller's CPU in a 256-node pairwise run (perf). Release builds of
  // absl leave it off; so does the controller. Tests keep it (they do not
  // run main).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const int code = RunController(argc, argv);
  std::fflush(stdout);
  std::fflush(stderr);
#if defined(__SANITIZE_ADDRESS__)
  __lsan_do_leak_check();  // _Exit skips LeakSanitizer's own exit-time check
#endif
  std::_Exit(code);
}
