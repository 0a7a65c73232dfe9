// Writing the tool's outputs: checked before a run starts, replaced whole or
// not at all (a temporary file and a rename), never over an input.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cli.hpp"

namespace dpsosp::cli {

namespace {

bool is_stdout(const std::string& path) { return path == "-"; }

// An existing path through its symlinks (so a rename replaces the target, not
// the link); the path itself otherwise.
std::string resolved(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical.string();
}

std::string parent_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  if (is_stdout(path)) return;
  if (path.empty()) throw Error(option + ": empty file name (use - for stdout)");
  const std::string target = resolved(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(option + " " + path + ": is a directory");
    if (!S_ISREG(st.st_mode)) {  // a device or FIFO is written in place
      if (::access(target.c_str(), W_OK) != 0)
        throw Error(option + " " + path + ": cannot write: " + std::strerror(errno));
      return;
    }
  }
  // The report goes to a temporary file beside the target and is renamed over
  // it, so the directory must take a new file; try one and remove it.
  const std::string dir = parent_of(target);
  const std::string probe = target + ".dpsosp-check-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    const int err = errno;
    throw Error(option + " " + path + ": cannot create a file in '" + dir + "': " + std::strerror(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_not_input(const std::string& out, const std::string& input, const std::string& input_option) {
  if (out.empty() || is_stdout(out) || input.empty()) return;
  std::error_code ec;
  if (std::filesystem::equivalent(out, input, ec) && !ec)
    throw Error("--out " + out + ": is the same file as " + input_option + "; refusing to overwrite an input");
}

void write_text(const std::string& path, const std::string& text, const std::string& option) {
  if (path.empty() || is_stdout(path)) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (std::fflush(stdout) != 0)
      throw Error("writing the report to stdout failed: " + std::string(std::strerror(errno)));
    return;
  }
  const std::string target = resolved(path);
  struct stat st {};
  const bool special = ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string tmp = special ? target : target + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw Error(option + " " + path + ": cannot write '" + tmp + "': " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    if (!special) ::unlink(tmp.c_str());
    throw Error(option + " " + path + ": writing failed: " + std::strerror(written ? errno : err));
  }
  if (!special && std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int rename_err = errno;
    ::unlink(tmp.c_str());
    throw Error(option + " " + path + ": cannot replace the file: " + std::strerror(rename_err));
  }
}

}  // namespace dpsosp::cli
