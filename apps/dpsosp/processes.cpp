// The processes of a command (processes.hpp): one, or an MPI job's ranks.
#include "processes.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <thread>
#include <vector>

#include "dpsosp/error.hpp"

#ifdef DPSOSP_MPI
#include <mpi.h>
#endif

namespace dpsosp::cli {
namespace {

int g_rank = 0, g_size = 1;
bool g_joined = false;

// Ranks mpirun (Open MPI, or a PMI launcher) says this process belongs to.
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return std::atoi(v);
  }
  return 0;
}

// One line, whatever the message holds.
void print_line(const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f')
      c = ' ';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  std::cout.flush();
  std::cerr << "dpsosp: error: " << line << std::endl;
}

std::string with_rank(const std::string& message) {
  if (g_rank == 0) return message;
  return "process " + std::to_string(g_rank) + " of " + std::to_string(g_size) + ": " + message;
}

#ifdef DPSOSP_MPI
constexpr int kTag = 21;
constexpr std::size_t kPiece = std::size_t{1} << 30;  // MPI counts are int

class MpiGroup final : public ProcessGroup {
 public:
  int rank() const override { return g_rank; }
  int size() const override { return g_size; }
  void send(int to, const void* bytes, std::size_t count) override {
    const auto* p = static_cast<const char*>(bytes);
    do {
      const std::size_t n = std::min(count, kPiece);
      MPI_Send(p, static_cast<int>(n), MPI_BYTE, to, kTag, MPI_COMM_WORLD);
      p += n;
      count -= n;
    } while (count > 0);
  }
  void receive(int from, void* bytes, std::size_t count) override {
    auto* p = static_cast<char*>(bytes);
    do {
      const std::size_t n = std::min(count, kPiece);
      MPI_Recv(p, static_cast<int>(n), MPI_BYTE, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      p += n;
      count -= n;
    } while (count > 0);
  }
  void broadcast(int root, void* bytes, std::size_t count) override {
    auto* p = static_cast<char*>(bytes);
    do {
      const std::size_t n = std::min(count, kPiece);
      MPI_Bcast(p, static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD);
      p += n;
      count -= n;
    } while (count > 0);
  }
};
#endif

}  // namespace

Processes::Processes(int& argc, char**& argv) {
  const int launched = launcher_size();
#ifdef DPSOSP_MPI
  if (launched > 0) {
    // The library calls MPI from one thread at a time (the chained sums take
    // their start on the calling thread, an OpenMP team's first).
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_joined = true;
  }
#else
  (void)argc;
  (void)argv;
  g_size = launched > 1 ? launched : 1;  // refused by check_command when above 1
#endif
}

Processes::~Processes() {
#ifdef DPSOSP_MPI
  if (g_joined) MPI_Finalize();
#endif
}

int Processes::rank() { return g_rank; }
int Processes::size() { return g_size; }

std::shared_ptr<ProcessGroup> Processes::group() {
#ifdef DPSOSP_MPI
  if (g_joined && g_size > 1) return std::make_shared<MpiGroup>();
#endif
  return nullptr;
}

void Processes::check_command(const std::string& command) {
  if (g_size <= 1) return;
  if (!g_joined)
    throw Error("started by mpirun with " + std::to_string(g_size) +
                " ranks, but this dpsosp was built without MPI "
                "(configure with -DDPSOSP_MPI=ON); each rank would run alone");
  if (command != "run") throw Error(command + ": only run is data-parallel; run " + command + " without mpirun");
}

void Processes::share_seed(std::uint64_t& seed) {
#ifdef DPSOSP_MPI
  if (g_joined && g_size > 1) MPI_Bcast(&seed, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
  (void)seed;
#endif
}

void Processes::agree(const std::function<void()>& f) {
  std::string error;
  try {
    f();
  } catch (const Error& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory";
  } catch (const std::exception& e) {
    error = e.what();
  }
#ifdef DPSOSP_MPI
  if (g_joined && g_size > 1) {
    int mine = error.empty() ? g_size : g_rank, first = g_size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == g_size) return;
    if (first == g_rank) print_line(with_rank(error));
    throw QuietExit{1};
  }
#endif
  if (!error.empty()) throw Error(error);
}

namespace {

// Whether the message is one minimize's checks agreed on (process_group.hpp:
// "process R of P: ..."), which every rank throws alike.
bool agreed_by_all(const std::string& m) {
  const std::string head = "process ";
  if (m.compare(0, head.size(), head) != 0) return false;
  std::size_t at = head.size();
  const auto digits = [&] {
    const std::size_t from = at;
    while (at < m.size() && m[at] >= '0' && m[at] <= '9') ++at;
    return at > from;
  };
  if (!digits() || m.compare(at, 4, " of ") != 0) return false;
  at += 4;
  return digits() && m.compare(at, 2, ": ") == 0;
}

}  // namespace

int Processes::fail(const std::string& message, int status, bool collective) {
  if (!g_joined || g_size <= 1) {
    print_line(message);
    return status;
  }
  if (collective || agreed_by_all(message)) {
    if (g_rank == 0) print_line(message);
    return status;
  }
#ifdef DPSOSP_MPI
  // Rank 0 first: when every rank fails alike, its line ends the job and the
  // others never print theirs.
  if (g_rank != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  print_line(with_rank(message));
  MPI_Abort(MPI_COMM_WORLD, status);
#endif
  return status;
}

}  // namespace dpsosp::cli
