// Precompiled for the unit tests: Catch2 is one 17,000-line header that every
// test file includes, and parsing it once instead of 19 times saves about ten
// seconds of each clean build of the suite. The tests still include it
// themselves; nothing may depend on this header being forced in.
#include <catch2/catch.hpp>
