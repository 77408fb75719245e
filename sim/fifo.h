// A growable ring buffer used for waiting lines: push_back/pop_front in O(1), no allocation
// once it has grown to the largest queue seen. std::deque allocates in blocks and is slower.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace vqsim::sim {

template <typename T>
class Fifo {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  void push_back(const T& value) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = value;
    ++size_;
  }
  T pop_front() noexcept {
    T value = std::move(buf_[head_]);
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return value;
  }
  const T& front() const noexcept { return buf_[head_]; }

 private:
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 16 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
    buf_ = std::move(bigger);
    head_ = 0;
  }
  std::vector<T> buf_;  // capacity is always a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace vqsim::sim
