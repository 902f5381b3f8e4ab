// MPI bootstrap (mpirun or srun), failure handling and construction of this rank's Mesh.
//
// How a dying rank ends the whole job quickly (DESIGN "a failing rank ends the whole job"):
// - Errors surface as vgen::Error. The CLI catches them at the top and calls dist_abort(code),
//   which flushes stdout/stderr and calls MPI_Abort(MPI_COMM_WORLD, code) when more than one rank
//   runs: the launcher (Open MPI's mpirun/prterun, or Slurm's srun through PMIx) then kills every
//   rank of the job, and mpirun exits with `code`.
// - An exception that escapes everything reaches std::terminate; dist_init installs a terminate
//   handler that prints it and calls dist_abort as well.
// - A rank that crashes (signal) or exits non-zero without MPI_Finalize is noticed by mpirun,
//   which aborts the remaining ranks (Open MPI's default; under srun use --kill-on-bad-exit=1,
//   which Slurm sites usually set for MPI jobs).
// - Before GPU collectives, which cannot be interrupted, the code agrees on failures with
//   any_rank_failed on a host communicator, so no rank waits inside a collective for a peer that
//   has already given up.
// MPI errors are returned (MPI_ERRORS_RETURN) and thrown as vgen::Error(kDistributed), so they take
// the same path.
#include "dist/bootstrap.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "core/error.h"
#include "core/wait_marker.h"
#include "dist/mesh_axes.h"
#include "dist/mpi_communicator.h"

namespace vgen {
namespace {

bool mpi_live() {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  return inited && !finalized;
}

void on_terminate() {
  int code = int(ExitCode::kInternal);
  if (auto ep = std::current_exception()) {
    try {
      std::rethrow_exception(ep);
    } catch (const Error& e) {
      code = int(e.code());
      std::fprintf(stderr, "vgen: fatal: %s\n", e.what());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vgen: fatal: [rank %d on %s] %s\n", process_rank(), process_host().c_str(),
                   e.what());
    } catch (...) {
      std::fprintf(stderr, "vgen: fatal: [rank %d on %s] unknown exception\n", process_rank(),
                   process_host().c_str());
    }
  } else {
    std::fprintf(stderr, "vgen: fatal: [rank %d on %s] std::terminate called\n", process_rank(),
                 process_host().c_str());
  }
  dist_abort(code);
}

}  // namespace

DistEnv dist_init(int* argc, char*** argv) {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  VGEN_CHECK(!finalized, ExitCode::kDistributed, "dist_init called after dist_finalize (MPI cannot restart)");
  int provided = 0;
  if (!inited) {
    // A process started without a launcher is an MPI singleton. Open MPI 4 then forks a daemon
    // (orted) for dynamic process management, which vgen never uses; that fork and its handshake
    // can fail on a loaded host ("Unable to start a daemon on the local node", seen under a
    // parallel ctest). Isolated singletons start no daemon. Only the singleton component
    // reads the variable (mpirun and srun starts ignore it), other MPIs ignore OMPI_MCA_*, and a
    // value set by the user wins.
    setenv("OMPI_MCA_ess_singleton_isolated", "1", /*overwrite=*/0);
    // MPI_THREAD_MULTIPLE lets the watchdog thread read other nodes' state and call MPI_Abort
    // (dist/watchdog.h); vgen runs with MPI_THREAD_FUNNELED too, the watchdog then uses less MPI.
    // VGEN_MPI_THREAD_LEVEL=funneled asks for that level only (an MPI whose MULTIPLE is slow or broken).
    const char* level = std::getenv("VGEN_MPI_THREAD_LEVEL");
    const bool funneled = level && std::string(level) == "funneled";
    VGEN_MPI_CHECK(MPI_Init_thread(argc, argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided));
    std::set_terminate(on_terminate);
  } else {
    VGEN_MPI_CHECK(MPI_Query_thread(&provided));
  }
  VGEN_CHECK(provided >= MPI_THREAD_FUNNELED, ExitCode::kDistributed,
             "MPI provides thread level {}, vgen needs MPI_THREAD_FUNNELED ({})", provided,
             int(MPI_THREAD_FUNNELED));
  VGEN_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

  DistEnv env;
  VGEN_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &env.world_rank));
  VGEN_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &env.world_size));
  // Ranks sharing memory = ranks on this node; right under mpirun and srun alike, with no
  // launcher-specific environment variables.
  MPI_Comm node;
  VGEN_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, env.world_rank, MPI_INFO_NULL, &node));
  VGEN_MPI_CHECK(MPI_Comm_rank(node, &env.local_rank));
  VGEN_MPI_CHECK(MPI_Comm_size(node, &env.local_size));
  VGEN_MPI_CHECK(MPI_Comm_free(&node));
  char host[MPI_MAX_PROCESSOR_NAME + 1] = {0};
  int len = 0;
  VGEN_MPI_CHECK(MPI_Get_processor_name(host, &len));
  env.host.assign(host, size_t(len));
  set_process_identity(env.world_rank, env.host);
  wait_slot_attach(nullptr);  // this (the main) thread publishes the wait markers
  return env;
}

