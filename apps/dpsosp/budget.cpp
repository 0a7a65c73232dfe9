// `dpsosp budget`: makes and shows a privacy budget file that `dpsosp run
// --budget FILE` charges (the library's budget.hpp; docs/budget.md).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.hpp"

namespace dpsosp::cli {

BudgetLock::BudgetLock(const std::string& path) {
  const std::string lock = path + ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT, S_IRUSR | S_IWUSR);
  if (fd_ < 0) throw Error("--budget " + path + ": cannot open its lock file " + lock + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX) != 0) {
    const int err = errno;
    ::close(fd_);
    throw Error("--budget " + path + ": cannot lock " + lock + ": " + std::strerror(err));
  }
}

BudgetLock::~BudgetLock() { ::close(fd_); }

Budget read_budget_file(const std::string& path, const std::string& option) {
  const std::string where = option + " " + path;
  if (path.empty()) throw Error("--budget: empty file name");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(where + ": cannot read the budget file (dpsosp budget " + path +
                " --new --epsilon E --delta D makes one)");
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception&) {
    throw Error(where + ": not JSON (a budget file is written by dpsosp budget --new or Budget.save)");
  }
  return Budget::from_json(j, where);
}

namespace {

std::string budget_figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

void setup_budget(CLI::App& app) {
  struct Args {
    std::string file, epsilon, delta;
    bool create = false, json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "budget",
      "Make (--new) or show a privacy budget that `dpsosp run --budget FILE` charges: each run by its exact privacy "
      "curve, composed by PLD, and one that would overrun it refused before it reads a record (docs/budget.md)");
  cmd->add_option("file", args->file, "The budget file (JSON)")->required();
  cmd->add_flag("--new", args->create, "Make a new budget file (never replaces one); needs --epsilon and --delta");
  cmd->add_option("--epsilon", args->epsilon, "The budget's total epsilon (with --new)");
  cmd->add_option("--delta", args->delta, "The delta at which the total is read (with --new)");
  cmd->add_flag("--json", args->json, "Show the budget file's JSON instead of the summary");
  cmd->callback([args, cmd] {
    const bool given = cmd->count("--epsilon") + cmd->count("--delta") > 0;
    if (args->create) {
      if (!cmd->count("--epsilon") || !cmd->count("--delta")) throw Error("--new: needs --epsilon and --delta");
      struct stat st {};
      if (::stat(args->file.c_str(), &st) == 0)
        throw Error("budget " + args->file + ": the file exists (--new never replaces a budget)");
      check_writable(args->file, "budget");
      const Budget b(parse_real(args->epsilon, "--epsilon", Range::kPositive),
                     parse_real(args->delta, "--delta", Range::kOpenUnit));
      write_text(args->file, b.to_json().dump(1) + "\n", "budget");
    } else if (given) {
      throw Error("--epsilon, --delta: apply with --new (a budget's figures are fixed when it is made)");
    }
    const Budget b = read_budget_file(args->file, "budget");
    if (args->json) {
      std::cout << b.to_json().dump(1) << "\n";
      return;
    }
    std::cout << "budget    (" << budget_figure(b.epsilon()) << ", " << budget_figure(b.delta())
              << ")-DP for replace-one adjacency\n";
    std::cout << "spent     epsilon " << budget_figure(b.spent()) << " at delta " << budget_figure(b.delta()) << " by "
              << b.ledger().size() << (b.ledger().size() == 1 ? " run" : " runs") << ", composed by PLD\n";
    std::cout << "remaining epsilon " << budget_figure(b.remaining())
              << " for a Gaussian (mu-GDP) release; each run is checked by its own curve\n";
    for (std::size_t i = 0; i < b.ledger().size(); ++i)
      std::cout << "  " << (i + 1) << ". epsilon " << budget_figure(b.ledger()[i].epsilon) << "  "
                << b.ledger()[i].label << "\n";
  });
}

}  // namespace dpsosp::cli
