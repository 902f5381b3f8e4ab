// dist/device_share.h on one GPU in one process: a VMM buffer exported as a POSIX file descriptor,
// imported back from a duplicate of it and mapped a second time reads the bytes written through the
// first mapping; a fabric-handle buffer the same where the
// GPU exports them and an IMEX channel is present; the IPC buffer (cudaMalloc) exports a handle. The
// two-process paths run in the DWDP parity tests (dwdp_np2_vmm*).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "dist/device_share.h"

using namespace vgen;

namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t((i * 131 + 7) % 251);
  return p;
}

// Writes a pattern through `buf`, maps its `kind` handle back and reads it there.
void expect_round_trip(DeviceShareBuffer& buf, ShareKind kind) {
  const std::vector<uint8_t> want = pattern(buf.bytes());
  ASSERT_EQ(cudaMemcpy(buf.data(), want.data(), want.size(), cudaMemcpyHostToDevice), cudaSuccess);
  const DeviceShareHandle h = buf.export_handle(kind);
  EXPECT_EQ(h.kind, int32_t(kind));
  EXPECT_GE(h.bytes, buf.bytes());
  std::string error;
  const int fd = kind == ShareKind::kPosixFd ? dup(h.fd) : -1;  // as fd_receive would hand it over
  std::unique_ptr<DeviceSharePeer> peer = DeviceSharePeer::open(h, &error, fd);
  ASSERT_TRUE(peer) << error;
  buf.close_exported();
  ASSERT_NE(peer->data(), buf.data());  // a second mapping of the same memory
  std::vector<uint8_t> got(want.size());
  ASSERT_EQ(cudaMemcpy(got.data(), peer->data(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, want);
}

}  // namespace

TEST(DeviceShareGpu, PosixFdBufferMapsTwice) {
  VGEN_REQUIRE_GPU();
  if (!local_share_facts().posix_fd) GTEST_SKIP() << "the GPU does not export POSIX file descriptors";
  DeviceShareBuffer buf((size_t(3) << 20) + 123, kSharePosixFd);  // not a multiple of the granularity
  ASSERT_EQ(buf.types(), unsigned(kSharePosixFd));
  expect_round_trip(buf, ShareKind::kPosixFd);
}

TEST(DeviceShareGpu, FabricBufferMapsTwice) {
  VGEN_REQUIRE_GPU();
  if (!local_share_facts().fabric_handle) GTEST_SKIP() << "the GPU does not export fabric handles";
  DeviceShareBuffer buf(size_t(1) << 20, kShareFabric);
  if (buf.types() != unsigned(kShareFabric)) GTEST_SKIP() << "no fabric allocation (no IMEX channel)";
  expect_round_trip(buf, ShareKind::kFabric);
}

TEST(DeviceShareGpu, IpcBufferExportsAHandle) {
  VGEN_REQUIRE_GPU();
  DeviceShareBuffer buf(4096, kShareIpc);
  ASSERT_EQ(buf.types(), unsigned(kShareIpc));
  ASSERT_NE(buf.data(), nullptr);
  const DeviceShareHandle h = buf.export_handle(ShareKind::kIpc);
  EXPECT_EQ(h.kind, int32_t(ShareKind::kIpc));
  DeviceShareBuffer empty(0, kSharePosixFd);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.export_handle(ShareKind::kPosixFd).kind, -1);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(DeviceShareGpu)
#endif