void dist_finalize() {
  if (mpi_live()) MPI_Finalize();
}

[[noreturn]] void dist_abort(int exit_code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  if (mpi_live()) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
  }
  std::_Exit(exit_code);
}

bool dist_initialized() { return mpi_live(); }

namespace {

// One group: colour = the other coordinates, key = the group's own coordinate (group rank ==
// coordinate). Every rank calls this for every group in the same order; a group of size 1
// (same on all ranks, as the shape is) needs no MPI call.
std::shared_ptr<Communicator> split_group(int group_size, int colour, int key, const char* name) {
  if (group_size == 1) return make_self_communicator();
  MPI_Comm c;
  {
    WaitScope wait(WaitOp::kCommCreate, WaitBackend::kMpi, name);
    VGEN_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, colour, key, &c));
  }
  auto comm = std::make_shared<MpiCommunicator>(c, name);
  VGEN_ASSERT(comm->rank() == key && comm->size() == group_size,
              "group '{}': rank {} of {}, expected rank {} of {}", name, comm->rank(), comm->size(), key,
              group_size);
  return comm;
}

}  // namespace

Mesh make_mesh(const ParallelConfig& pc, const DistEnv& env) {
  validate_mesh(pc, env.world_size, 0);
  Mesh mesh;
  mesh.shape = MeshShape::from(pc);
  mesh.world_rank = env.world_rank;
  mesh.coord = mesh_coord_of(mesh.shape, env.world_rank);
  const MeshShape& s = mesh.shape;
  const MeshCoord& c = mesh.coord;

  if (env.world_size > 1) {
    VGEN_CHECK(mpi_live(), ExitCode::kDistributed, "make_mesh for {} ranks before dist_init", env.world_size);
    int mpi_size = 0;
    VGEN_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &mpi_size));
    VGEN_CHECK(mpi_size == env.world_size, ExitCode::kDistributed,
               "make_mesh: DistEnv says {} ranks but MPI_COMM_WORLD has {}", env.world_size, mpi_size);
    mesh.world = make_mpi_communicator_dup(MPI_COMM_WORLD, "world");
  } else {
    mesh.world = make_self_communicator();
  }

  const int seq_rank = mesh.seq_rank();
  const MeshAxes axes = MeshAxes::of(s);
  auto group = [&](std::initializer_list<MeshAxis> spanned, const char* name) {
    const MeshSplit g = axes.split(env.world_rank, spanned);
    return split_group(g.size, g.colour, g.key, name);
  };
  using A = MeshAxis;
  mesh.replica = group({A::kCfg, A::kRow, A::kCol, A::kUlysses}, "replica");
  mesh.dp = group({A::kDp}, "dp");
  mesh.cfg = group({A::kCfg}, "cfg");
  mesh.cp = group({A::kRow, A::kCol}, "cp");
  mesh.row = group({A::kCol}, "row");  // one row of the attn2d tile: its columns
  mesh.col = group({A::kRow}, "col");  // one column of the tile: its rows
  mesh.ulysses = group({A::kUlysses}, "ulysses");
  mesh.seq = group({A::kRow, A::kCol, A::kUlysses}, "seq");

  // VAE group: ranks 0..P-1 of each replica's cfg-0 group (key = seq_rank = VAE rank).
  const bool vae_member = c.cfg == 0 && seq_rank < s.vae;
  if (s.vae == 1) {
    if (vae_member) mesh.vae = make_self_communicator();
  } else {
    MPI_Comm v;
    {
      WaitScope wait(WaitOp::kCommCreate, WaitBackend::kMpi, "vae");
      VGEN_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, vae_member ? c.dp : MPI_UNDEFINED, seq_rank, &v));
    }
    if (vae_member) {
      mesh.vae = std::make_shared<MpiCommunicator>(v, "vae");
      VGEN_ASSERT(mesh.vae->rank() == seq_rank && mesh.vae->size() == s.vae, "vae group: rank {} of {}",
                  mesh.vae->rank(), mesh.vae->size());
    }
  }
  return mesh;
}

