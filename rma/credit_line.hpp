// Flow control towards one server: a sender may have at most M messages
// that the server has not released (each one holds a request buffer
// there), asks for a credit with every ceil(M/2)-th message, and a credit
// means every message up to the one that asked is released. The receiving
// side releases messages in any order (an intermediate server forwards to
// several targets), so it answers a credit only once everything sent before
// it is released too. No MPI here: the caller sends and receives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <set>

namespace shim::rma {

class CreditLine {
 public:
  explicit CreditLine(int credits) : credits_(std::max(credits, 1)), every_((credits_ + 1) / 2) {}

  bool full() const { return sent_ - credited_ >= credits_; }
  std::int64_t in_use() const { return sent_ - credited_; }
  bool next_wants_credit() const { return (sent_ + 1) % every_ == 0; }
  // The sequence number of the message just sent.
  std::int64_t sent() { return sent_++; }
  // The credit asked for by message `sequence` came back.
  void credited(std::int64_t sequence) { credited_ = std::max(credited_, sequence + 1); }

 private:
  int credits_;
  int every_;
  std::int64_t sent_ = 0;
  std::int64_t credited_ = 0;
};

// The receiving side's record of one sender's messages.
class ReleaseOrder {
 public:
  // A message arrived; its sequence number (arrivals are in send order).
  std::int64_t arrived(bool wants_credit) {
    if (wants_credit) wanting_.push_back(arrived_);
    return arrived_++;
  }
  // Message `sequence` released its buffer; how many credits are now due.
  int released(std::int64_t sequence) {
    ahead_.insert(sequence);
    while (!ahead_.empty() && *ahead_.begin() == prefix_) {
      ahead_.erase(ahead_.begin());
      ++prefix_;
    }
    int due = 0;
    while (!wanting_.empty() && wanting_.front() < prefix_) {
      wanting_.pop_front();
      ++due;
    }
    return due;
  }

 private:
  std::int64_t arrived_ = 0;
  std::int64_t prefix_ = 0;  // messages [0, prefix_) all released
  std::set<std::int64_t> ahead_;
  std::deque<std::int64_t> wanting_;
};

}  // namespace shim::rma
