// The one-rank communicator: collectives copy, point-to-point to self pairs through a queue.
#include <gtest/gtest.h>

#include "core/error.h"
#include "dist/communicator.h"

using namespace vgen;

namespace {

Tensor iota(int64_t n, float start = 0.f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + float(i);
  return Tensor::from_vector(v, {n});
}

void expect_equal(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.numel(), b.numel());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.f32()[i], b.f32()[i]) << "at " << i;
}

}  // namespace

TEST(SelfCommunicator, CollectivesCopy) {
  auto comm = make_self_communicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  Tensor a = iota(7, 1.f);
  Tensor r = Tensor::zeros({7}, DType::kF32);
  comm->all_to_all(a, r);
  expect_equal(r, a);
  r.fill_zero();
  comm->all_gather(a, r);
  expect_equal(r, a);
  r.fill_zero();
  comm->all_gather_v(a, r, {7});
  expect_equal(r, a);
  r.fill_zero();
  comm->reduce_scatter(a, r);
  expect_equal(r, a);
  Tensor b = a.clone();
  comm->all_reduce_sum(b);
  expect_equal(b, a);
  comm->all_reduce_max(b);
  expect_equal(b, a);
  comm->broadcast(b, 0);
  expect_equal(b, a);
  comm->barrier();
  Tensor i64 = Tensor::zeros({3}, DType::kI64);
  EXPECT_NO_THROW(comm->all_reduce_sum(i64));
}

TEST(SelfCommunicator, RejectsMismatches) {
  auto comm = make_self_communicator();
  Tensor a = iota(7);
  Tensor wrong = Tensor::zeros({6}, DType::kF32);
  EXPECT_THROW(comm->all_to_all(a, wrong), Error);
  EXPECT_THROW(comm->all_gather_v(a, wrong, {6}), Error);
  Tensor r = Tensor::zeros({7}, DType::kF32);
  EXPECT_THROW(comm->all_gather_v(a, r, {7, 0}), Error);
  EXPECT_THROW(comm->broadcast(a, 1), Error);
  EXPECT_THROW(comm->sendrecv(a, 1, r, 0), Error);
  Tensor u8 = Tensor::zeros({7}, DType::kU8);
  EXPECT_THROW(comm->all_reduce_sum(u8), Error);
}

TEST(SelfCommunicator, SendRecvThroughQueue) {
  auto comm = make_self_communicator();
  Tensor a = iota(5, 10.f), b = iota(5, 20.f);
  comm->send(a, 0, 1);
  comm->send(b, 0, 2);
  a.fill_zero();  // the queued message is a copy
  Tensor r = Tensor::zeros({5}, DType::kF32);
  comm->recv(r, 0, 2);  // tags match out of order
  expect_equal(r, iota(5, 20.f));
  comm->recv(r, 0, 1);
  expect_equal(r, iota(5, 10.f));
  EXPECT_THROW(comm->recv(r, 0, 1), Error);  // nothing queued: would deadlock
}

TEST(SelfCommunicator, SendRecvToSelfCopies) {
  auto comm = make_self_communicator();
  Tensor a = iota(9, 3.f);
  Tensor r = Tensor::zeros({9}, DType::kF32);
  comm->sendrecv(a, 0, r, 0, 4);
  expect_equal(r, a);
  Tensor r2 = Tensor::zeros({9}, DType::kF32);
  auto p = comm->start_sendrecv(a, 0, r2, 0);
  p->wait();
  expect_equal(r2, a);
}
