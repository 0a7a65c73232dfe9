// dpsosp: differentially private second-order stationary points.
//
// Every failure ends here: one line "dpsosp: error: ..." on stderr and a
// non-zero status (2 for a command line that does not parse, 1 for anything
// else); see docs/reliability.md.
#include <cstring>
#include <iostream>
#include <new>
#include <string>

#include "cli.hpp"
#include "processes.hpp"

namespace {

constexpr const char* kCommands[] = {"run",    "certify", "privacy", "demo",  "audit",
                                     "keygen", "convert", "predict", "budget"};

bool is_command(const char* arg) {
  for (const char* c : kCommands)
    if (std::strcmp(arg, c) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  dpsosp::cli::Processes processes(argc, argv);  // an MPI job's rank, under mpirun (processes.hpp)
  CLI::App app{"dpsosp: differentially private non-convex optimization that finds second-order stationary points"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dpsosp 0.1.0");
  app.footer(
      "Exit status: 0 success; 1 bad input or a failure (one line on stderr, nothing on stdout); 2 a command line "
      "that does not parse; 128 + N after signal N stopped `run` (130 for SIGINT), its report so far written. "
      "The report's keys: docs/report.md.");
  dpsosp::cli::setup_run(app);
  dpsosp::cli::setup_certify(app);
  dpsosp::cli::setup_privacy(app);
  dpsosp::cli::setup_demo(app);
  dpsosp::cli::setup_audit(app);
  dpsosp::cli::setup_keygen(app);
  dpsosp::cli::setup_convert(app);
  dpsosp::cli::setup_predict(app);
  dpsosp::cli::setup_budget(app);
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    return processes.fail(
        "unknown command '" + std::string(argv[1]) +
            "' (expected run, certify, privacy, demo, audit, keygen, convert, predict or budget; see dpsosp --help)",
        2, true);
  }
  try {
    if (argc > 1 && is_command(argv[1])) dpsosp::cli::Processes::check_command(argv[1]);
  } catch (const dpsosp::Error& e) {
    return processes.fail(e.what(), 1, true);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's own status (run: 130 after an interrupt); its report is written
  } catch (const CLI::ParseError& e) {
    // The same command line on every rank: rank 0 says it. An option given
    // twice in our words, not CLI11's ("At Most 1 required but received 2").
    std::string what = e.what();
    const std::string twice = ": At Most 1 required but received ";
    if (const std::size_t at = what.find(twice); at != std::string::npos)
      what = what.substr(0, at) + ": given " + what.substr(at + twice.size()) + " times; give it once";
    return processes.fail(
        what + " (see dpsosp " + (argc > 1 && is_command(argv[1]) ? std::string(argv[1]) + " " : "") + "--help)", 2,
        true);
  } catch (const dpsosp::cli::QuietExit& e) {
    return e.status;  // another rank printed the line
  } catch (const dpsosp::Error& e) {
    return processes.fail(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return processes.fail("out of memory", 1);
  } catch (const std::exception& e) {
    return processes.fail(e.what(), 1);
  }
  return 0;
}