WorldVerdict agree_on_failure(int local_code) {
  if (!mpi_live()) return local_code ? WorldVerdict{local_code, 0} : WorldVerdict{};
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // The lowest failing rank: MINLOC over (rank if failed else size, rank).
  struct {
    int key, rank;
  } mine{local_code ? process_rank() : size, process_rank()}, first{};
  VGEN_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS,
             ExitCode::kDistributed, "agreeing on the ranks' checks failed (MPI_Allreduce)");
  if (first.key >= size) return {};
  int code = local_code;
  VGEN_CHECK(MPI_Bcast(&code, 1, MPI_INT, first.key, MPI_COMM_WORLD) == MPI_SUCCESS, ExitCode::kDistributed,
             "agreeing on the ranks' checks failed (MPI_Bcast)");
  return {code, first.key};
}

std::vector<size_t> agree_on_item_errors(std::vector<std::string>& errors) {
  if (!mpi_live()) return {};
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return {};
  auto check = [](int rc, const char* what) {
    VGEN_CHECK(rc == MPI_SUCCESS, ExitCode::kDistributed, "agreeing on the prompt lines failed ({})", what);
  };
  const int n = int(errors.size());
  int mine_n[2] = {n, -n}, range[2] = {};
  check(MPI_Allreduce(mine_n, range, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  VGEN_CHECK(range[0] == -range[1], ExitCode::kInput, "the ranks read prompt files of {} to {} prompts: every rank "
             "must read the same file", range[0], -range[1]);
  // The lowest rank that failed each item (size: none).
  std::vector<int> mine(static_cast<size_t>(n)), first(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) mine[size_t(i)] = errors[size_t(i)].empty() ? size : process_rank();
  check(MPI_Allreduce(mine.data(), first.data(), n, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  std::vector<size_t> taken;
  for (int i = 0; i < n; ++i) {
    const int root = first[size_t(i)];
    if (root >= size) continue;
    std::string& text = errors[size_t(i)];
    const bool had = !text.empty();
    int len = int(text.size());
    check(MPI_Bcast(&len, 1, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
    text.resize(size_t(len));
    check(MPI_Bcast(text.data(), len, MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
    if (!had) taken.push_back(size_t(i));
  }
  return taken;
}

bool any_rank_failed(Communicator& comm, bool local_failed) {
  Tensor flag = Tensor::empty({1}, DType::kI64);
  flag.data<int64_t>()[0] = local_failed ? 1 : 0;
  comm.all_reduce_max(flag);
  return flag.data<int64_t>()[0] != 0;
}

}  // namespace vgen
