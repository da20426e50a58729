// The checker every MPI test program reports through. A check is one asserted
// condition or one element compared with the value the test computed for it
// in plain C++. Failures are printed with the program and the rank, and the
// text the caller gives names the case and the element; finish() agrees on
// the verdict over MPI_COMM_WORLD with PMPI collectives, so that every rank
// exits with the same status.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>

namespace shim::test {

template <typename T>
struct is_complex : std::false_type {};
template <typename R>
struct is_complex<std::complex<R>> : std::true_type {};

// A value as a failure report shows it: floating point with every digit it
// has, characters and other integers as numbers, complex numbers as pairs.
template <typename T>
std::string show(const T& v) {
  if constexpr (is_complex<T>::value) {
    return "(" + show(v.real()) + "," + show(v.imag()) + "i)";
  } else if constexpr (std::is_floating_point_v<T>) {
    char text[64];
    std::snprintf(text, sizeof text, "%.21Lg", static_cast<long double>(v));
    return text;
  } else if constexpr (std::is_signed_v<T>) {
    return std::to_string(static_cast<long long>(v));
  } else {
    return std::to_string(static_cast<unsigned long long>(v));
  }
}

// One element compared with its expected value. `excused`: wrong, but by a
// known defect of the library under test, which the caller reports itself;
// not a check.
enum class Verdict { same, differs, excused };

// The error class of MPI return code `rc` (MPI_SUCCESS for success).
int error_class(int rc);

class Checker {
 public:
  explicit Checker(std::string program);
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  void pass(long n = 1) { checks_ += n; }
  void fail(const std::string& what);
  void expect(bool ok, const std::string& what) { ok ? pass() : fail(what); }
  // An MPI return code: MPI_SUCCESS passes, any other fails with MPI's text.
  void expect_success(int rc, const std::string& where);
  // A mistake in the test program, not in the library: ends the job.
  [[noreturn]] void test_bug(const std::string& what) const;

  // Element by element: compare(k) judges element k of n (a bool, same or
  // not, or a Verdict), mismatch(k) says which element it is and how it
  // differs. The first few mismatches are printed, then how many in all.
  // Returns how many differ.
  template <typename Compare, typename Mismatch>
  long expect_elements(std::size_t n, Compare compare, Mismatch mismatch, const std::string& where) {
    long differ = 0;
    for (std::size_t k = 0; k < n; ++k) {
      Verdict verdict;
      if constexpr (std::is_same_v<decltype(compare(k)), bool>) {
        verdict = compare(k) ? Verdict::same : Verdict::differs;
      } else {
        verdict = compare(k);
      }
      if (verdict == Verdict::same) {
        pass();
      } else if (verdict == Verdict::differs && ++differ <= kShownPerComparison) {
        fail(where + ": " + mismatch(k));
      } else if (verdict == Verdict::differs) {
        ++checks_;
        ++failures_;
      }
    }
    if (differ > kShownPerComparison)
      note(where + ": " + std::to_string(differ) + " of " + std::to_string(n) + " elements differ in all");
    return differ;
  }

  // Collective over MPI_COMM_WORLD: prints `summary` (if any) and the totals
  // on rank 0, and returns the exit status for main(). A program that
  // checked nothing proves nothing, and fails.
  int finish(const std::string& summary = {});

 private:
  static constexpr long kShownPerComparison = 4;
  static constexpr long kPrinted = 12;
  static constexpr long kPrintedAtMost = 80;
  // Prints a failure already counted: the first few, then the first two of
  // every kind not seen yet (the text up to its first ": "), so that one
  // failure repeated many times cannot hide another.
  void note(const std::string& what);

  std::string program_;
  int rank_ = 0;
  long checks_ = 0;
  long failures_ = 0;
  long printed_ = 0;
  std::map<std::string, int> kinds_;
};

}  // namespace shim::test
