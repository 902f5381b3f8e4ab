// A file descriptor handed from one process to others of the same host over a Unix-domain socket
// (SCM_RIGHTS): the owner listens on an abstract socket named by its pid, the descriptor's number
// and a random nonce (no file in the file system, nothing to clean up); a peer connects and receives
// its own duplicate. Works between unrelated processes of one user without ptrace permission (which
// pidfd_getfd needs: Yama's ptrace_scope 1 and container seccomp profiles refuse it between sibling
// ranks); needs the processes to share a network namespace (the abstract names live there).
// Order for a group that exchanges descriptors: every owner listens, the names are shared (e.g.
// over MPI), every peer connects, every owner serves its connections, every peer receives: connect
// does not wait for the owner (the listen backlog holds it), so nobody waits on a rank that waits.
#pragma once
#include <cstdint>
#include <string>

namespace vgen {

class FdListener {
 public:
  // Listens for peers asking for `fd` under (this pid, fd, nonce); error() says why not.
  FdListener(int fd, uint32_t nonce);
  ~FdListener();
  FdListener(const FdListener&) = delete;
  FdListener& operator=(const FdListener&) = delete;
  const std::string& error() const { return error_; }
  // Sends the descriptor on each of `connections` connections, waiting at most timeout_ms for
  // each; false with the cause in *error.
  bool serve(int connections, int timeout_ms, std::string* error);

 private:
  int fd_, sock_ = -1;
  std::string error_;
};

// A socket connected to the listener of (pid, fd, nonce); -1 with the cause in *error.
int fd_connect(int pid, int fd, uint32_t nonce, std::string* error);
// The descriptor the listener sends on `sock` (a duplicate in this process, owned by the caller),
// waiting at most timeout_ms; -1 with the cause in *error. Closes `sock`.
int fd_receive(int sock, int timeout_ms, std::string* error);

}  // namespace vgen
