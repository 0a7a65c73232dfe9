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

namespace {

constexpr const char* kCommands[] = {"run", "certify", "privacy", "demo", "audit", "keygen", "predict"};

// One line, whatever the message holds (file names and JSON excerpts may carry
// newlines or control characters).
int fail(const std::string& message, int status) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') c = ' ';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  std::cout.flush();
  std::cerr << "dpsosp: error: " << line << "\n";
  return status;
}

bool is_command(const char* arg) {
  for (const char* c : kCommands)
    if (std::strcmp(arg, c) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
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
  dpsosp::cli::setup_predict(app);
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    return fail("unknown command '" + std::string(argv[1]) + "' (expected run, certify, privacy, demo, audit, keygen or predict; see dpsosp --help)", 2);
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
    return fail(std::string(e.what()) + " (see dpsosp " + (argc > 1 && is_command(argv[1]) ? std::string(argv[1]) + " " : "") + "--help)", 2);
  } catch (const dpsosp::Error& e) {
    return fail(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
  return 0;
}
