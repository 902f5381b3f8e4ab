// dist/fd_passing.h between two processes (fork): a pipe's write end handed over a Unix socket
// (SCM_RIGHTS) reaches the child as its own descriptor, and what the child writes arrives at the
// parent's read end; a listener nobody connects to, and a name nobody listens on, fail with the cause.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "dist/fd_passing.h"

using namespace vgen;

TEST(FdPassing, ChildWritesThroughTheParentsDescriptor) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const uint32_t nonce = 0x5eed1234u;
  FdListener listener(p[1], nonce);
  ASSERT_EQ(listener.error(), "");
  const int parent = int(getpid());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(p[0]);
    close(p[1]);  // the child writes only through the descriptor it receives
    std::string error;
    const int s = fd_connect(parent, p[1], nonce, &error);
    const int fd = s < 0 ? -1 : fd_receive(s, 5000, &error);
    const bool ok = fd >= 0 && write(fd, "dwdp", 4) == 4;
    _exit(ok ? 0 : 1);
  }
  std::string error;
  EXPECT_TRUE(listener.serve(1, 5000, &error)) << error;
  close(p[1]);
  char got[8] = {};
  EXPECT_EQ(read(p[0], got, sizeof(got)), 4);
  EXPECT_EQ(std::string(got, 4), "dwdp");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(p[0]);
}

TEST(FdPassing, FailuresSayWhy) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  FdListener listener(p[1], 7);
  std::string error;
  EXPECT_FALSE(listener.serve(1, 50, &error));  // nobody connects
  EXPECT_NE(error.find("0 of 1 peers connected"), std::string::npos) << error;
  error.clear();
  EXPECT_EQ(fd_connect(int(getpid()), p[1], 8, &error), -1);  // another nonce: no such listener
  EXPECT_NE(error.find("connect"), std::string::npos) << error;
  close(p[0]);
  close(p[1]);
}
