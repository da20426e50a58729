// A policy as a table of rules tried in order: the first that matches
// decides. Every rule carries its condition and its reason as text, so a
// decision explains itself (SHIM_VERBOSE) and the whole table can be printed
// (shim-info). The alltoall, broadcast and accumulate policies are tables of
// this one kind.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace shim {

template <typename Facts, typename Outcome>
struct Rule {
  std::string_view name;
  std::string_view condition;  // `matches`, as a reader would write it
  Outcome outcome;
  std::string_view why;
  bool (*matches)(const Facts&);
  // The numbers behind the condition for one decision, e.g. "ppn x block =
  // 4 KiB <= 16 KiB"; null where the condition needs none.
  std::string (*evidence)(const Facts&) = nullptr;
};

template <typename Facts, typename Outcome>
class RuleTable {
 public:
  using Entry = Rule<Facts, Outcome>;

  // The last rule must match everything, so that every input is decided.
  constexpr explicit RuleTable(std::span<const Entry> rules) : rules_(rules) {}

  // Runs on every call of a collective: no allocation, no formatting.
  const Entry& choose(const Facts& facts) const {
    for (const Entry& rule : rules_) {
      if (rule.matches(facts)) return rule;
    }
    return rules_.back();
  }

  std::span<const Entry> rules() const { return rules_; }

  // The rule's reason, with this decision's numbers.
  static std::string explain(const Entry& rule, const Facts& facts) {
    std::string text(rule.why);
    if (rule.evidence != nullptr) text += " [" + rule.evidence(facts) + "]";
    return text;
  }

 private:
  std::span<const Entry> rules_;
};

}  // namespace shim
